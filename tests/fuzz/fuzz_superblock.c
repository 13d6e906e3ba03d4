// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Superblock parsing: any bytes at offset 0 of a device, on a device of any
 * size, must either check out or be refused, and a superblock that checks
 * out must describe a log that fits the device.
 */
#include <stdlib.h>
#include <string.h>

#include "libfamfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct famfs_omf_superblock sb;
	struct famfs_geometry g;
	uint64_t dev_size = 16ULL << 20;

	if (size < sizeof(sb))
		return 0;
	memcpy(&sb, data, sizeof(sb));
	if (size >= sizeof(sb) + 8)
		memcpy(&dev_size, data + sizeof(sb), 8);
	/* Make the CRC right half the time, so the checks after it run. */
	if (size > sizeof(sb) + 8 && data[sizeof(sb) + 8] & 1)
		sb.crc = famfs_sb_crc(&sb);
	if (famfs_sb_check(&sb, dev_size) == 0) {
		famfs_sb_geometry(&sb, &g);
		if (g.data_start > dev_size || g.dev_size > dev_size ||
		    g.data_start > g.dev_size)
			abort();
	}
	return 0;
}
