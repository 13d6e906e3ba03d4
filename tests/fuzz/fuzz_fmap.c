// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fmap decoding: an fmap that passes famfs_fmap_check() must translate
 * every offset of the file to a range inside the device's data area, and
 * never run past it, whatever else its bytes say.
 */
#include <stdlib.h>
#include <string.h>

#include "libfamfs.h"

/* a primary of 16 GiB and a secondary of 1 GiB */
static const struct famfs_geometry g = {
	.dev_size = 1ULL << 34,
	.alloc_unit = 2ULL << 20,
	.data_start = 10ULL << 20,
	.ndevs = 2,
	.dev = { { 1ULL << 34, { 1 } }, { 1ULL << 30, { 2 } } },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct famfs_omf_fmap fm;
	uint64_t file_size, di, dev_off, contig, step;

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
		if (famfs_fmap_resolve(&fm, off, &di, &dev_off, &contig))
			abort();
		if (di >= g.ndevs || dev_off < famfs_geo_data_start(&g, di) ||
		    contig == 0 || dev_off + contig < dev_off ||
		    dev_off + contig > famfs_geo_dev_size(&g, di))
			abort();
	}
	return 0;
}
