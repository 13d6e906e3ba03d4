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

/* ---- secondary devices --------------------------------------------------- */

static int check_member_size(const struct famfs_dev *dev, uint64_t unit)
{
	if (dev->size < FAMFS_SB_REGION + unit)
		return famfs_fail(ENOSPC, "%s is too small: %llu bytes; a device added to a famfs needs at least %llu bytes (%llu MiB)",
				  dev->path, (unsigned long long)dev->size,
				  (unsigned long long)(FAMFS_SB_REGION + unit),
				  (unsigned long long)((FAMFS_SB_REGION + unit) >> 20));
	if (dev->size % unit)
		return famfs_fail(EINVAL, "%s is %llu bytes, not a multiple of the %llu-byte allocation unit",
				  dev->path, (unsigned long long)dev->size,
				  (unsigned long long)unit);
	if (dev->size > FAMFS_MAX_DEV_SIZE)
		return famfs_fail(EFBIG, "%s is %llu bytes, more than a famfs device may have",
				  dev->path, (unsigned long long)dev->size);
	return 0;
}

int famfs_devadd_check(const char *path, bool force)
{
	struct famfs_dev dev;
	int rc = open_raw_device(path, &dev);

	if (rc)
		return rc;
	rc = check_member_size(&dev, FAMFS_ALLOC_UNIT);
	if (!rc && !force)
		rc = check_unused(&dev);
	famfs_dev_close(&dev);
	return rc;
}

/*
 * Refuse, even with -f, a device that already serves this famfs under
 * another name: its primary (the same node or file), or one of its
 * devices (the uuid in its superblock).
 */
static int check_not_ours(const struct famfs_dev *primary,
			  const struct famfs_geometry *g,
			  const struct famfs_dev *dev)
{
	struct famfs_dev_id a, b;
	struct stat sa, sb;
	int at;

	if (primary->kind != FAMFS_DEV_META && stat(primary->path, &sa) == 0 &&
	    stat(dev->path, &sb) == 0) {
		famfs_dev_id_of(&sa, &a);
		famfs_dev_id_of(&sb, &b);
		if (famfs_dev_id_eq(&a, &b))
			return famfs_fail(EEXIST, "%s is the primary device of this famfs",
					  dev->path);
	}
	if (dev->sb->magic != FAMFS_SUPER_MAGIC ||
	    dev->sb->crc != famfs_sb_crc(dev->sb) ||
	    memcmp(dev->sb->fs_uuid, primary->sb->fs_uuid, FAMFS_UUID_LEN))
		return 0;
	if (!famfs_sb_is_secondary(dev->sb))
		return famfs_fail(EEXIST, "%s is the primary device of this famfs",
				  dev->path);
	at = famfs_geo_find(g, dev->sb->dev_uuid);
	if (at > 0)
		return famfs_fail(EEXIST, "%s is device %d of this famfs already",
				  dev->path, at);
	return 0;
}

static void write_secondary_sb(struct famfs_dev *dev,
			       const struct famfs_omf_superblock *p)
{
	struct famfs_omf_superblock *sb = dev->sb;

	/* Never a valid superblock over a half-written one. */
	sb->magic = 0;
	famfs_dev_flush(dev, &sb->magic, sizeof(sb->magic));
	memset(sb, 0, sizeof(*sb));
	sb->version = FAMFS_SB_VERSION;
	sb->alloc_unit = p->alloc_unit;
	sb->omf_major = FAMFS_OMF_MAJOR;
	sb->omf_minor = FAMFS_OMF_MINOR;
	memcpy(sb->fs_uuid, p->fs_uuid, FAMFS_UUID_LEN);
	uuid_generate(sb->dev_uuid);
	memcpy(sb->system_uuid, p->system_uuid, FAMFS_UUID_LEN);
	sb->flags = FAMFS_SB_SECONDARY;
	sb->daxdev.size = dev->size;
	memcpy(sb->daxdev.uuid, sb->dev_uuid, FAMFS_UUID_LEN);
	/* A hint only, and cut short: hosts find the device by its uuid. */
	memcpy(sb->daxdev.name, dev->path,
	       strnlen(dev->path, sizeof(sb->daxdev.name) - 1));
	sb->magic = FAMFS_SUPER_MAGIC;
	sb->crc = famfs_sb_crc(sb);
	famfs_dev_flush(dev, sb, sizeof(*sb));
}

int famfs_devadd(struct famfs_dev *primary, const char *path, bool force,
		 uint32_t *index)
{
	struct famfs_omf_entry e;
	struct famfs_geometry g;
	struct famfs_dev dev;
	int rc;

	rc = famfs_dev_lock_log(primary);
	if (rc)
		return rc;
	famfs_dev_geometry(primary, &g);
	if (primary->geo_stuck) {
		rc = famfs_fail(EUCLEAN, "the log of %s is damaged; run famfs fsck first",
				primary->path);
		goto unlock;
	}
	if (famfs_geo_ndevs(&g) >= FAMFS_MAX_DEVS) {
		rc = famfs_fail(ENOSPC, "this famfs has %d devices, the most it may have",
				FAMFS_MAX_DEVS);
		goto unlock;
	}
	rc = open_raw_device(path, &dev);
	if (rc)
		goto unlock;
	rc = check_not_ours(primary, &g, &dev);
	if (!rc)
		rc = check_member_size(&dev, primary->sb->alloc_unit);
	if (!rc && !force)
		rc = check_unused(&dev);
	if (!rc && dev.kind != FAMFS_DEV_DAX)
		rc = wipe_signatures(&dev);
	if (rc)
		goto close;

	write_secondary_sb(&dev, primary->sb);
	/* The log entry is what makes it part of the famfs. */
	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_ADD_DAXDEV;
	e.daxdev.size = dev.size;
	memcpy(e.daxdev.uuid, dev.sb->dev_uuid, FAMFS_UUID_LEN);
	e.daxdev.index = famfs_geo_ndevs(&g);
	rc = famfs_log_append(primary, &e);
	if (rc)
		goto close;
	*index = e.daxdev.index;
	/* Only a cache: a host that lacks it scans for the device. */
	famfs_devmap_record(dev.sb->dev_uuid, primary->sb->fs_uuid, path);
close:
	famfs_dev_close(&dev);
unlock:
	famfs_dev_unlock(primary);
	return rc;
}
