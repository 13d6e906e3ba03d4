// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading /proc/self/mountinfo for famfs mounts (fuse.famfs, famfs_fuse). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

#include "mountinfo.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] &&
		    s[3]) {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

static bool is_famfs_type(const char *t)
{
	return !strcmp(t, "fuse.famfs") || !strncmp(t, "famfs_fuse", 10);
}

/* Call @fn on each famfs mount until it returns true. */
static bool each_famfs(bool (*fn)(const char *mnt, const char *src, bool rw,
				  void *arg),
		       void *arg)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t cap = 0;
	bool hit = false;

	if (!f)
		return false;
	while (!hit && getline(&line, &cap, f) > 0) {
		char mnt[4096], opts[1024], type[256], src[4096];
		char *sep = strstr(line, " - ");

		if (!sep ||
		    sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mnt, opts) != 2 ||
		    sscanf(sep + 3, "%255s %4095s", type, src) != 2)
			continue;
		if (!is_famfs_type(type))
			continue;
		unescape(mnt);
		unescape(src);
		hit = fn(mnt, src, strncmp(opts, "ro", 2) != 0, arg);
	}
	free(line);
	fclose(f);
	return hit;
}

static bool at_fn(const char *mnt, const char *src, bool rw, void *arg)
{
	(void)src;
	(void)rw;
	return !strcmp(mnt, arg);
}

bool famfs_mount_at(const char *path)
{
	return each_famfs(at_fn, (void *)path);
}

bool famfs_mount_dead(const char *path)
{
	struct statfs sfs;

	return famfs_mount_at(path) && statfs(path, &sfs) < 0 &&
	       errno == ENOTCONN;
}

struct of_arg {
	const char *dev;
	char *where;
	size_t len;
	bool *rw;
	bool found_rw;
};

static bool of_fn(const char *mnt, const char *src, bool rw, void *arg)
{
	struct of_arg *a = arg;

	if (strcmp(src, a->dev))
		return false;
	/* A read-write mount is the one that matters: keep looking for it. */
	if (!a->where[0] || rw)
		snprintf(a->where, a->len, "%s", mnt);
	if (rw)
		a->found_rw = true;
	return rw;
}

bool famfs_mount_of(const char *dev, char *where, size_t len, bool *rw)
{
	struct of_arg a = { dev, where, len, rw, false };

	where[0] = '\0';
	each_famfs(of_fn, &a);
	*rw = a.found_rw;
	return where[0] != '\0';
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
		unescape(mnt);
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
