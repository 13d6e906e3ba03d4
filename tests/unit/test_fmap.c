// SPDX-License-Identifier: GPL-2.0-or-later
/* File maps: validation and offset translation. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

static const struct famfs_geometry g = {
	.dev_size = 1024 * MiB,
	.alloc_unit = 2 * MiB,
	.data_start = 10 * MiB,
};

static struct famfs_omf_fmap simple2(void)
{
	struct famfs_omf_fmap f;

	memset(&f, 0, sizeof(f));
	f.ext_type = FAMFS_EXT_SIMPLE;
	f.simple.nextents = 2;
	f.simple.se[0] = (struct famfs_omf_extent){ 0, 100 * MiB, 4 * MiB };
	f.simple.se[1] = (struct famfs_omf_extent){ 0, 20 * MiB, 2 * MiB };
	return f;
}

static struct famfs_omf_fmap striped(void)
{
	struct famfs_omf_fmap f;
	struct famfs_omf_iext *ie = &f.interleave.ie[0];

	memset(&f, 0, sizeof(f));
	f.ext_type = FAMFS_EXT_INTERLEAVE;
	f.interleave.niext = 1;
	ie->nstrips = 3;
	ie->chunk_size = 2 * MiB;
	for (int i = 0; i < 3; i++)
		ie->strips[i] = (struct famfs_omf_extent){
			0, (uint64_t)(100 + 100 * i) * MiB, 4 * MiB };
	return f;
}

static void simple_maps_resolve_in_order(void **state)
{
	struct famfs_omf_fmap f = simple2();
	uint64_t di, dev, contig;

	(void)state;
	assert_int_equal(famfs_fmap_check(&f, 6 * MiB, &g), 0);
	assert_int_equal(famfs_fmap_capacity(&f), 6 * MiB);
	assert_int_equal(famfs_fmap_resolve(&f, 0, &di, &dev, &contig), 0);
	assert_int_equal(dev, 100 * MiB);
	assert_int_equal(contig, 4 * MiB);
	assert_int_equal(famfs_fmap_resolve(&f, 4 * MiB + 5, &di, &dev, &contig), 0);
	assert_int_equal(dev, 20 * MiB + 5);
	assert_int_equal(contig, 2 * MiB - 5);
	assert_int_equal(famfs_fmap_resolve(&f, 6 * MiB, &di, &dev, &contig), -ERANGE);
}

static void bad_simple_maps_are_refused(void **state)
{
	struct famfs_omf_fmap f;

	(void)state;
	f = simple2();
	assert_int_equal(famfs_fmap_check(&f, 6 * MiB + 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "less than the file size"));
	f = simple2();
	f.simple.se[1].offset = 21 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "not aligned"));
	f = simple2();
	f.simple.se[0].offset = 2 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "superblock or log"));
	f = simple2();
	f.simple.se[0].offset = 1022 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "past the end"));
	f = simple2();
	f.simple.se[0].len = UINT64_MAX - MiB * 2 + 1; /* wraps */
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = simple2();
	f.simple.nextents = 17;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = simple2();
	f.simple.nextents = 0;
	assert_int_equal(famfs_fmap_check(&f, 0, &g), -EUCLEAN);
	f = simple2();
	f.simple.se[0].devindex = 1;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = simple2();
	f.ext_type = 7;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
}

/* A superblock read as zeros (a device gone under a daemon) */
static void a_geometry_of_zeros_is_refused(void **state)
{
	struct famfs_geometry none = { 0 };
	struct famfs_omf_fmap f = simple2();
	struct famfs_alloc a;

	(void)state;
	assert_int_equal(famfs_fmap_check(&f, 6 * MiB, &none), -EIO);
	f = striped();
	assert_int_equal(famfs_fmap_check(&f, 6 * MiB, &none), -EIO);
	assert_int_equal(famfs_alloc_init(&a, &none), -EIO);
}

static void interleave_follows_the_formula(void **state)
{
	struct famfs_omf_fmap f = striped();
	uint64_t di, dev, contig, off;

	(void)state;
	assert_int_equal(famfs_fmap_check(&f, 12 * MiB, &g), 0);
	assert_int_equal(famfs_fmap_capacity(&f), 12 * MiB);
	/* every byte offset, at chunk granularity plus a bit */
	for (off = 0; off < 12 * MiB; off += MiB + 3) {
		uint64_t chunk = off / (2 * MiB), strip = chunk % 3;
		uint64_t stripe = chunk / 3;
		uint64_t want = (100 + 100 * strip) * MiB + stripe * 2 * MiB +
				off % (2 * MiB);

		assert_int_equal(famfs_fmap_resolve(&f, off, &di, &dev, &contig), 0);
		assert_int_equal(dev, want);
		assert_int_equal(contig, 2 * MiB - off % (2 * MiB));
	}
	assert_int_equal(famfs_fmap_resolve(&f, 12 * MiB, &di, &dev, &contig), -ERANGE);
}

static void bad_interleaves_are_refused(void **state)
{
	struct famfs_omf_fmap f;

	(void)state;
	f = striped();
	f.interleave.ie[0].chunk_size = 3 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = striped();
	f.interleave.ie[0].nstrips = 0;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = striped();
	f.interleave.ie[0].nstrips = 17;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = striped();
	f.interleave.ie[0].strips[2].len = 2 * MiB; /* unequal strips */
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = striped();
	f.interleave.niext = 2;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	f = striped();
	assert_int_equal(famfs_fmap_check(&f, 12 * MiB + 1, &g), -EUCLEAN);
}

/*
 * Extents a hostile log could hold that pass the other checks: an empty
 * extent, a length that is not whole units, a device the log has not
 * added, and strips of equal length that are not whole chunks.
 */
static void extents_need_whole_units_and_a_known_device(void **state)
{
	struct famfs_omf_fmap f;

	(void)state;
	f = simple2();
	f.simple.se[1].len = 0; /* offset fine, nothing mapped */
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "extent 1 is empty"));
	f = simple2();
	f.simple.se[0].len = 3 * MiB; /* aligned start, half a unit more */
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "not aligned"));
	f = simple2();
	f.simple.se[1].devindex = 1; /* the log added no second device */
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "extent 1 is on device index 1"));
	/* the data area starts at data_start exactly: that unit is a file's */
	f = simple2();
	f.simple.se[1].offset = g.data_start;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), 0);
	f.simple.se[1].offset = g.data_start - 2 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	/* the last unit of the device is a file's too; one past is not */
	f = simple2();
	f.simple.se[0].offset = g.dev_size - 4 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), 0);
	f.simple.se[0].offset = g.dev_size - 2 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "past the end"));
	/* 16 extents is the most a map has: exactly 16 are fine */
	f = simple2();
	f.simple.nextents = 16;
	for (int i = 0; i < 16; i++)
		f.simple.se[i] = (struct famfs_omf_extent){
			0, (uint64_t)(20 + 2 * i) * MiB, 2 * MiB };
	assert_int_equal(famfs_fmap_check(&f, 32 * MiB, &g), 0);
	/* equal strips of half a chunk: the formula would map past them */
	f = striped();
	f.interleave.ie[0].chunk_size = 4 * MiB;
	for (int i = 0; i < 3; i++)
		f.interleave.ie[0].strips[i].len = 2 * MiB;
	assert_int_equal(famfs_fmap_check(&f, 1, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "in whole chunks"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(simple_maps_resolve_in_order),
		cmocka_unit_test(bad_simple_maps_are_refused),
		cmocka_unit_test(a_geometry_of_zeros_is_refused),
		cmocka_unit_test(interleave_follows_the_formula),
		cmocka_unit_test(bad_interleaves_are_refused),
		cmocka_unit_test(extents_need_whole_units_and_a_known_device),
	};

	return cmocka_run_group_tests_name("fmap", tests, NULL, NULL);
}
