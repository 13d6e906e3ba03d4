// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A famfs over several devices: the rules of ADD_DAXDEV entries, secondary
 * superblocks, finding devices by uuid, allocation and data across them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "namespace.h"
#include "writer.h"

static struct famfs_geometry one_device(void)
{
	struct famfs_geometry g = { .dev_size = 256 * MiB,
				    .alloc_unit = 2 * MiB,
				    .data_start = 10 * MiB,
				    .ndevs = 1 };

	g.dev[0].size = g.dev_size;
	memset(g.dev[0].uuid, 1, FAMFS_UUID_LEN);
	return g;
}

static struct famfs_omf_add_daxdev add(uint32_t index, uint8_t fill,
				       uint64_t size)
{
	struct famfs_omf_add_daxdev d = { .size = size, .index = index };

	memset(d.uuid, fill, FAMFS_UUID_LEN);
	return d;
}

static void added_devices_are_dense_unique_and_sane(void **state)
{
	struct famfs_geometry g = one_device();
	struct famfs_omf_add_daxdev d;

	(void)state;
	d = add(1, 2, 64 * MiB);
	assert_int_equal(famfs_geo_check_add(&g, &d), 0);
	famfs_geo_add(&g, &d);
	assert_int_equal(g.ndevs, 2);
	assert_int_equal(famfs_geo_dev_size(&g, 1), 64 * MiB);
	assert_int_equal(famfs_geo_data_start(&g, 1), FAMFS_SB_REGION);
	assert_int_equal(famfs_geo_data_start(&g, 0), 10 * MiB);
	assert_int_equal(famfs_geo_dev_size(&g, 2), 0);
	/* the same entry again: a second walk of the same log */
	assert_int_equal(famfs_geo_check_add(&g, &d), 0);
	famfs_geo_add(&g, &d);
	assert_int_equal(g.ndevs, 2);

	d = add(0, 3, 64 * MiB); /* the primary's index */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(3, 3, 64 * MiB); /* skips index 2 */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "before index 2"));
	d = add(2, 2, 64 * MiB); /* device 1's uuid */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(2, 1, 64 * MiB); /* the primary's uuid */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(2, 0, 64 * MiB); /* null uuid */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(1, 3, 64 * MiB); /* index 1 again, another device */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(1, 2, 32 * MiB); /* index 1 again, another size */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(2, 3, 2 * MiB); /* no room past its superblock */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(2, 3, FAMFS_MAX_DEV_SIZE + 1); /* sums could overflow */
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	d = add(FAMFS_MAX_DEVS, 3, 64 * MiB);
	assert_int_equal(famfs_geo_check_add(&g, &d), -EUCLEAN);
	assert_int_equal(g.ndevs, 2); /* none of those was added */
}

static void extents_must_be_on_a_device_of_the_log(void **state)
{
	struct famfs_geometry g = one_device();
	struct famfs_omf_add_daxdev d = add(1, 2, 64 * MiB);
	struct famfs_omf_fmap f = { .ext_type = FAMFS_EXT_SIMPLE };

	(void)state;
	f.simple.nextents = 1;
	f.simple.se[0] = (struct famfs_omf_extent){ 1, 2 * MiB, 4 * MiB };
	assert_int_equal(famfs_fmap_check(&f, 4 * MiB, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "device index 1"));
	famfs_geo_add(&g, &d);
	assert_int_equal(famfs_fmap_check(&f, 4 * MiB, &g), 0);
	/* device 1 has no log: only its superblock region is reserved */
	f.simple.se[0].offset = 0;
	assert_int_equal(famfs_fmap_check(&f, 4 * MiB, &g), -EUCLEAN);
	/* its own size bounds it, not the primary's */
	f.simple.se[0] = (struct famfs_omf_extent){ 1, 62 * MiB, 4 * MiB };
	assert_int_equal(famfs_fmap_check(&f, 4 * MiB, &g), -EUCLEAN);
	f.simple.se[0] = (struct famfs_omf_extent){ 1, 60 * MiB, 4 * MiB };
	assert_int_equal(famfs_fmap_check(&f, 4 * MiB, &g), 0);
}

static void allocation_goes_where_the_space_is(void **state)
{
	struct famfs_geometry g = one_device();
	struct famfs_omf_add_daxdev d1 = add(1, 2, 512 * MiB);
	struct famfs_omf_add_daxdev d2 = add(2, 3, 64 * MiB);
	struct famfs_omf_fmap f, big;
	struct famfs_alloc a;

	(void)state;
	famfs_geo_add(&g, &d1);
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	/* walks add what later entries add */
	assert_int_equal(famfs_alloc_add_dev(&a, &d2), 0);
	assert_int_equal(famfs_alloc_add_dev(&a, &d2), 0); /* known: no-op */
	assert_int_equal(a.ndevs, 3);
	assert_int_equal(a.nunits, 128 + 256 + 32);
	assert_int_equal(a.used, 5 + 1 + 1);

	/* the device with most free space first */
	assert_int_equal(famfs_alloc_contig(&a, 100 * MiB, &f), 0);
	assert_int_equal(f.simple.se[0].devindex, 1);
	assert_int_equal(f.simple.se[0].offset, 2 * MiB);
	/* 410 MiB left on 1, 246 on 0: still 1; then 0 once 1 has less */
	assert_int_equal(famfs_alloc_contig(&a, 200 * MiB, &big), 0);
	assert_int_equal(big.simple.se[0].devindex, 1);
	assert_int_equal(famfs_alloc_contig(&a, 2 * MiB, &f), 0);
	assert_int_equal(f.simple.se[0].devindex, 0);
	assert_int_equal(f.simple.se[0].offset, 10 * MiB);
	/* too large for any one device, yet it fits in all of them */
	assert_int_equal(famfs_alloc_contig(&a, 300 * MiB, &f), -ENOSPC);
	assert_non_null(strstr(famfs_errmsg(), "any device"));

	/* a growing file spills over to another device */
	memset(&f, 0, sizeof(f));
	assert_int_equal(famfs_alloc_grow(&a, &f, 240 * MiB), 0);
	assert_int_equal(f.simple.se[0].devindex, 0);
	assert_int_equal(famfs_alloc_grow(&a, &f, 290 * MiB), 0);
	assert_int_equal(f.simple.nextents, 2);
	assert_int_equal(f.simple.se[1].devindex, 1);
	/* trimming gives each extent back to its own device */
	famfs_alloc_trim(&a, &f, 1);
	assert_int_equal(f.simple.nextents, 1);
	assert_int_equal(a.dev[1].used, 1 + 50 + 100);
	assert_false(famfs_alloc_used(&a, 1, 200));
	assert_true(famfs_alloc_used(&a, 0, 10 / 2));
	/* a unit of a device the map does not have counts as used */
	assert_true(famfs_alloc_used(&a, 7, 1));
	assert_int_equal(famfs_alloc_mark(&a, 7, 0, 4 * MiB), 2);
	famfs_alloc_release(&a);
}

/* The same offsets on two devices are two ranges; on one, an overlap. */
static void overlaps_are_per_device(void **state)
{
	struct famfs_geometry g = one_device();
	struct famfs_omf_add_daxdev d1 = add(1, 2, 256 * MiB);
	struct famfs_omf_fmap f = { .ext_type = FAMFS_EXT_SIMPLE };
	struct famfs_alloc a;

	(void)state;
	famfs_geo_add(&g, &d1);
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	f.simple.nextents = 1;
	f.simple.se[0] = (struct famfs_omf_extent){ 0, 20 * MiB, 4 * MiB };
	assert_int_equal(famfs_alloc_mark_fmap(&a, &f), 0);
	f.simple.se[0].devindex = 1;
	assert_int_equal(famfs_alloc_mark_fmap(&a, &f), 0);
	assert_int_equal(famfs_alloc_mark_fmap(&a, &f), 2);
	/* a secondary's superblock is its own, not the primary's log */
	f.simple.se[0] = (struct famfs_omf_extent){ 1, 0, 2 * MiB };
	assert_int_equal(famfs_alloc_mark_fmap(&a, &f), 1);
	f.simple.se[0] = (struct famfs_omf_extent){ 1, 2 * MiB, 2 * MiB };
	assert_int_equal(famfs_alloc_mark_fmap(&a, &f), 0);
	assert_int_equal(a.overlaps, 3);
	famfs_alloc_release(&a);
}

static void strips_go_one_per_device(void **state)
{
	struct famfs_geometry g = one_device();
	struct famfs_omf_add_daxdev d1 = add(1, 2, 128 * MiB);
	struct famfs_omf_add_daxdev d2 = add(2, 3, 128 * MiB);
	struct famfs_interleave il = { .nbuckets = 1, .nstrips = 3,
				       .chunk_size = 2 * MiB };
	struct famfs_omf_fmap f;
	struct famfs_alloc a;
	bool seen[3] = { false };

	(void)state;
	famfs_geo_add(&g, &d1);
	famfs_geo_add(&g, &d2);
	/* buckets are for one device: with several, any count will do */
	assert_int_equal(famfs_interleave_check(&il, &g), 0);
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	assert_int_equal(famfs_alloc_interleaved(&a, 30 * MiB, &il, &f), 0);
	assert_int_equal(famfs_fmap_check(&f, 30 * MiB, &g), 0);
	for (int s = 0; s < 3; s++) {
		uint64_t di = f.interleave.ie[0].strips[s].devindex;

		assert_true(di < 3);
		assert_false(seen[di]);
		seen[di] = true;
		assert_int_equal(f.interleave.ie[0].strips[s].len, 10 * MiB);
	}
	/* more strips than devices: they take turns */
	il.nstrips = 6;
	assert_int_equal(famfs_alloc_interleaved(&a, 12 * MiB, &il, &f), 0);
	assert_int_equal(famfs_fmap_check(&f, 12 * MiB, &g), 0);
	/* no room for a strip: nothing is kept */
	uint64_t used = a.used;

	il.nstrips = 3;
	assert_int_equal(famfs_alloc_interleaved(&a, 3 * 120 * MiB, &il, &f),
			 -ENOSPC);
	assert_int_equal(a.used, used);
	famfs_alloc_release(&a);
}

/* A primary and two added image files, all in @s->dir. */
static void make_three(struct scratch *s, struct famfs_dev *dev,
		       char paths[2][160])
{
	uint32_t index;

	scratch_mkfs(s, 128 * MiB);
	for (int i = 0; i < 2; i++) {
		snprintf(paths[i], 160, "%s/second%d", s->dir, i);
		sh("truncate -s %llu %s", (unsigned long long)(64 << i) * MiB,
		   paths[i]);
	}
	assert_int_equal(famfs_dev_open_fs(s->image, FAMFS_OPEN_RW, dev), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(famfs_devadd(dev, paths[i], false, &index), 0);
		assert_int_equal(index, (uint32_t)i + 1);
	}
}

static void devadd_writes_a_secondary_and_an_entry(void **state)
{
	struct famfs_dev dev, sec;
	struct famfs_members res;
	struct famfs_geometry g;
	struct famfs_walk walk;
	char paths[2][160], found[4096], hard[200];
	struct scratch s;
	uint32_t index;

	(void)state;
	make_three(&s, &dev, paths);
	assert_int_equal(famfs_dev_log_walk(&dev, NULL, NULL, &walk), 0);
	assert_int_equal(walk.committed, 2);
	famfs_dev_geometry(&dev, &g);
	assert_int_equal(g.ndevs, 3);
	assert_int_equal(g.dev[2].size, 128 * MiB);

	/* the secondary: this famfs's uuid, no log, refused as a primary */
	assert_int_equal(famfs_dev_open(paths[0], 0, &sec), 0);
	assert_true(famfs_sb_is_secondary(sec.sb));
	assert_memory_equal(sec.sb->fs_uuid, dev.sb->fs_uuid, FAMFS_UUID_LEN);
	assert_memory_equal(sec.sb->dev_uuid, g.dev[1].uuid, FAMFS_UUID_LEN);
	assert_null(sec.log);
	assert_int_equal(famfs_sb_check(sec.sb, sec.size), -EMEDIUMTYPE);
	assert_int_equal(famfs_sb_check_secondary(sec.sb, sec.size, dev.sb,
						  &g.dev[1]), 0);
	/* as some other device, or truncated, it is not */
	assert_int_equal(famfs_sb_check_secondary(sec.sb, sec.size, dev.sb,
						  &g.dev[2]), -EUCLEAN);
	assert_int_equal(famfs_sb_check_secondary(sec.sb, 32 * MiB, dev.sb,
						  &g.dev[1]), -EUCLEAN);
	/* as a member of any famfs, of this one, or of another one */
	assert_int_equal(famfs_sb_check_member(sec.sb, NULL, NULL), 0);
	assert_int_equal(famfs_sb_check_member(sec.sb, dev.sb->fs_uuid,
					       g.dev[1].uuid), 0);
	assert_int_equal(famfs_sb_check_member(sec.sb, g.dev[1].uuid, NULL),
			 -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "belongs to famfs"));
	assert_int_equal(famfs_sb_check_member(sec.sb, NULL, g.dev[2].uuid),
			 -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "device uuid"));
	/* the primary is no member */
	assert_int_equal(famfs_sb_check_member(dev.sb, NULL, NULL), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "not a secondary"));
	famfs_dev_close(&sec);
	/* a secondary with another allocation unit than its primary's */
	assert_int_equal(famfs_dev_open(paths[0], FAMFS_OPEN_RW, &sec), 0);
	sec.sb->alloc_unit = 4096;
	sec.sb->crc = famfs_sb_crc(sec.sb);
	assert_int_equal(famfs_sb_check_secondary(sec.sb, sec.size, dev.sb,
						  &g.dev[1]), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "allocation unit"));
	sec.sb->alloc_unit = dev.sb->alloc_unit;
	sec.sb->crc = famfs_sb_crc(sec.sb);
	/* the flag after the CRC must agree with the missing log */
	sec.sb->flags = FAMFS_SB_PRIMARY;
	assert_false(famfs_sb_is_secondary(sec.sb));
	sec.sb->flags = FAMFS_SB_SECONDARY;
	famfs_dev_close(&sec);

	/* by uuid, whatever the name; the map says where it was */
	assert_int_equal(famfs_resolve_dev(dev.sb->fs_uuid, g.dev[2].uuid,
					   found, sizeof(found)), 0);
	assert_string_equal(found, paths[1]);
	assert_int_equal(famfs_dev_open_members(&dev, FAMFS_OPEN_RW, &res), 0);
	assert_int_equal(res.ndevs, 3);
	assert_int_equal(res.missing, 0);
	assert_non_null(famfs_dev_member(&dev, 2));
	assert_null(famfs_dev_member(&dev, 3));

	/* never a device of this famfs again, by any name, even forced */
	assert_int_equal(famfs_devadd(&dev, paths[0], true, &index), -EEXIST);
	assert_int_equal(famfs_devadd(&dev, s.image, true, &index), -EEXIST);
	snprintf(hard, sizeof(hard), "%s/hardlink", s.dir);
	assert_int_equal(link(s.image, hard), 0);
	assert_int_equal(famfs_devadd(&dev, hard, true, &index), -EEXIST);
	assert_int_equal(famfs_dev_log_walk(&dev, NULL, NULL, &walk), 0);
	assert_int_equal(walk.committed, 2);
	scratch_close(&s, &dev);
}

static void a_copied_device_is_never_taken(void **state)
{
	char paths[2][160], found[4096], copy[200];
	char *one[1] = { copy };
	struct famfs_geometry g;
	struct famfs_dev dev;
	struct scratch s;
	unsigned int n;

	(void)state;
	make_three(&s, &dev, paths);
	famfs_dev_geometry(&dev, &g);
	/* an admin points the map at a copy of device 1 */
	sh("cp %s %s/copy && chmod 644 %s/copy", paths[0], s.dir, s.dir);
	snprintf(copy, sizeof(copy), "%s/copy", s.dir);
	assert_int_equal(famfs_devmap_refresh(one, 1, &n), 0);
	assert_int_equal(n, 3); /* the two added, and the copy */
	assert_int_equal(famfs_resolve_dev(dev.sb->fs_uuid, g.dev[1].uuid,
					   found, sizeof(found)), -EEXIST);
	assert_non_null(strstr(famfs_errmsg(), "two devices"));
	scratch_close(&s, &dev);
}

static void data_spans_devices_and_a_missing_one_is_eio(void **state)
{
	struct famfs_omf_fmap f = { .ext_type = FAMFS_EXT_SIMPLE };
	struct famfs_members res;
	struct famfs_dev dev;
	char paths[2][160], moved[200];
	uint8_t out[8 * 1024], in[8 * 1024];
	struct scratch s;

	(void)state;
	make_three(&s, &dev, paths);
	assert_int_equal(famfs_dev_open_members(&dev, FAMFS_OPEN_RW, &res), 0);
	/* 4 KiB at the end of a unit on device 2, 4 KiB on device 0 */
	f.simple.nextents = 2;
	f.simple.se[0] = (struct famfs_omf_extent){ 2, 4 * MiB, 2 * MiB };
	f.simple.se[1] = (struct famfs_omf_extent){ 0, 20 * MiB, 2 * MiB };
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(famfs_data_write(&dev, &f, 4 * MiB, 2 * MiB - 4096,
					  out, sizeof(out)),
			 (ssize_t)sizeof(out));
	assert_int_equal(famfs_data_read(&dev, &f, 4 * MiB, 2 * MiB - 4096,
					 in, sizeof(in)),
			 (ssize_t)sizeof(in));
	assert_memory_equal(in, out, sizeof(in));
	/* the bytes are on device 2, where the map says */
	assert_memory_equal(famfs_dev_member(&dev, 2)->base + 6 * MiB - 4096,
			    out, 4096);
	assert_memory_equal(dev.base + 20 * MiB, out + 4096, 4096);
	/* devices opened read-only take no write, whatever the primary */
	famfs_dev_close_members(&dev);
	assert_int_equal(famfs_dev_open_members(&dev, 0, &res), 0);
	assert_int_equal(famfs_data_write(&dev, &f, 4 * MiB, 0, out, 16),
			 -EROFS);
	assert_int_equal(famfs_data_write(&dev, &f, 4 * MiB, 2 * MiB, out, 16),
			 16);
	famfs_dev_close(&dev);

	/* device 2 gone: its bytes fail, device 0's are served */
	snprintf(moved, sizeof(moved), "%s/moved", s.dir);
	assert_int_equal(rename(paths[1], moved), 0);
	assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), 0);
	assert_int_equal(famfs_dev_open_members(&dev, 0, &res), -ENODEV);
	assert_int_equal(res.missing, 1);
	assert_int_equal(res.first_missing, 2);
	assert_non_null(strstr(res.why, "device 2"));
	assert_int_equal(famfs_data_read(&dev, &f, 4 * MiB, 0, in, 16), -EIO);
	assert_non_null(strstr(famfs_errmsg(), "uuid"));
	assert_int_equal(famfs_data_read(&dev, &f, 4 * MiB, 2 * MiB, in, 16),
			 16);
	scratch_close(&s, &dev);
}

static void appends_are_checked_against_the_added_devices(void **state)
{
	struct famfs_omf_entry e;
	struct famfs_dev dev;
	char paths[2][160];
	struct scratch s;

	(void)state;
	make_three(&s, &dev, paths);
	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_FILE;
	strcpy(e.file.relpath, "f");
	e.file.mode = 0644;
	e.file.size = 2 * MiB;
	e.file.fmap.ext_type = FAMFS_EXT_SIMPLE;
	e.file.fmap.simple.nextents = 1;
	e.file.fmap.simple.se[0] = (struct famfs_omf_extent){ 3, 2 * MiB,
							     2 * MiB };
	assert_int_equal(famfs_dev_lock(&dev), 0);
	assert_int_equal(famfs_log_append(&dev, &e), -EUCLEAN);
	e.file.fmap.simple.se[0].devindex = 2;
	assert_int_equal(famfs_log_append(&dev, &e), 0);
	famfs_dev_unlock(&dev);
	scratch_close(&s, &dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(added_devices_are_dense_unique_and_sane),
		cmocka_unit_test(extents_must_be_on_a_device_of_the_log),
		cmocka_unit_test(allocation_goes_where_the_space_is),
		cmocka_unit_test(overlaps_are_per_device),
		cmocka_unit_test(strips_go_one_per_device),
		cmocka_unit_test(devadd_writes_a_secondary_and_an_entry),
		cmocka_unit_test(a_copied_device_is_never_taken),
		cmocka_unit_test(data_spans_devices_and_a_missing_one_is_eio),
		cmocka_unit_test(appends_are_checked_against_the_added_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
