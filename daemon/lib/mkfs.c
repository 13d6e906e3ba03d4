// SPDX-License-Identifier: GPL-2.0-or-later
/* Making (and unmaking) a famfs. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uuid/uuid.h>

#include "internal.h"

/* The mount point of @path if a mounted file system names it as source. */
static bool is_mounted(const char *path, char *where, size_t len)
{
	char real[PATH_MAX], line[8192], src[PATH_MAX], mnt[PATH_MAX];
	bool found = false;
	FILE *f;

	if (!realpath(path, real))
		return false;
	f = fopen("/proc/self/mounts", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char rsrc[PATH_MAX];

		if (sscanf(line, "%4095s %4095s", src, mnt) != 2)
			continue;
		if (!strcmp(src, real) ||
		    (realpath(src, rsrc) && !strcmp(rsrc, real))) {
			snprintf(where, len, "%s", mnt);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* mkfs and kill work on the raw device, never through a mount. */
static int open_raw_device(const char *path, struct famfs_dev *dev)
{
	char where[PATH_MAX];
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return famfs_fail(EISDIR, "%s is a directory; famfs needs a dax device or a regular file",
				  path);
	if (is_mounted(path, where, sizeof(where)))
		return famfs_fail(EBUSY, "%s is mounted on %s; unmount it first",
				  path, where);
	return famfs_dev_open(path, FAMFS_OPEN_RW, dev);
}

static int check_device(const struct famfs_dev *dev, uint64_t log_len)
{
	uint64_t need = FAMFS_LOG_OFFSET + log_len + FAMFS_ALLOC_UNIT;

	if (dev->size < need)
		return famfs_fail(ENOSPC, "%s is too small: %llu bytes; a famfs with a %llu MiB log needs at least %llu bytes (%llu MiB)",
				  dev->path, (unsigned long long)dev->size,
				  (unsigned long long)(log_len >> 20),
				  (unsigned long long)need,
				  (unsigned long long)(need >> 20));
	if (dev->size % FAMFS_ALLOC_UNIT)
		return famfs_fail(EINVAL, "%s is %llu bytes, not a multiple of the 2 MiB allocation unit",
				  dev->path, (unsigned long long)dev->size);
	return 0;
}

int famfs_log_len_check(uint64_t log_len)
{
	if (log_len < FAMFS_LOG_MIN_LEN || !famfs_is_pow2(log_len))
		return famfs_fail(EINVAL, "log size %llu is invalid: it must be a power of two of at least 8 MiB",
				  (unsigned long long)log_len);
	return 0;
}

int famfs_mkfs(const char *path, const struct famfs_mkfs_opts *opts)
{
	uint64_t log_len = opts->log_len ? opts->log_len : FAMFS_LOG_MIN_LEN;
	struct famfs_omf_superblock *sb;
	struct famfs_dev dev;
	uint8_t me[FAMFS_UUID_LEN];
	int rc;

	rc = famfs_log_len_check(log_len);
	if (rc)
		return rc;
	rc = open_raw_device(path, &dev);
	if (rc)
		return rc;
	rc = check_device(&dev, log_len);
	if (rc)
		goto out;

	sb = dev.sb;
	/* Anything with our magic is someone's famfs, even if damaged. */
	if (sb->magic == FAMFS_SUPER_MAGIC && !opts->force) {
		enum famfs_role role = famfs_role(&dev);

		rc = famfs_fail(EEXIST, "%s already holds a famfs%s; use -f to overwrite it",
				path,
				role == FAMFS_ROLE_CLIENT ? " owned by another host" :
				role == FAMFS_ROLE_NOSUPER ? " (damaged)" : "");
		goto out;
	}
	rc = famfs_system_uuid(me, true);
	if (rc)
		goto out;

	/* Kill the old superblock first: never a valid one over a half-made log. */
	sb->magic = 0;
	famfs_dev_flush(&dev, &sb->magic, sizeof(sb->magic));

	dev.log = (struct famfs_omf_log *)(dev.base + FAMFS_LOG_OFFSET);
	dev.log_len = log_len;
	memset(dev.log, 0, log_len);
	famfs_log_init(dev.log, log_len);
	famfs_dev_flush(&dev, dev.log, log_len);

	memset(sb, 0, sizeof(*sb));
	sb->version = FAMFS_SB_VERSION;
	sb->log_offset = FAMFS_LOG_OFFSET;
	sb->log_len = log_len;
	sb->alloc_unit = FAMFS_ALLOC_UNIT;
	sb->omf_major = FAMFS_OMF_MAJOR;
	sb->omf_minor = FAMFS_OMF_MINOR;
	uuid_generate(sb->fs_uuid);
	uuid_generate(sb->dev_uuid);
	memcpy(sb->system_uuid, me, FAMFS_UUID_LEN);
	sb->flags = FAMFS_SB_PRIMARY;
	sb->daxdev.size = dev.size;
	memcpy(sb->daxdev.uuid, sb->dev_uuid, FAMFS_UUID_LEN);
	strncpy(sb->daxdev.name, path, sizeof(sb->daxdev.name) - 1);
	sb->magic = FAMFS_SUPER_MAGIC;
	sb->crc = famfs_sb_crc(sb);
	famfs_dev_flush(&dev, sb, sizeof(*sb));
out:
	famfs_dev_close(&dev);
	return rc;
}

int famfs_kill_super(const char *path)
{
	struct famfs_dev dev;
	int rc;

	rc = open_raw_device(path, &dev);
	if (rc)
		return rc;
	if (dev.sb->magic != FAMFS_SUPER_MAGIC) {
		rc = famfs_fail(ENOENT, "%s holds no famfs superblock", path);
	} else {
		dev.sb->magic = 0;
		famfs_dev_flush(&dev, &dev.sb->magic, sizeof(dev.sb->magic));
	}
	famfs_dev_close(&dev);
	return rc;
}
