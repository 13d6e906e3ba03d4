// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File maps: checking them and turning file offsets into device offsets.
 *
 * A simple fmap is a list of extents laid end to end. An interleaved fmap
 * stripes the file over nstrips strips in chunks of chunk_size bytes:
 * chunk c = off / chunk_size lives in strip c % nstrips, at offset
 * (c / nstrips) * chunk_size + off % chunk_size within that strip.
 */
#include <errno.h>

#include "internal.h"

static int check_extent(const struct famfs_omf_extent *x, const char *what,
			unsigned int i, const struct famfs_geometry *g)
{
	uint64_t dev_size = famfs_geo_dev_size(g, x->devindex);

	if (x->devindex >= famfs_geo_ndevs(g))
		return famfs_fail(EUCLEAN, "%s %u is on device index %llu; the file system has %u device%s at that point of the log",
				  what, i, (unsigned long long)x->devindex,
				  famfs_geo_ndevs(g),
				  famfs_geo_ndevs(g) == 1 ? "" : "s");
	if (x->len == 0)
		return famfs_fail(EUCLEAN, "%s %u is empty", what, i);
	if (x->offset % g->alloc_unit || x->len % g->alloc_unit)
		return famfs_fail(EUCLEAN, "%s %u (offset 0x%llx, length 0x%llx) is not aligned to the 0x%llx allocation unit",
				  what, i, (unsigned long long)x->offset,
				  (unsigned long long)x->len,
				  (unsigned long long)g->alloc_unit);
	if (x->offset < famfs_geo_data_start(g, x->devindex))
		return famfs_fail(EUCLEAN, "%s %u (offset 0x%llx) overlaps the superblock or log",
				  what, i, (unsigned long long)x->offset);
	if (famfs_range_exceeds(x->offset, x->len, dev_size))
		return famfs_fail(EUCLEAN, "%s %u (offset 0x%llx, length 0x%llx) runs past the end of the %llu-byte device %llu",
				  what, i, (unsigned long long)x->offset,
				  (unsigned long long)x->len,
				  (unsigned long long)dev_size,
				  (unsigned long long)x->devindex);
	return 0;
}

static int check_interleave(const struct famfs_omf_iext *ie,
			    const struct famfs_geometry *g)
{
	unsigned int i;
	int rc;

	if (ie->nstrips == 0 || ie->nstrips > FAMFS_MAX_STRIPS)
		return famfs_fail(EUCLEAN, "interleaved extent has %llu strips (1 to %d allowed)",
				  (unsigned long long)ie->nstrips,
				  FAMFS_MAX_STRIPS);
	if (!famfs_is_pow2(ie->chunk_size) || ie->chunk_size % g->alloc_unit)
		return famfs_fail(EUCLEAN, "interleave chunk size %llu is not a power-of-two multiple of the allocation unit",
				  (unsigned long long)ie->chunk_size);
	for (i = 0; i < ie->nstrips; i++) {
		rc = check_extent(&ie->strips[i], "strip", i, g);
		if (rc)
			return rc;
		/* The striping formula needs strips of whole, equal chunks. */
		if (ie->strips[i].len != ie->strips[0].len ||
		    ie->strips[i].len % ie->chunk_size)
			return famfs_fail(EUCLEAN, "strip %u length 0x%llx is not the common length 0x%llx in whole chunks",
					  i, (unsigned long long)ie->strips[i].len,
					  (unsigned long long)ie->strips[0].len);
	}
	return 0;
}

uint64_t famfs_fmap_capacity(const struct famfs_omf_fmap *fm)
{
	uint64_t total = 0;
	unsigned int i;

	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		for (i = 0; i < fm->simple.nextents && i < FAMFS_MAX_SIMPLE_EXT; i++)
			total += fm->simple.se[i].len;
		return total;
	}
	if (fm->ext_type == FAMFS_EXT_INTERLEAVE && fm->interleave.niext == 1 &&
	    fm->interleave.ie[0].nstrips <= FAMFS_MAX_STRIPS)
		return fm->interleave.ie[0].nstrips *
		       fm->interleave.ie[0].strips[0].len;
	return 0;
}

int famfs_fmap_check(const struct famfs_omf_fmap *fm, uint64_t size,
		     const struct famfs_geometry *g)
{
	uint64_t total = 0;
	unsigned int i;
	int rc;

	/* A superblock that reads as zeros (its device gone) has no unit. */
	if (!g->alloc_unit)
		return famfs_fail(EIO, "the superblock gives no allocation unit");
	switch (fm->ext_type) {
	case FAMFS_EXT_SIMPLE:
		if (fm->simple.nextents == 0 ||
		    fm->simple.nextents > FAMFS_MAX_SIMPLE_EXT)
			return famfs_fail(EUCLEAN, "fmap has %u extents (1 to %d allowed)",
					  fm->simple.nextents,
					  FAMFS_MAX_SIMPLE_EXT);
		for (i = 0; i < fm->simple.nextents; i++) {
			rc = check_extent(&fm->simple.se[i], "extent", i, g);
			if (rc)
				return rc;
			total += fm->simple.se[i].len; /* bounded by dev_size */
		}
		break;
	case FAMFS_EXT_INTERLEAVE:
		if (fm->interleave.niext != FAMFS_MAX_IEXT)
			return famfs_fail(EUCLEAN, "fmap has %u interleaved extents (exactly 1 allowed)",
					  fm->interleave.niext);
		rc = check_interleave(&fm->interleave.ie[0], g);
		if (rc)
			return rc;
		total = famfs_fmap_capacity(fm);
		break;
	default:
		return famfs_fail(EUCLEAN, "fmap has unknown extent type %u",
				  fm->ext_type);
	}
	if (total < size)
		return famfs_fail(EUCLEAN, "fmap maps %llu bytes, less than the file size %llu",
				  (unsigned long long)total,
				  (unsigned long long)size);
	return 0;
}

int famfs_fmap_resolve(const struct famfs_omf_fmap *fm, uint64_t off,
		       uint64_t *devindex, uint64_t *dev_off, uint64_t *contig)
{
	unsigned int i;

	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		for (i = 0; i < fm->simple.nextents && i < FAMFS_MAX_SIMPLE_EXT; i++) {
			const struct famfs_omf_extent *x = &fm->simple.se[i];

			if (off < x->len) {
				*devindex = x->devindex;
				*dev_off = x->offset + off;
				*contig = x->len - off;
				return 0;
			}
			off -= x->len;
		}
		return famfs_fail(ERANGE, "offset is beyond the file's extents");
	}
	if (fm->ext_type == FAMFS_EXT_INTERLEAVE && fm->interleave.niext == 1) {
		const struct famfs_omf_iext *ie = &fm->interleave.ie[0];
		uint64_t chunk, in_chunk, strip, stripe;

		if (!ie->chunk_size || !ie->nstrips ||
		    ie->nstrips > FAMFS_MAX_STRIPS ||
		    off >= famfs_fmap_capacity(fm))
			return famfs_fail(ERANGE, "offset is beyond the file's strips");
		chunk = off / ie->chunk_size;
		in_chunk = off % ie->chunk_size;
		strip = chunk % ie->nstrips;
		stripe = chunk / ie->nstrips;
		*devindex = ie->strips[strip].devindex;
		*dev_off = ie->strips[strip].offset + stripe * ie->chunk_size +
			   in_chunk;
		*contig = ie->chunk_size - in_chunk;
		return 0;
	}
	return famfs_fail(EINVAL, "fmap has unknown extent type %u",
			  fm->ext_type);
}

void famfs_fmap_for_each_range(const struct famfs_omf_fmap *fm,
			       famfs_extent_fn fn, void *arg)
{
	const struct famfs_omf_extent *x;
	unsigned int i, n = 0;

	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		x = fm->simple.se;
		n = fm->simple.nextents;
		if (n > FAMFS_MAX_SIMPLE_EXT)
			n = FAMFS_MAX_SIMPLE_EXT;
	} else if (fm->ext_type == FAMFS_EXT_INTERLEAVE &&
		   fm->interleave.niext >= 1) {
		x = fm->interleave.ie[0].strips;
		n = (unsigned int)fm->interleave.ie[0].nstrips;
		if (fm->interleave.ie[0].nstrips > FAMFS_MAX_STRIPS)
			n = FAMFS_MAX_STRIPS;
	} else {
		return;
	}
	for (i = 0; i < n; i++)
		fn(x[i].devindex, x[i].offset, x[i].len, arg);
}
