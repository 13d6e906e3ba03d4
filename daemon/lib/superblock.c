// SPDX-License-Identifier: GPL-2.0-or-later
/* Superblock validation. */
#include <errno.h>

#include "internal.h"

int famfs_sb_check(const struct famfs_omf_superblock *sb, uint64_t dev_size)
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
	g->alloc_unit = sb->alloc_unit;
	g->data_start = sb->log_offset + sb->log_len;
	/* famfs_sb_check() made sure the device is at least this big. */
	g->dev_size = sb->daxdev.size;
}
