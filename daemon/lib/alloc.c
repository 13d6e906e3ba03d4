// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The allocator. famfs keeps no free map on the device: the free map is
 * rebuilt from the log every time (superblock + log, then every extent of
 * every valid file entry). Allocation marks units in that map before the
 * caller logs the file, so one map never hands out a range twice; appends
 * are serialised by the log lock, and the map is rebuilt under that lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool unit_used(const struct famfs_alloc *a, uint64_t u)
{
	return a->map[u / 8] & (1u << (u % 8));
}

bool famfs_alloc_used(const struct famfs_alloc *a, uint64_t unit)
{
	return unit_used(a, unit);
}

static void set_units(struct famfs_alloc *a, uint64_t first, uint64_t n)
{
	for (uint64_t u = first; u < first + n; u++)
		a->map[u / 8] |= (uint8_t)(1u << (u % 8));
	a->used += n;
}

uint64_t famfs_alloc_mark(struct famfs_alloc *a, uint64_t off, uint64_t len)
{
	uint64_t first = off / a->alloc_unit;
	uint64_t last = (off + len + a->alloc_unit - 1) / a->alloc_unit;
	uint64_t again = 0;

	if (last > a->nunits)
		last = a->nunits;
	for (uint64_t u = first; u < last; u++) {
		if (unit_used(a, u)) {
			again++;
			continue;
		}
		set_units(a, u, 1);
	}
	a->overlaps += again;
	return again;
}

void famfs_alloc_free(struct famfs_alloc *a, uint64_t off, uint64_t len)
{
	uint64_t first = off / a->alloc_unit;
	uint64_t last = (off + len + a->alloc_unit - 1) / a->alloc_unit;

	for (uint64_t u = first; u < last && u < a->nunits; u++) {
		if (!unit_used(a, u))
			continue;
		a->map[u / 8] &= (uint8_t)~(1u << (u % 8));
		a->used--;
	}
}

static void mark_range(uint64_t devindex, uint64_t off, uint64_t len, void *arg)
{
	(void)devindex;
	famfs_alloc_mark(arg, off, len);
}

uint64_t famfs_alloc_mark_fmap(struct famfs_alloc *a,
			       const struct famfs_omf_fmap *fm)
{
	uint64_t before = a->overlaps;

	famfs_fmap_for_each_range(fm, mark_range, a);
	return a->overlaps - before;
}

int famfs_alloc_init(struct famfs_alloc *a, const struct famfs_geometry *g)
{
	memset(a, 0, sizeof(*a));
	if (!g->alloc_unit)
		return famfs_fail(EIO, "the superblock gives no allocation unit");
	a->alloc_unit = g->alloc_unit;
	a->nunits = g->dev_size / g->alloc_unit; /* a partial unit is unusable */
	a->map = calloc(a->nunits / 8 + 1, 1);
	if (!a->map)
		return famfs_fail(ENOMEM, "out of memory for a %llu-unit free map",
				  (unsigned long long)a->nunits);
	famfs_alloc_mark(a, 0, g->data_start);
	return 0;
}

void famfs_alloc_release(struct famfs_alloc *a)
{
	free(a->map);
	a->map = NULL;
}

/* First fit of @n free units within units [lo, hi); returns first or -1. */
static int64_t find_run(const struct famfs_alloc *a, uint64_t n, uint64_t lo,
			uint64_t hi)
{
	uint64_t run = 0;

	for (uint64_t u = lo; u < hi; u++) {
		run = unit_used(a, u) ? 0 : run + 1;
		if (run == n)
			return (int64_t)(u + 1 - n);
	}
	return -1;
}

/* Units for @size bytes, rounded up; never overflows. */
static uint64_t units_for(const struct famfs_alloc *a, uint64_t size)
{
	return size ? size / a->alloc_unit + !!(size % a->alloc_unit) : 1;
}

/* A file larger than every byte the device has for files cannot be made. */
static int check_fits(const struct famfs_alloc *a, uint64_t size)
{
	if (units_for(a, size) > a->nunits)
		return famfs_fail(EFBIG, "a file of %llu bytes is too large: it does not fit on a %llu-byte device",
				  (unsigned long long)size,
				  (unsigned long long)(a->nunits * a->alloc_unit));
	return 0;
}

/* -ENOSPC, saying how much is free: no run of @n free units */
static int no_run(const struct famfs_alloc *a, uint64_t n)
{
	return famfs_fail(ENOSPC, "no free run of %llu bytes on the device (%llu of %llu bytes free)",
			  (unsigned long long)(n * a->alloc_unit),
			  (unsigned long long)((a->nunits - a->used) *
					       a->alloc_unit),
			  (unsigned long long)(a->nunits * a->alloc_unit));
}

int famfs_alloc_contig(struct famfs_alloc *a, uint64_t size,
		       struct famfs_omf_fmap *out)
{
	uint64_t n = units_for(a, size);
	int64_t first;

	if (check_fits(a, size))
		return -EFBIG;
	first = find_run(a, n, 0, a->nunits);
	if (first < 0)
		return no_run(a, n);
	set_units(a, (uint64_t)first, n);
	memset(out, 0, sizeof(*out));
	out->ext_type = FAMFS_EXT_SIMPLE;
	out->simple.nextents = 1;
	out->simple.se[0].offset = (uint64_t)first * a->alloc_unit;
	out->simple.se[0].len = n * a->alloc_unit;
	return 0;
}

/* Bytes the simple map @fm covers */
static uint64_t simple_capacity(const struct famfs_omf_fmap *fm)
{
	uint64_t cap = 0;

	for (uint32_t i = 0; i < fm->simple.nextents; i++)
		cap += fm->simple.se[i].len;
	return cap;
}

/* Extend the last extent of @fm in place by @n units, if they are free. */
static bool grow_in_place(struct famfs_alloc *a, struct famfs_omf_fmap *fm,
			  uint64_t n)
{
	struct famfs_omf_extent *last;
	uint64_t end;

	if (!fm->simple.nextents)
		return false;
	last = &fm->simple.se[fm->simple.nextents - 1];
	end = (last->offset + last->len) / a->alloc_unit;
	if (end + n > a->nunits || find_run(a, n, end, end + n) != (int64_t)end)
		return false;
	set_units(a, end, n);
	last->len += n * a->alloc_unit;
	return true;
}

int famfs_alloc_grow(struct famfs_alloc *a, struct famfs_omf_fmap *fm,
		     uint64_t need)
{
	uint64_t cap = simple_capacity(fm), n, want;
	int64_t first;

	if (need <= cap)
		return 0;
	if (check_fits(a, need))
		return -EFBIG;
	fm->ext_type = FAMFS_EXT_SIMPLE;
	n = units_for(a, need - cap);
	if (grow_in_place(a, fm, n))
		return 0;
	if (fm->simple.nextents == FAMFS_MAX_SIMPLE_EXT)
		return famfs_fail(EFBIG, "a file of more than %u extents cannot be logged, and the device has no room next to its last one",
				  FAMFS_MAX_SIMPLE_EXT);
	/* As much again as the file has, so that few extents cover it. */
	want = units_for(a, cap) > n ? units_for(a, cap) : n;
	first = find_run(a, want, 0, a->nunits);
	if (first < 0) {
		want = n;
		first = find_run(a, n, 0, a->nunits);
	}
	if (first < 0)
		return no_run(a, n);
	set_units(a, (uint64_t)first, want);
	fm->simple.se[fm->simple.nextents].offset =
		(uint64_t)first * a->alloc_unit;
	fm->simple.se[fm->simple.nextents].len = want * a->alloc_unit;
	fm->simple.nextents++;
	return 0;
}

void famfs_alloc_trim(struct famfs_alloc *a, struct famfs_omf_fmap *fm,
		      uint64_t size)
{
	uint64_t keep = units_for(a, size) * a->alloc_unit, at = 0;
	uint32_t i, n = 0;

	for (i = 0; i < fm->simple.nextents; i++) {
		struct famfs_omf_extent *se = &fm->simple.se[i];
		uint64_t use = keep > at ? keep - at : 0;

		if (use > se->len)
			use = se->len;
		if (use < se->len)
			famfs_alloc_free(a, se->offset + use, se->len - use);
		at += se->len;
		se->len = use;
		if (use)
			n = i + 1;
	}
	fm->simple.nextents = n;
}

int famfs_interleave_check(const struct famfs_interleave *il,
			   const struct famfs_geometry *g)
{
	if (il->nstrips == 0 || il->nstrips > FAMFS_MAX_STRIPS)
		return famfs_fail(EINVAL, "the number of strips must be 1 to %d, not %u",
				  FAMFS_MAX_STRIPS, il->nstrips);
	if (il->nbuckets < il->nstrips)
		return famfs_fail(EINVAL, "%u buckets cannot hold %u strips (each strip needs its own bucket)",
				  il->nbuckets, il->nstrips);
	if (!famfs_is_pow2(il->chunk_size) || il->chunk_size % g->alloc_unit)
		return famfs_fail(EINVAL, "chunk size %llu must be a power of two and a multiple of %llu",
				  (unsigned long long)il->chunk_size,
				  (unsigned long long)g->alloc_unit);
	if (g->dev_size / il->nbuckets < il->chunk_size)
		return famfs_fail(EINVAL, "%u buckets of a %llu-byte device are smaller than one chunk",
				  il->nbuckets, (unsigned long long)g->dev_size);
	/*
	 * Upstream's rule where upstream can make a famfs at all: small
	 * buckets are for the small devices only we accept.
	 */
	if (g->dev_size >= FAMFS_UPSTREAM_MIN_DEV &&
	    g->dev_size / il->nbuckets < FAMFS_MIN_BUCKET)
		return famfs_fail(EINVAL, "%u buckets of a %llu MiB device are smaller than 1 GiB, the least allowed on devices of 4 GiB or more (as upstream famfs)",
				  il->nbuckets,
				  (unsigned long long)(g->dev_size >> 20));
	return 0;
}

/*
 * Each strip comes from a different bucket (an equal slice of the device),
 * so a file's chunks spread over the whole device, and so over every
 * memory device interleaved behind it. Buckets are tried in a rotating
 * order so consecutive files start their strips in different buckets.
 */
int famfs_alloc_interleaved(struct famfs_alloc *a, uint64_t size,
			    const struct famfs_interleave *il,
			    struct famfs_omf_fmap *out)
{
	struct famfs_omf_iext *ie = &out->interleave.ie[0];
	uint64_t chunk_units = il->chunk_size / a->alloc_unit;
	uint64_t bucket_units = a->nunits / il->nbuckets;
	uint64_t stripe_units = chunk_units * il->nstrips;
	uint64_t nstripes = (units_for(a, size) + stripe_units - 1) / stripe_units;
	uint64_t strip_units = nstripes * chunk_units;
	uint64_t start = a->used; /* varies from file to file */
	uint32_t got = 0;

	if (check_fits(a, size))
		return -EFBIG;
	if (il->nstrips == 0 || il->nbuckets < il->nstrips ||
	    !chunk_units || bucket_units < strip_units)
		return famfs_fail(ENOSPC, "a %llu-byte file in %u strips does not fit in buckets of %llu bytes",
				  (unsigned long long)size, il->nstrips,
				  (unsigned long long)(bucket_units * a->alloc_unit));

	memset(out, 0, sizeof(*out));
	out->ext_type = FAMFS_EXT_INTERLEAVE;
	out->interleave.niext = 1;
	ie->nstrips = il->nstrips;
	ie->chunk_size = il->chunk_size;

	for (uint32_t i = 0; i < il->nbuckets && got < il->nstrips; i++) {
		uint64_t b = (start + i) % il->nbuckets;
		int64_t first = find_run(a, strip_units, b * bucket_units,
					 (b + 1) * bucket_units);

		if (first < 0)
			continue;
		set_units(a, (uint64_t)first, strip_units);
		ie->strips[got].offset = (uint64_t)first * a->alloc_unit;
		ie->strips[got].len = strip_units * a->alloc_unit;
		got++;
	}
	if (got < il->nstrips) {
		/* Give back what we took: the map must stay exact. */
		for (uint32_t s = 0; s < got; s++) {
			uint64_t f = ie->strips[s].offset / a->alloc_unit;

			for (uint64_t u = f; u < f + strip_units; u++)
				a->map[u / 8] &= (uint8_t)~(1u << (u % 8));
			a->used -= strip_units;
		}
		return famfs_fail(ENOSPC, "only %u of %u buckets have a free run of %llu bytes for a strip",
				  got, il->nstrips,
				  (unsigned long long)(strip_units * a->alloc_unit));
	}
	return 0;
}
