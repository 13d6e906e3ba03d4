// SPDX-License-Identifier: GPL-2.0-or-later
/* Making (and unmaking) a famfs. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <blkid/blkid.h>
#include <uuid/uuid.h>

#include "internal.h"

/* mkfs and kill work on the raw device, never through a mount. */
static int open_raw_device(const char *path, struct famfs_dev *dev)
{
	char where[PATH_MAX];
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return famfs_fail(EISDIR, "%s is a directory; famfs needs a dax device or a regular file",
				  path);
	if (famfs_dev_mounted(path, where, sizeof(where)))
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

/*
 * What libblkid finds on @path (every signature it knows: file systems,
 * RAID members, encrypted volumes, swap, partition tables), described in
 * @what; "" when nothing. As mkfs.ext4 and mkfs.xfs do.
 */
static int probe_signatures(const char *path, char *what, size_t len)
{
	const char *type = NULL, *usage = NULL;
	blkid_probe pr;
	int rc;

	what[0] = '\0';
	pr = blkid_new_probe_from_filename(path);
	if (!pr)
		return famfs_fail(errno ? errno : EIO, "cannot look for other file systems on %s: %s",
				  path, strerror(errno ? errno : EIO));
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
						      BLKID_SUBLKS_USAGE);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	rc = blkid_do_fullprobe(pr);
	if (rc == -2) {
		snprintf(what, len, "several signatures (libblkid cannot tell which one is current)");
	} else if (rc == 0 &&
		   !blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
		blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
		snprintf(what, len, "%s (%s)",
			 !usage ? "a signature" :
			 !strcmp(usage, "filesystem") ? "a file system" :
			 !strcmp(usage, "raid") ? "a RAID member" :
			 !strcmp(usage, "crypto") ? "an encrypted volume" :
						    "a signature",
			 type);
	} else if (rc == 0 &&
		   !blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
		snprintf(what, len, "a partition table (%s)", type);
	} else if (rc < 0 && rc != -2) {
		blkid_free_probe(pr);
		return famfs_fail(EIO, "cannot look for other file systems on %s",
				  path);
	}
	blkid_free_probe(pr);
	return 0;
}

/* Erase every signature libblkid knows on @fd, so nothing else claims it. */
static int wipe_signatures(const struct famfs_dev *dev)
{
	blkid_probe pr = blkid_new_probe();
	int rc = 0;

	if (!pr || blkid_probe_set_device(pr, dev->fd, 0, 0)) {
		rc = famfs_fail(EIO, "cannot erase old signatures on %s",
				dev->path);
		goto out;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	while (blkid_do_probe(pr) == 0) {
		if (blkid_do_wipe(pr, 0)) {
			rc = famfs_fail(EIO, "cannot erase an old signature on %s: %s",
					dev->path, strerror(errno));
			break;
		}
	}
out:
	if (pr)
		blkid_free_probe(pr);
	return rc;
}

/*
 * A famfs is recognised by its log too: a superblock with a flipped byte
 * over an intact log is someone's damaged famfs, not free space.
 */
static bool famfs_log_intact(const struct famfs_dev *dev)
{
	const struct famfs_omf_log *log;
	uint64_t len;

	if (dev->size < FAMFS_LOG_OFFSET + sizeof(*log))
		return false;
	log = (const struct famfs_omf_log *)(dev->base + FAMFS_LOG_OFFSET);
	len = log->len;
	return log->magic == FAMFS_LOG_MAGIC &&
	       log->crc == famfs_log_header_crc(log) &&
	       len >= FAMFS_LOG_MIN_LEN &&
	       !famfs_range_exceeds(FAMFS_LOG_OFFSET, len, dev->size) &&
	       famfs_log_check_header(log, len) == 0;
}

/* Refuse, without -f, a device that holds anything we know of. */
static int check_unused(const struct famfs_dev *dev)
{
	char what[160];
	int rc;

	if (dev->sb->magic == FAMFS_SUPER_MAGIC) {
		enum famfs_role role = famfs_role(dev);

		snprintf(what, sizeof(what), "a famfs%s",
			 role == FAMFS_ROLE_CLIENT ? " owned by another host" :
			 role == FAMFS_ROLE_NOSUPER ? " (damaged)" : "");
	} else if (famfs_log_intact(dev)) {
		snprintf(what, sizeof(what), "a famfs whose superblock is damaged (its log is intact)");
	} else if (dev->kind != FAMFS_DEV_DAX) {
		/* libblkid reads with read(2), which devdax does not serve */
		rc = probe_signatures(dev->path, what, sizeof(what));
		if (rc)
			return rc;
	}
	if (what[0])
		return famfs_fail(EEXIST, "%s holds %s; use -f to overwrite it",
				  dev->path, what);
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
	if (!opts->force) {
		rc = check_unused(&dev);
		if (rc)
			goto out;
	}
	rc = famfs_system_uuid(me, true);
	if (rc)
		goto out;
	if (dev.kind != FAMFS_DEV_DAX) {
		rc = wipe_signatures(&dev);
		if (rc)
			goto out;
	}

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
		/*
		 * The log's magic too: an intact log alone still marks a
		 * famfs (check_unused), and a killed one is no famfs.
		 */
		if (famfs_log_intact(&dev)) {
			struct famfs_omf_log *log = (struct famfs_omf_log *)(
				dev.base + FAMFS_LOG_OFFSET);

			log->magic = 0;
			famfs_dev_flush(&dev, &log->magic, sizeof(log->magic));
		}
	}
	famfs_dev_close(&dev);
	return rc;
}
