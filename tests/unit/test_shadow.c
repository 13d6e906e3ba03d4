// SPDX-License-Identifier: GPL-2.0-or-later
/* Upstream's shadow YAML: what we write reads back as the same entry. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

static void round_trip(const struct famfs_omf_file *in)
{
	struct famfs_omf_file out;
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(famfs_shadow_emit(in, f), 0);
	rewind(f);
	assert_int_equal(famfs_shadow_parse(f, &out), 0);
	fclose(f);
	assert_string_equal(out.relpath, in->relpath);
	assert_int_equal(out.size, in->size);
	assert_int_equal(out.mode, in->mode);
	assert_int_equal(out.uid, in->uid);
	assert_int_equal(out.gid, in->gid);
	assert_int_equal(out.flags, in->flags);
	assert_memory_equal(&out.fmap, &in->fmap, sizeof(in->fmap));
}

static void simple_file_round_trips(void **state)
{
	struct famfs_omf_file fe = {.size = 3 * MiB,
				    .flags = 2,
				    .uid = 7,
				    .gid = 8,
				    .mode = 0100640};

	(void)state;
	strcpy(fe.relpath, "dir/a file: with \"quotes\"");
	fe.fmap.ext_type = FAMFS_EXT_SIMPLE;
	fe.fmap.simple.nextents = 2;
	fe.fmap.simple.se[0] = (struct famfs_omf_extent){0, 10 * MiB, 2 * MiB};
	fe.fmap.simple.se[1] = (struct famfs_omf_extent){0, 20 * MiB, 2 * MiB};
	round_trip(&fe);
}

static void interleaved_file_round_trips(void **state)
{
	struct famfs_omf_file fe = {.size = 8 * MiB, .mode = 0644};
	struct famfs_omf_iext *ie = &fe.fmap.interleave.ie[0];

	(void)state;
	strcpy(fe.relpath, "il");
	fe.fmap.ext_type = FAMFS_EXT_INTERLEAVE;
	fe.fmap.interleave.niext = 1;
	ie->nstrips = 2;
	ie->chunk_size = 2 * MiB;
	ie->strips[0] = (struct famfs_omf_extent){0, 64 * MiB, 4 * MiB};
	ie->strips[1] = (struct famfs_omf_extent){0, 128 * MiB, 4 * MiB};
	round_trip(&fe);
}

static void damaged_yaml_is_refused(void **state)
{
	static const char *const bad[] = {
		"not: [yaml",
		"---\nfile:\n  path: a\n",
		"---\nfile:\n  path: a\n  size: x\n  flags: 0\n  mode: 0644\n"
		"  uid: 0\n  gid: 0\n  nextents: 0\n  simple_ext_list: []\n",
		"---\nfile:\n  path: a\n  size: 1\n  flags: 0\n  mode: 0644\n"
		"  uid: 0\n  gid: 0\n  nextents: 2\n  simple_ext_list: []\n",
	};
	struct famfs_omf_file out;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");

		assert_non_null(f);
		assert_int_equal(famfs_shadow_parse(f, &out), -EINVAL);
		fclose(f);
	}
}

/* Nested brackets cost libyaml minutes; a tree file is never this big. */
static void hostile_yaml_is_bounded(void **state)
{
	size_t n = 200 * 1024;
	char *buf = malloc(n);
	struct famfs_omf_file out;
	FILE *f;

	(void)state;
	assert_non_null(buf);
	memset(buf, '[', n);
	f = fmemopen(buf, n, "r");
	assert_non_null(f);
	assert_int_equal(famfs_shadow_parse(f, &out), -EFBIG);
	assert_non_null(strstr(famfs_errmsg(), "larger than 65536 bytes"));
	fclose(f);
	f = fmemopen(buf, 60000, "r");
	assert_non_null(f);
	assert_int_equal(famfs_shadow_parse(f, &out), -EINVAL);
	assert_non_null(strstr(famfs_errmsg(), "nested deeper than 16"));
	fclose(f);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(simple_file_round_trips),
		cmocka_unit_test(interleaved_file_round_trips),
		cmocka_unit_test(damaged_yaml_is_refused),
		cmocka_unit_test(hostile_yaml_is_bounded),
	};

	return cmocka_run_group_tests_name("shadow", tests, NULL, NULL);
}
