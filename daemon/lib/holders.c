// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which mount holds an added device that the kernel's driver hides. On 7.3
 * fsdev_dax serves no mapping of the node, so a device a mount moved there
 * cannot be read again to see whose it is; and moving it back to
 * device_dax would pull it from under that mount. A daemon that moves one
 * there records it: /run/famfs/members/c<major>:<minor> holds the file
 * system's uuid, the device's and the mount point. The record is live
 * while that mount point is a famfs mount; a stale one (the mount is
 * gone) frees the device for whoever looks next.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "internal.h"

#define HOLDERS_PARENT "/run/famfs"
#define HOLDERS HOLDERS_PARENT "/members"

static int record_path(const char *dev, char *out, size_t len)
{
	struct stat st;

	if (stat(dev, &st) < 0 || !S_ISCHR(st.st_mode))
		return -ENODEV;
	snprintf(out, len, "%s/c%u:%u", HOLDERS, major(st.st_rdev),
		 minor(st.st_rdev));
	return 0;
}

int famfs_member_hold(const char *dev, const uint8_t fs_uuid[FAMFS_UUID_LEN],
		      const uint8_t dev_uuid[FAMFS_UUID_LEN],
		      const char *mountpoint)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], fs[37], du[37];
	FILE *f;
	int fd;

	if (!mountpoint || record_path(dev, path, sizeof(path)))
		return 0; /* nothing to hold for */
	if ((mkdir(HOLDERS_PARENT, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(HOLDERS, 0700) < 0 && errno != EEXIST))
		return famfs_fail(errno, "cannot make %s: %s", HOLDERS,
				  strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return famfs_fail(errno, "cannot write %s: %s", tmp,
				  strerror(errno));
	}
	famfs_uuid_str(fs_uuid, fs);
	famfs_uuid_str(dev_uuid, du);
	fprintf(f, "%s %s %s\n", fs, du, mountpoint);
	if (fclose(f) || rename(tmp, path) < 0) {
		unlink(tmp);
		return famfs_fail(errno, "cannot write %s: %s", path,
				  strerror(errno));
	}
	return 0;
}

struct live {
	const char *dir;
	bool found;
};

static bool is_famfs_mount(const struct famfs_mount_ent *m, void *arg)
{
	struct live *l = arg;

	if (m->famfs && !strcmp(m->dir, l->dir))
		l->found = true;
	return l->found;
}

bool famfs_member_holder(const char *dev, uint8_t fs_uuid[FAMFS_UUID_LEN],
			 uint8_t dev_uuid[FAMFS_UUID_LEN])
{
	char path[PATH_MAX], line[PATH_MAX + 96], dir[PATH_MAX];
	char fs[40], du[40];
	struct live l = { .dir = dir };
	struct stat st;
	FILE *f;

	if (record_path(dev, path, sizeof(path)))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	/* Root's alone, as the directory is: anything else is no record. */
	if (fstat(fileno(f), &st) < 0 || st.st_uid != 0 ||
	    (st.st_mode & 077) || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "%39s %39s %4095[^\n]", fs, du, dir) != 3 ||
	    uuid_parse(fs, fs_uuid) || uuid_parse(du, dev_uuid)) {
		fclose(f);
		return false;
	}
	fclose(f);
	famfs_mounts_each(is_famfs_mount, &l);
	return l.found;
}
