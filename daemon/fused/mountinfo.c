// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading /proc/self/mountinfo for famfs mounts of ours (fuse.famfs,
 * famfs_fuse; root's: see libfamfs's famfs_mounts_each()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "libfamfs.h"

#include "mountinfo.h"

static bool at_fn(const struct famfs_mount_ent *m, void *arg)
{
	return m->famfs && !strcmp(m->dir, arg);
}

bool famfs_mount_at(const char *path)
{
	return famfs_mounts_each(at_fn, (void *)path);
}

bool famfs_mount_dead(const char *path)
{
	struct statfs sfs;

	return famfs_mount_at(path) && statfs(path, &sfs) < 0 &&
	       errno == ENOTCONN;
}

bool famfs_mount_of(const char *dev, char *where, size_t len, bool *rw)
{
	struct famfs_dev_id id;
	struct stat st;

	where[0] = '\0';
	*rw = false;
	if (stat(dev, &st) < 0)
		return false;
	famfs_dev_id_of(&st, &id);
	return famfs_id_mounted(&id, true, where, len, rw);
}

/* Each mount on @path, bottom first: @fn(devno, arg). */
static void each_mount_on(const char *path,
			  void (*fn)(const char *devno, void *arg), void *arg)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char devno[64], mnt[4096];

		if (sscanf(line, "%*s %*s %63s %*s %4095s", devno, mnt) != 2)
			continue;
		famfs_mount_unescape(mnt);
		if (!strcmp(mnt, path))
			fn(devno, arg);
	}
	free(line);
	fclose(f);
}

struct devno_out {
	char *out;
	size_t len;
	const char *want;
	bool hit;
};

static void keep_devno(const char *devno, void *arg)
{
	struct devno_out *o = arg;

	snprintf(o->out, o->len, "%s", devno);
	o->hit = true;
}

bool famfs_mount_devno(const char *path, char *out, size_t len)
{
	struct devno_out o = { .out = out, .len = len };

	/* The last match is the top of any stack of mounts on @path. */
	each_mount_on(path, keep_devno, &o);
	return o.hit;
}

static void match_devno(const char *devno, void *arg)
{
	struct devno_out *o = arg;

	o->hit = o->hit || !strcmp(devno, o->want);
}

bool famfs_mount_with_devno(const char *path, const char *devno)
{
	struct devno_out o = { .want = devno };

	each_mount_on(path, match_devno, &o);
	return o.hit;
}
