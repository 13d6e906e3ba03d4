// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The three famfs checksums. Each is zlib's crc32 over the leading bytes of
 * a structure, up to the field that stores it; the on-media fields are 64
 * bits wide but only ever hold a 32-bit value.
 */
#include <zlib.h>

#include "internal.h"

static uint32_t crc_prefix(const void *p, size_t len)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)len);
}

uint32_t famfs_sb_crc(const struct famfs_omf_superblock *sb)
{
	return crc_prefix(sb, offsetof(struct famfs_omf_superblock, crc));
}

uint32_t famfs_log_header_crc(const struct famfs_omf_log *log)
{
	return crc_prefix(log, offsetof(struct famfs_omf_log, crc));
}

uint32_t famfs_entry_crc(const struct famfs_omf_entry *e)
{
	return crc_prefix(e, offsetof(struct famfs_omf_entry, crc));
}
