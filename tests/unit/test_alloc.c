// SPDX-License-Identifier: GPL-2.0-or-later
/* The allocator: first fit, interleaving, and never the same unit twice. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

static const struct famfs_geometry g = {
	.dev_size = 256 * MiB,
	.alloc_unit = 2 * MiB,
	.data_start = 10 * MiB,
};

static void first_fit_skips_used_space(void **state)
{
	struct famfs_alloc a;
	struct famfs_omf_fmap f;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	assert_int_equal(a.used, 5); /* superblock + log */
	assert_int_equal(famfs_alloc_contig(&a, 1, &f), 0);
	assert_int_equal(f.simple.se[0].offset, 10 * MiB);
	assert_int_equal(f.simple.se[0].len, 2 * MiB);
	assert_int_equal(famfs_alloc_mark(&a, 0, 14 * MiB, 2 * MiB), 0);
	assert_int_equal(famfs_alloc_contig(&a, 3 * MiB, &f), 0);
	assert_int_equal(f.simple.se[0].offset, 16 * MiB); /* 12 alone is too short */
	assert_int_equal(famfs_alloc_contig(&a, 2 * MiB, &f), 0);
	assert_int_equal(f.simple.se[0].offset, 12 * MiB); /* the hole is reused */
	assert_int_equal(famfs_alloc_mark(&a, 0, 12 * MiB, 4 * MiB), 2);
	famfs_alloc_release(&a);
}

struct range {
	uint64_t off, len;
};

static void collect(uint64_t devindex, uint64_t off, uint64_t len, void *arg)
{
	struct range **r = arg;

	(void)devindex;
	(*r)->off = off;
	(*r)->len = len;
	(*r)++;
}

/* Allocate until full; no two ranges may overlap, and nothing is lost. */
static void never_hands_out_a_unit_twice(void **state)
{
	struct range ranges[256], *end = ranges;
	struct famfs_interleave il = { 4, 2, 2 * MiB };
	struct famfs_alloc a;
	struct famfs_omf_fmap f;
	uint64_t total = 0;
	int i = 0, rc;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	for (;; i++) {
		if (i % 3 == 0)
			rc = famfs_alloc_interleaved(&a, 4 * MiB, &il, &f);
		else
			rc = famfs_alloc_contig(&a, (uint64_t)(i % 5 + 1) * MiB, &f);
		if (rc) {
			assert_int_equal(rc, -ENOSPC);
			if (a.used == a.nunits)
				break;
			continue; /* this shape no longer fits; smaller ones may */
		}
		famfs_fmap_for_each_range(&f, collect, &end);
	}
	for (struct range *p = ranges; p < end; p++) {
		total += p->len;
		assert_true(p->off >= g.data_start);
		assert_true(p->off + p->len <= g.dev_size);
		for (struct range *q = p + 1; q < end; q++)
			assert_true(p->off + p->len <= q->off ||
				    q->off + q->len <= p->off);
	}
	assert_int_equal(total, (a.used - 5) * g.alloc_unit);
	assert_int_equal(a.used, a.nunits); /* the device ended up full */
	famfs_alloc_release(&a);
}

static void strips_come_from_distinct_buckets(void **state)
{
	struct famfs_interleave il = { 8, 4, 4 * MiB };
	struct famfs_alloc a;
	struct famfs_omf_fmap f;
	uint64_t bucket = 256 * MiB / 8;

	(void)state;
	assert_int_equal(famfs_interleave_check(&il, &g), 0);
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	for (int n = 0; n < 3; n++) {
		struct famfs_omf_iext *ie = &f.interleave.ie[0];

		assert_int_equal(famfs_alloc_interleaved(&a, 20 * MiB, &il, &f), 0);
		assert_int_equal(famfs_fmap_check(&f, 20 * MiB, &g), 0);
		assert_int_equal(ie->nstrips, 4);
		/* 20 MiB in 16 MiB stripes: 2 stripes, 8 MiB strips */
		for (int i = 0; i < 4; i++) {
			assert_int_equal(ie->strips[i].len, 8 * MiB);
			for (int j = i + 1; j < 4; j++)
				assert_int_not_equal(ie->strips[i].offset / bucket,
						     ie->strips[j].offset / bucket);
		}
	}
	famfs_alloc_release(&a);
}

static void failed_interleave_gives_space_back(void **state)
{
	struct famfs_interleave il = { 2, 2, 2 * MiB };
	struct famfs_alloc a;
	struct famfs_omf_fmap f;
	uint64_t used;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	/* fill the second bucket so only one strip can be placed */
	famfs_alloc_mark(&a, 0, 128 * MiB, 128 * MiB);
	used = a.used;
	assert_int_equal(famfs_alloc_interleaved(&a, 8 * MiB, &il, &f), -ENOSPC);
	assert_int_equal(a.used, used);
	assert_int_equal(famfs_alloc_contig(&a, 118 * MiB, &f), 0);
	famfs_alloc_release(&a);
}

static void bad_interleave_params(void **state)
{
	struct famfs_interleave il;

	(void)state;
	il = (struct famfs_interleave){ 4, 0, 2 * MiB };
	assert_int_equal(famfs_interleave_check(&il, &g), -EINVAL);
	il = (struct famfs_interleave){ 2, 4, 2 * MiB };
	assert_int_equal(famfs_interleave_check(&il, &g), -EINVAL);
	il = (struct famfs_interleave){ 4, 2, 3 * MiB };
	assert_int_equal(famfs_interleave_check(&il, &g), -EINVAL);
	il = (struct famfs_interleave){ 4, 17, 2 * MiB };
	assert_int_equal(famfs_interleave_check(&il, &g), -EINVAL);
}

/* Upstream's 1 GiB bucket floor, from its 4 GiB device minimum up. */
static void buckets_of_a_gib_on_big_devices(void **state)
{
	struct famfs_geometry big = { .dev_size = 4ULL << 30,
				      .alloc_unit = 2 * MiB,
				      .data_start = 10 * MiB };
	struct famfs_geometry small = { .dev_size = (4ULL << 30) - 2 * MiB,
					.alloc_unit = 2 * MiB,
					.data_start = 10 * MiB };
	struct famfs_interleave il = { 4, 2, 2 * MiB };

	(void)state;
	assert_int_equal(famfs_interleave_check(&il, &big), 0);
	il.nbuckets = 5; /* 819 MiB each */
	assert_int_equal(famfs_interleave_check(&il, &big), -EINVAL);
	assert_int_equal(famfs_interleave_check(&il, &small), 0);
}

/* A file written through the mount: its map grows as its bytes arrive. */
static void grow_in_place_then_as_much_again(void **state)
{
	struct famfs_omf_fmap f = { 0 };
	struct famfs_alloc a;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	assert_int_equal(famfs_alloc_grow(&a, &f, 1), 0);
	assert_int_equal(f.simple.nextents, 1);
	assert_int_equal(f.simple.se[0].offset, 10 * MiB);
	assert_int_equal(famfs_alloc_grow(&a, &f, 5 * MiB), 0);
	/* the units after it were free: still one extent */
	assert_int_equal(f.simple.nextents, 1);
	assert_int_equal(f.simple.se[0].len, 6 * MiB);
	assert_int_equal(a.used, 5 + 3);
	/* covered already: nothing changes */
	assert_int_equal(famfs_alloc_grow(&a, &f, 6 * MiB), 0);
	assert_int_equal(a.used, 5 + 3);
	/* another file right after it: a new extent of as much again */
	assert_int_equal(famfs_alloc_mark(&a, 0, 16 * MiB, 2 * MiB), 0);
	assert_int_equal(famfs_alloc_grow(&a, &f, 7 * MiB), 0);
	assert_int_equal(f.simple.nextents, 2);
	assert_int_equal(f.simple.se[1].offset, 18 * MiB);
	assert_int_equal(f.simple.se[1].len, 6 * MiB);
	assert_int_equal(a.used, 5 + 1 + 3 + 3);
	/* logged at 7 MiB: the units past it go back */
	famfs_alloc_trim(&a, &f, 7 * MiB);
	assert_int_equal(f.simple.nextents, 2);
	assert_int_equal(f.simple.se[1].len, 2 * MiB);
	assert_int_equal(a.used, 5 + 1 + 3 + 1);
	assert_false(famfs_alloc_used(&a, 0, 10));
	/* down to one unit; an extent with nothing left is dropped */
	famfs_alloc_trim(&a, &f, 0);
	assert_int_equal(f.simple.nextents, 1);
	assert_int_equal(f.simple.se[0].len, 2 * MiB);
	assert_int_equal(a.used, 5 + 1 + 1);
	famfs_alloc_free(&a, 0, 10 * MiB, 2 * MiB);
	famfs_alloc_free(&a, 0, 10 * MiB, 2 * MiB); /* twice changes nothing */
	assert_int_equal(a.used, 5 + 1);
	famfs_alloc_release(&a);
}

static void grow_stops_cleanly(void **state)
{
	struct famfs_omf_fmap f = { 0 }, before;
	struct famfs_alloc a;
	uint64_t used;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	/* no room: -ENOSPC and the map as it was */
	assert_int_equal(famfs_alloc_grow(&a, &f, 2 * MiB), 0);
	before = f;
	used = a.used;
	assert_int_equal(famfs_alloc_grow(&a, &f, 300 * MiB), -EFBIG);
	assert_int_equal(famfs_alloc_mark(&a, 0, 12 * MiB, 200 * MiB), 0);
	assert_int_equal(famfs_alloc_grow(&a, &f, 100 * MiB), -ENOSPC);
	assert_memory_equal(&f, &before, sizeof(f));
	assert_int_equal(a.used, used + 100);
	famfs_alloc_release(&a);

	/* every other unit taken: one extent a unit, then no 17th */
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	for (uint64_t off = 12 * MiB; off < 256 * MiB; off += 4 * MiB)
		famfs_alloc_mark(&a, 0, off, 2 * MiB);
	memset(&f, 0, sizeof(f));
	for (int i = 1; i <= 16; i++)
		assert_int_equal(famfs_alloc_grow(&a, &f, i * 2 * MiB), 0);
	assert_int_equal(f.simple.nextents, 16);
	assert_int_equal(famfs_alloc_grow(&a, &f, 34 * MiB), -EFBIG);
	assert_int_equal(f.simple.nextents, 16);
	famfs_alloc_release(&a);
}

/*
 * Marking works on whole units: a range that starts or ends inside a
 * unit takes all of it, and a device the log has not added is all in
 * use, so any extent on it counts as an overlap.
 */
static void marks_round_out_to_units_and_unknown_devices_overlap(void **state)
{
	struct famfs_alloc a;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	assert_int_equal(famfs_alloc_mark(&a, 0, 12 * MiB, 1), 0);
	assert_true(famfs_alloc_used(&a, 0, 6));
	assert_int_equal(a.used, 5 + 1);
	/* 13 MiB .. 15 MiB: the second half of unit 6 and first of unit 7 */
	assert_int_equal(famfs_alloc_mark(&a, 0, 13 * MiB, 2 * MiB), 1);
	assert_true(famfs_alloc_used(&a, 0, 7));
	assert_false(famfs_alloc_used(&a, 0, 8));
	assert_int_equal(a.used, 5 + 2);
	assert_int_equal(a.overlaps, 1);
	/* device 1 was never added: both units overlap, nothing is marked */
	assert_int_equal(famfs_alloc_mark(&a, 1, 10 * MiB, 4 * MiB), 2);
	assert_int_equal(a.overlaps, 3);
	assert_int_equal(a.used, 5 + 2);
	assert_true(famfs_alloc_used(&a, 1, 0));
	famfs_alloc_release(&a);
}

/* Two devices with as many free units: the lower index is used first. */
static void equal_devices_fill_from_the_first(void **state)
{
	struct famfs_geometry two = g;
	struct famfs_alloc a;
	struct famfs_omf_fmap f;

	(void)state;
	two.ndevs = 2;
	two.dev[0].size = g.dev_size;
	/* 123 free units each: 128 - 5 on the primary, 124 - 1 here */
	two.dev[1].size = g.dev_size - 8 * MiB;
	memset(two.dev[1].uuid, 0x42, FAMFS_UUID_LEN);
	assert_int_equal(famfs_alloc_init(&a, &two), 0);
	assert_int_equal(a.dev[0].nunits - a.dev[0].used,
			 a.dev[1].nunits - a.dev[1].used);
	assert_int_equal(famfs_alloc_contig(&a, 1, &f), 0);
	assert_int_equal(f.simple.se[0].devindex, 0);
	assert_int_equal(f.simple.se[0].offset, 10 * MiB);
	/* now the second has more free: it takes the next file */
	assert_int_equal(famfs_alloc_contig(&a, 1, &f), 0);
	assert_int_equal(f.simple.se[0].devindex, 1);
	assert_int_equal(f.simple.se[0].offset, 2 * MiB);
	famfs_alloc_release(&a);
}

/*
 * A device missing on this host takes nothing new, however free it is,
 * and its space is not free to have: growing, strips and free units
 * alike. Back, it takes files again.
 */
static void a_missing_device_takes_nothing_new(void **state)
{
	struct famfs_interleave il = { 0, 2, 2 * MiB };
	struct famfs_geometry two = g;
	struct famfs_alloc a;
	struct famfs_omf_fmap f;
	uint64_t free0;

	(void)state;
	two.ndevs = 2;
	two.dev[0].size = g.dev_size;
	two.dev[1].size = 4 * g.dev_size;
	memset(two.dev[1].uuid, 0x42, FAMFS_UUID_LEN);
	assert_int_equal(famfs_alloc_init(&a, &two), 0);
	free0 = a.dev[0].nunits - a.dev[0].used;
	famfs_alloc_set_absent(&a, 1, true);
	assert_int_equal(famfs_alloc_free_units(&a), free0);
	assert_int_equal(famfs_alloc_contig(&a, 1, &f), 0);
	assert_int_equal(f.simple.se[0].devindex, 0);
	memset(&f, 0, sizeof(f));
	assert_int_equal(famfs_alloc_grow(&a, &f, 8 * MiB), 0);
	assert_int_equal(f.simple.se[0].devindex, 0);
	/* two strips need two devices */
	assert_int_equal(famfs_alloc_interleaved(&a, 4 * MiB, &il, &f),
			 -ENOSPC);
	assert_int_equal(famfs_alloc_contig(&a, free0 * 2 * MiB, &f),
			 -ENOSPC);
	assert_non_null(strstr(famfs_errmsg(), "devices missing on this host"));
	famfs_alloc_set_absent(&a, 1, false);
	assert_int_equal(famfs_alloc_contig(&a, 1, &f), 0);
	assert_int_equal(f.simple.se[0].devindex, 1);
	famfs_alloc_release(&a);
}

/*
 * Consecutive interleaved files start their strips in different buckets,
 * so that small files do not all land on the first memory devices.
 */
static void interleaved_files_rotate_their_first_bucket(void **state)
{
	struct famfs_interleave il = { 8, 4, 4 * MiB };
	struct famfs_alloc a;
	struct famfs_omf_fmap f;
	uint64_t bucket = 256 * MiB / 8, first;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	assert_int_equal(famfs_alloc_interleaved(&a, 4 * MiB, &il, &f), 0);
	first = f.interleave.ie[0].strips[0].offset / bucket;
	assert_int_equal(famfs_alloc_contig(&a, 1, &f), 0);
	assert_int_equal(famfs_alloc_interleaved(&a, 4 * MiB, &il, &f), 0);
	assert_int_not_equal(f.interleave.ie[0].strips[0].offset / bucket,
			     first);
	famfs_alloc_release(&a);
}

/* A strip longer than a bucket: refused up front, saying so. */
static void a_strip_larger_than_a_bucket_is_refused(void **state)
{
	struct famfs_interleave il = { 8, 4, 2 * MiB };
	struct famfs_alloc a;
	struct famfs_omf_fmap f;
	uint64_t used;

	(void)state;
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	used = a.used;
	/* 4 strips of 40 MiB; the buckets are 32 MiB */
	assert_int_equal(famfs_alloc_interleaved(&a, 160 * MiB, &il, &f),
			 -ENOSPC);
	assert_non_null(strstr(famfs_errmsg(), "does not fit in buckets of 33554432 bytes"));
	assert_int_equal(a.used, used);
	famfs_alloc_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_fit_skips_used_space),
		cmocka_unit_test(grow_in_place_then_as_much_again),
		cmocka_unit_test(grow_stops_cleanly),
		cmocka_unit_test(never_hands_out_a_unit_twice),
		cmocka_unit_test(strips_come_from_distinct_buckets),
		cmocka_unit_test(failed_interleave_gives_space_back),
		cmocka_unit_test(bad_interleave_params),
		cmocka_unit_test(buckets_of_a_gib_on_big_devices),
		cmocka_unit_test(marks_round_out_to_units_and_unknown_devices_overlap),
		cmocka_unit_test(equal_devices_fill_from_the_first),
		cmocka_unit_test(a_missing_device_takes_nothing_new),
		cmocka_unit_test(interleaved_files_rotate_their_first_bucket),
		cmocka_unit_test(a_strip_larger_than_a_bucket_is_refused),
	};

	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
