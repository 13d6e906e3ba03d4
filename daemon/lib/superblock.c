// SPDX-License-Identifier: GPL-2.0-or-later
/* Superblock validation. */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Magic, version and CRC: what every famfs superblock has. */
static int check_header(const struct famfs_omf_superblock *sb)
{
	if (sb->magic != FAMFS_SUPER_MAGIC)
		return famfs_fail(ENOENT, "no famfs superblock (magic 0x%llx, expected 0x%llx)",
				  (unsigned long long)sb->magic,
				  (unsigned long long)FAMFS_SUPER_MAGIC);
	if (sb->version != FAMFS_SB_VERSION)
		return famfs_fail(EPROTO, "superblock version %llu is not supported (this tool reads %llu)",
				  (unsigned long long)sb->version,
				  (unsigned long long)FAMFS_SB_VERSION);
	if (sb->crc != famfs_sb_crc(sb))
		return famfs_fail(EBADMSG, "superblock CRC mismatch: stored 0x%llx, computed 0x%x",
				  (unsigned long long)sb->crc, famfs_sb_crc(sb));
	return 0;
}

int famfs_sb_check(const struct famfs_omf_superblock *sb, uint64_t dev_size)
{
	int rc = check_header(sb);

	if (rc)
		return rc;
	if (famfs_sb_is_secondary(sb)) {
		char fs[37];

		famfs_uuid_str(sb->fs_uuid, fs);
		return famfs_fail(EMEDIUMTYPE, "this is a secondary device of famfs %s (it holds no log): name the file system's primary device",
				  fs);
	}
	if (sb->alloc_unit != FAMFS_ALLOC_UNIT && sb->alloc_unit != 4096)
		return famfs_fail(EUCLEAN, "superblock allocation unit %llu is invalid",
				  (unsigned long long)sb->alloc_unit);
	if (sb->log_offset != FAMFS_LOG_OFFSET)
		return famfs_fail(EUCLEAN, "superblock log offset 0x%llx is invalid (expected 0x%llx)",
				  (unsigned long long)sb->log_offset,
				  (unsigned long long)FAMFS_LOG_OFFSET);
	if (sb->log_len < FAMFS_LOG_MIN_LEN || !famfs_is_pow2(sb->log_len))
		return famfs_fail(EUCLEAN, "superblock log length %llu is invalid (a power of two >= 8 MiB)",
				  (unsigned long long)sb->log_len);
	if (famfs_range_exceeds(sb->log_offset, sb->log_len, dev_size))
		return famfs_fail(EUCLEAN, "device is truncated: %llu bytes, but the log ends at byte %llu",
				  (unsigned long long)dev_size,
				  (unsigned long long)(sb->log_offset + sb->log_len));
	if (sb->daxdev.size > dev_size)
		return famfs_fail(EUCLEAN, "device is truncated: the superblock records %llu bytes, the device has %llu",
				  (unsigned long long)sb->daxdev.size,
				  (unsigned long long)dev_size);
	if (sb->daxdev.size < sb->log_offset + sb->log_len)
		return famfs_fail(EUCLEAN, "superblock device size %llu is smaller than superblock and log",
				  (unsigned long long)sb->daxdev.size);
	return 0;
}

void famfs_sb_geometry(const struct famfs_omf_superblock *sb,
		       struct famfs_geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->alloc_unit = sb->alloc_unit;
	g->data_start = sb->log_offset + sb->log_len;
	/* famfs_sb_check() made sure the device is at least this big. */
	g->dev_size = sb->daxdev.size;
	g->ndevs = 1;
	g->dev[0].size = sb->daxdev.size;
	memcpy(g->dev[0].uuid, sb->dev_uuid, FAMFS_UUID_LEN);
}

/*
 * A secondary is told apart by what the CRC covers: no log at all. The
 * flag (after the CRC) must agree; upstream writes no flags on the
 * primary, so only SECONDARY means anything.
 */
bool famfs_sb_is_secondary(const struct famfs_omf_superblock *sb)
{
	return sb->log_offset == 0 && sb->log_len == 0 &&
	       (sb->flags & FAMFS_SB_SECONDARY);
}

int famfs_sb_check_member(const struct famfs_omf_superblock *sb,
			  const uint8_t *fs_uuid, const uint8_t *dev_uuid)
{
	char have[37], need[37];
	int rc = check_header(sb);

	if (rc)
		return rc;
	if (!famfs_sb_is_secondary(sb))
		return famfs_fail(EUCLEAN, "it is not a secondary device: its superblock has a log or no secondary flag");
	if (fs_uuid && memcmp(sb->fs_uuid, fs_uuid, FAMFS_UUID_LEN)) {
		famfs_uuid_str(sb->fs_uuid, have);
		famfs_uuid_str(fs_uuid, need);
		return famfs_fail(EUCLEAN, "it belongs to famfs %s, not to famfs %s",
				  have, need);
	}
	if (dev_uuid && memcmp(sb->dev_uuid, dev_uuid, FAMFS_UUID_LEN)) {
		famfs_uuid_str(sb->dev_uuid, have);
		famfs_uuid_str(dev_uuid, need);
		return famfs_fail(EUCLEAN, "its device uuid is %s; the log names %s",
				  have, need);
	}
	return 0;
}

int famfs_sb_check_secondary(const struct famfs_omf_superblock *sb,
			     uint64_t dev_size,
			     const struct famfs_omf_superblock *primary,
			     const struct famfs_member *want)
{
	int rc = famfs_sb_check_member(sb, primary->fs_uuid, want->uuid);

	if (rc)
		return rc;
	if (sb->alloc_unit != primary->alloc_unit)
		return famfs_fail(EUCLEAN, "its allocation unit %llu differs from the primary's %llu",
				  (unsigned long long)sb->alloc_unit,
				  (unsigned long long)primary->alloc_unit);
	if (dev_size < want->size)
		return famfs_fail(EUCLEAN, "the device is truncated: %llu bytes, the log records %llu",
				  (unsigned long long)dev_size,
				  (unsigned long long)want->size);
	return 0;
}
