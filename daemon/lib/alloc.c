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

static bool unit_used(const struct famfs_alloc_dev *d, uint64_t u)
{
	return d->map[u / 8] & (1u << (u % 8));
}

bool famfs_alloc_used(const struct famfs_alloc *a, uint64_t devindex,
		      uint64_t unit)
{
	if (devindex >= a->ndevs || unit >= a->dev[devindex].nunits)
		return true;
	return unit_used(&a->dev[devindex], unit);
}

static void set_units(struct famfs_alloc *a, uint32_t dev, uint64_t first,
		      uint64_t n)
{
	struct famfs_alloc_dev *d = &a->dev[dev];

	for (uint64_t u = first; u < first + n; u++)
		d->map[u / 8] |= (uint8_t)(1u << (u % 8));
	d->used += n;
	a->used += n;
}

static void clear_unit(struct famfs_alloc *a, uint32_t dev, uint64_t u)
{
	struct famfs_alloc_dev *d = &a->dev[dev];

	d->map[u / 8] &= (uint8_t)~(1u << (u % 8));
	d->used--;
	a->used--;
}

uint64_t famfs_alloc_mark(struct famfs_alloc *a, uint64_t devindex,
			  uint64_t off, uint64_t len)
{
	uint64_t first = off / a->alloc_unit;
	uint64_t last = (off + len + a->alloc_unit - 1) / a->alloc_unit;
	uint64_t again = 0;

	/* A device the walk has not added: nothing there may be used. */
	if (devindex >= a->ndevs) {
		again = last - first;
		a->overlaps += again;
		return again;
	}
	if (last > a->dev[devindex].nunits)
		last = a->dev[devindex].nunits;
	for (uint64_t u = first; u < last; u++) {
		if (unit_used(&a->dev[devindex], u)) {
			again++;
			continue;
		}
		set_units(a, (uint32_t)devindex, u, 1);
	}
	a->overlaps += again;
	return again;
}

void famfs_alloc_free(struct famfs_alloc *a, uint64_t devindex, uint64_t off,
		      uint64_t len)
{
	uint64_t first = off / a->alloc_unit;
	uint64_t last = (off + len + a->alloc_unit - 1) / a->alloc_unit;

	if (devindex >= a->ndevs)
		return;
	for (uint64_t u = first; u < last && u < a->dev[devindex].nunits; u++)
		if (unit_used(&a->dev[devindex], u))
			clear_unit(a, (uint32_t)devindex, u);
}

static void mark_range(uint64_t devindex, uint64_t off, uint64_t len, void *arg)
{
	famfs_alloc_mark(arg, devindex, off, len);
}

uint64_t famfs_alloc_mark_fmap(struct famfs_alloc *a,
			       const struct famfs_omf_fmap *fm)
{
	uint64_t before = a->overlaps;

	famfs_fmap_for_each_range(fm, mark_range, a);
	return a->overlaps - before;
}

/* Device @i of @size bytes, its first @reserved bytes in use. */
static int add_dev(struct famfs_alloc *a, uint32_t i, uint64_t size,
		   uint64_t reserved)
{
	struct famfs_alloc_dev *d = &a->dev[i];

	d->nunits = size / a->alloc_unit; /* a partial unit is unusable */
	d->map = calloc(d->nunits / 8 + 1, 1);
	if (!d->map)
		return famfs_fail(ENOMEM, "out of memory for a %llu-unit free map",
				  (unsigned long long)d->nunits);
	a->nunits += d->nunits;
	a->ndevs = i + 1;
	famfs_alloc_mark(a, i, 0, reserved);
	return 0;
}

int famfs_alloc_init(struct famfs_alloc *a, const struct famfs_geometry *g)
{
	int rc;

	memset(a, 0, sizeof(*a));
	if (!g->alloc_unit)
		return famfs_fail(EIO, "the superblock gives no allocation unit");
	a->alloc_unit = g->alloc_unit;
	rc = add_dev(a, 0, g->dev_size, g->data_start);
	for (uint32_t i = 1; !rc && i < famfs_geo_ndevs(g); i++)
		rc = add_dev(a, i, g->dev[i].size, famfs_geo_data_start(g, i));
	if (rc)
		famfs_alloc_release(a);
	return rc;
}

int famfs_alloc_add_dev(struct famfs_alloc *a,
			const struct famfs_omf_add_daxdev *d)
{
	/* Known already (a walk from the start again), or not next. */
	if (d->index != a->ndevs || d->index >= FAMFS_MAX_DEVS)
		return 0;
	return add_dev(a, d->index, d->size, FAMFS_SB_REGION);
}

void famfs_alloc_release(struct famfs_alloc *a)
{
	for (uint32_t i = 0; i < FAMFS_MAX_DEVS; i++) {
		free(a->dev[i].map);
		a->dev[i].map = NULL;
	}
}

/* First fit of @n free units within units [lo, hi) of @dev; first or -1. */
static int64_t find_run(const struct famfs_alloc *a, uint32_t dev, uint64_t n,
			uint64_t lo, uint64_t hi)
{
	const struct famfs_alloc_dev *d = &a->dev[dev];
	uint64_t run = 0;

	if (d->absent)
		return -1;
	if (hi > d->nunits)
		hi = d->nunits;
	for (uint64_t u = lo; u < hi; u++) {
		run = unit_used(d, u) ? 0 : run + 1;
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

/* A file larger than every byte the devices have for files cannot be made. */
static int check_fits(const struct famfs_alloc *a, uint64_t size)
{
	if (units_for(a, size) > a->nunits)
		return famfs_fail(EFBIG, "a file of %llu bytes is too large: it does not fit in the %llu bytes of the file system's device%s",
				  (unsigned long long)size,
				  (unsigned long long)(a->nunits * a->alloc_unit),
				  a->ndevs == 1 ? "" : "s");
	return 0;
}

/* Free units of @d where new memory may go: none on a missing device. */
static uint64_t dev_free(const struct famfs_alloc_dev *d)
{
	return d->absent ? 0 : d->nunits - d->used;
}

/* -ENOSPC, saying how much is free: no run of @n free units */
static int no_run(const struct famfs_alloc *a, uint64_t n)
{
	uint32_t absent = 0;

	for (uint32_t i = 0; i < a->ndevs; i++)
		absent += a->dev[i].absent;
	return famfs_fail(ENOSPC, "no free run of %llu bytes on %s (%llu of %llu bytes free%s)",
			  (unsigned long long)(n * a->alloc_unit),
			  a->ndevs == 1 ? "the device" : "any device",
			  (unsigned long long)(famfs_alloc_free_units(a) *
					       a->alloc_unit),
			  (unsigned long long)(a->nunits * a->alloc_unit),
			  absent ? "; devices missing on this host take nothing new" : "");
}

/*
 * The devices, most free units first (ties: lower index first), so that
 * files go where there is space and the devices fill evenly.
 */
static void by_free_space(const struct famfs_alloc *a, uint32_t *order)
{
	for (uint32_t i = 0; i < a->ndevs; i++) {
		uint32_t j = i;
		uint64_t f = dev_free(&a->dev[i]);

		while (j && dev_free(&a->dev[order[j - 1]]) < f) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
}

void famfs_alloc_set_absent(struct famfs_alloc *a, uint32_t devindex,
			    bool absent)
{
	if (devindex < a->ndevs)
		a->dev[devindex].absent = absent;
}

uint64_t famfs_alloc_free_units(const struct famfs_alloc *a)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < a->ndevs; i++)
		n += dev_free(&a->dev[i]);
	return n;
}

/* A run of @n units on the device with most free space that has one. */
static int64_t find_anywhere(const struct famfs_alloc *a, uint64_t n,
			     uint32_t *dev)
{
	uint32_t order[FAMFS_MAX_DEVS];

	by_free_space(a, order);
	for (uint32_t i = 0; i < a->ndevs; i++) {
		int64_t first = find_run(a, order[i], n, 0, UINT64_MAX);

		if (first >= 0) {
			*dev = order[i];
			return first;
		}
	}
	return -1;
}

int famfs_alloc_contig(struct famfs_alloc *a, uint64_t size,
		       struct famfs_omf_fmap *out)
{
	uint64_t n = units_for(a, size);
	uint32_t dev;
	int64_t first;

	if (check_fits(a, size))
		return -EFBIG;
	first = find_anywhere(a, n, &dev);
	if (first < 0)
		return no_run(a, n);
	set_units(a, dev, (uint64_t)first, n);
	memset(out, 0, sizeof(*out));
	out->ext_type = FAMFS_EXT_SIMPLE;
	out->simple.nextents = 1;
	out->simple.se[0].devindex = dev;
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
	uint32_t dev;

	if (!fm->simple.nextents)
		return false;
	last = &fm->simple.se[fm->simple.nextents - 1];
	if (last->devindex >= a->ndevs)
		return false;
	dev = (uint32_t)last->devindex;
	end = (last->offset + last->len) / a->alloc_unit;
	if (end + n > a->dev[dev].nunits ||
	    find_run(a, dev, n, end, end + n) != (int64_t)end)
		return false;
	set_units(a, dev, end, n);
	last->len += n * a->alloc_unit;
	return true;
}

int famfs_alloc_grow(struct famfs_alloc *a, struct famfs_omf_fmap *fm,
		     uint64_t need)
{
	uint64_t cap = simple_capacity(fm), n, want;
	struct famfs_omf_extent *x;
	int64_t first;
	uint32_t dev;

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
	first = find_anywhere(a, want, &dev);
	if (first < 0) {
		want = n;
		first = find_anywhere(a, n, &dev);
	}
	if (first < 0)
		return no_run(a, n);
	set_units(a, dev, (uint64_t)first, want);
	x = &fm->simple.se[fm->simple.nextents++];
	x->devindex = dev;
	x->offset = (uint64_t)first * a->alloc_unit;
	x->len = want * a->alloc_unit;
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
			famfs_alloc_free(a, se->devindex, se->offset + use,
					 se->len - use);
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
	if (!famfs_is_pow2(il->chunk_size) || il->chunk_size % g->alloc_unit)
		return famfs_fail(EINVAL, "chunk size %llu must be a power of two and a multiple of %llu",
				  (unsigned long long)il->chunk_size,
				  (unsigned long long)g->alloc_unit);
	/* Several devices: strips go to devices, there are no buckets. */
	if (famfs_geo_ndevs(g) > 1)
		return 0;
	if (il->nbuckets < il->nstrips)
		return famfs_fail(EINVAL, "%u buckets cannot hold %u strips (each strip needs its own bucket)",
				  il->nbuckets, il->nstrips);
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
 * Where strip @s may go: on one device, its own bucket (an equal slice of
 * the device), tried in a rotating order so consecutive files start their
 * strips in different buckets; on several, its own device, most free
 * space first, the devices taking turns when there are more strips than
 * devices. Returns the first unit or -1, and the device in *@dev.
 */
static int64_t place_strip(const struct famfs_alloc *a,
			   const struct famfs_interleave *il,
			   const uint32_t *order, uint64_t start, uint32_t *b,
			   uint64_t strip_units, uint32_t *dev)
{
	uint64_t bucket_units;

	if (a->ndevs > 1) {
		for (; *b < a->ndevs * ((il->nstrips + a->ndevs - 1) / a->ndevs);
		     (*b)++) {
			int64_t first;

			*dev = order[*b % a->ndevs];
			first = find_run(a, *dev, strip_units, 0, UINT64_MAX);
			if (first >= 0) {
				(*b)++;
				return first;
			}
		}
		return -1;
	}
	if (!il->nbuckets)
		return -1;
	bucket_units = a->dev[0].nunits / il->nbuckets;
	for (*dev = 0; *b < il->nbuckets; (*b)++) {
		uint64_t k = (start + *b) % il->nbuckets;
		int64_t first = find_run(a, 0, strip_units, k * bucket_units,
					 (k + 1) * bucket_units);

		if (first >= 0) {
			(*b)++;
			return first;
		}
	}
	return -1;
}

/*
 * Strip sizes are equal and whole chunks (the striping formula needs it),
 * so a file spreads over every bucket or device it was given, and so over
 * every memory device interleaved behind them.
 */
int famfs_alloc_interleaved(struct famfs_alloc *a, uint64_t size,
			    const struct famfs_interleave *il,
			    struct famfs_omf_fmap *out)
{
	struct famfs_omf_iext *ie = &out->interleave.ie[0];
	uint64_t chunk_units = il->chunk_size / a->alloc_unit;
	uint64_t stripe_units = chunk_units * il->nstrips;
	uint64_t start = a->used; /* varies from file to file */
	uint32_t order[FAMFS_MAX_DEVS], got = 0, b = 0, dev;
	uint64_t strip_units, bucket_units;

	if (check_fits(a, size))
		return -EFBIG;
	if (il->nstrips == 0 || il->nstrips > FAMFS_MAX_STRIPS || !chunk_units)
		return famfs_fail(EINVAL, "%u strips of %llu bytes cannot be laid out",
				  il->nstrips,
				  (unsigned long long)il->chunk_size);
	strip_units = (units_for(a, size) + stripe_units - 1) / stripe_units *
		      chunk_units;
	bucket_units = il->nbuckets ? a->dev[0].nunits / il->nbuckets : 0;
	if (a->ndevs == 1 &&
	    (il->nbuckets < il->nstrips || bucket_units < strip_units))
		return famfs_fail(ENOSPC, "a %llu-byte file in %u strips does not fit in buckets of %llu bytes",
				  (unsigned long long)size, il->nstrips,
				  (unsigned long long)(bucket_units *
						       a->alloc_unit));

	memset(out, 0, sizeof(*out));
	out->ext_type = FAMFS_EXT_INTERLEAVE;
	out->interleave.niext = 1;
	ie->nstrips = il->nstrips;
	ie->chunk_size = il->chunk_size;

	by_free_space(a, order);
	for (; got < il->nstrips; got++) {
		int64_t first = place_strip(a, il, order, start, &b,
					    strip_units, &dev);

		if (first < 0)
			break;
		set_units(a, dev, (uint64_t)first, strip_units);
		ie->strips[got].devindex = dev;
		ie->strips[got].offset = (uint64_t)first * a->alloc_unit;
		ie->strips[got].len = strip_units * a->alloc_unit;
	}
	if (got < il->nstrips) {
		/* Give back what we took: the map must stay exact. */
		for (uint32_t s = 0; s < got; s++)
			famfs_alloc_free(a, ie->strips[s].devindex,
					 ie->strips[s].offset,
					 ie->strips[s].len);
		if (a->ndevs > 1)
			return famfs_fail(ENOSPC, "only %u of %u strips of %llu bytes found room on the %u devices",
					  got, il->nstrips,
					  (unsigned long long)(strip_units *
							       a->alloc_unit),
					  a->ndevs);
		return famfs_fail(ENOSPC, "only %u of %u buckets have a free run of %llu bytes for a strip",
				  got, il->nstrips,
				  (unsigned long long)(strip_units * a->alloc_unit));
	}
	return 0;
}
