// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fmap decoding: an fmap that passes famfs_fmap_check() must translate
 * every offset of the file to a range inside the device's data area, and
 * never run past it, whatever else its bytes say.
 */
#include <stdlib.h>
#include <string.h>

#include "libfamfs.h"

static const struct famfs_geometry g = {
	.dev_size = 1ULL << 34,
	.alloc_unit = 2ULL << 20,
	.data_start = 10ULL << 20,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct famfs_omf_fmap fm;
	uint64_t file_size, dev_off, contig, step;

	if (size < sizeof(fm) + sizeof(file_size))
		return 0;
	memcpy(&fm, data, sizeof(fm));
	memcpy(&file_size, data + sizeof(fm), sizeof(file_size));
	if (famfs_fmap_check(&fm, file_size, &g))
		return 0;
	if (famfs_fmap_capacity(&fm) < file_size)
		abort();
	step = file_size / 64 + 1;
	for (uint64_t off = 0; off < file_size; off += step) {
		if (famfs_fmap_resolve(&fm, off, &dev_off, &contig))
			abort();
		if (dev_off < g.data_start || contig == 0 ||
		    dev_off + contig > g.dev_size || dev_off + contig < dev_off)
			abort();
	}
	return 0;
}
