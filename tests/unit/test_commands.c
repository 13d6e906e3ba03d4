// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs(8)'s mkdir, creat, cp and fsck called through their *_run()
 * functions, without a command line, on scratch images (--device mode).
 * What they logged is read back with libfamfs, not with the commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "commands.h"
#include "helpers.h"
#include "namespace.h"

/* The node at @rel as the log has it now, copied; false if none. */
static bool lookup(const struct scratch *s, const char *rel,
		   struct famfs_node *out)
{
	struct famfs_dev dev;
	struct famfs_walk walk;
	struct famfs_ns ns;
	const struct famfs_node *n;

	assert_int_equal(famfs_dev_open_fs(s->image, 0, &dev), 0);
	assert_int_equal(famfs_ns_load(&dev, &ns, &walk, NULL), 0);
	n = famfs_ns_resolve(&ns, rel);
	if (n)
		*out = *n;
	famfs_ns_free(&ns);
	famfs_dev_close(&dev);
	return n != NULL;
}

/* The bytes of file @rel, read through its fmap on the image. */
static void *read_back(const struct scratch *s, const char *rel,
		       uint64_t *size)
{
	struct cli_file f;
	struct famfs_ns ns;
	struct cli_fs fs;
	void *buf;

	assert_int_equal(cli_fs_open(&fs, s->image, rel, false), 0);
	assert_int_equal(cli_ns_load(&fs, &ns, "test"), 0);
	assert_int_equal(cli_file_open(&f, &fs, &ns, rel, false), 0);
	*size = f.size;
	buf = malloc(f.size);
	assert_non_null(buf);
	assert_int_equal(cli_file_pread(&f, buf, f.size, 0), (ssize_t)f.size);
	cli_file_close(&f);
	famfs_ns_free(&ns);
	cli_fs_close(&fs);
	return buf;
}

static struct mkdir_args mkdir_args(const struct scratch *s, char **dirs,
				    int n)
{
	return (struct mkdir_args){ .device = s->image,
				    .own = { .mode = 0750, .uid = 12,
					     .gid = 34 },
				    .dirs = dirs, .ndirs = n };
}

static void mkdir_makes_parents_only_with_p(void **state)
{
	char *deep[] = { "a/b/c" }, *top[] = { "a" };
	struct famfs_node n;
	struct scratch s;
	struct mkdir_args a;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	a = mkdir_args(&s, deep, 1);
	assert_int_equal(mkdir_run(&a), CLI_FAIL); /* no parent */
	assert_false(lookup(&s, "a", &n));

	a.parents = true;
	assert_int_equal(mkdir_run(&a), CLI_OK);
	assert_true(lookup(&s, "a/b/c", &n));
	assert_true(n.is_dir);
	assert_int_equal(n.mode, 0750);
	assert_int_equal(n.uid, 12);
	assert_int_equal(n.gid, 34);
	assert_true(lookup(&s, "a/b", &n) && n.is_dir);
	/* -p: there already is fine; without -p it is an error */
	assert_int_equal(mkdir_run(&a), CLI_OK);
	a = mkdir_args(&s, top, 1);
	assert_int_equal(mkdir_run(&a), CLI_FAIL);
	scratch_drop(&s);
}

static void mkdir_refuses_files_and_meta_but_goes_on(void **state)
{
	char *dirs[] = { ".meta", "f/g", "ok" };
	struct creat_file cf = { .name = "f", .size = 1 };
	struct creat_args c = { 0 };
	struct famfs_node n;
	struct scratch s;
	struct mkdir_args a;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	c.device = s.image;
	c.own.mode = 0644;
	c.files = &cf;
	c.nfiles = 1;
	assert_int_equal(creat_run(&c), CLI_OK);
	a = mkdir_args(&s, dirs, 3);
	a.parents = true;
	/* the two bad ones fail the command; the good one is still made */
	assert_int_equal(mkdir_run(&a), CLI_FAIL);
	assert_false(lookup(&s, ".meta", &n));
	assert_true(lookup(&s, "f", &n) && !n.is_dir);
	assert_false(lookup(&s, "f/g", &n));
	assert_true(lookup(&s, "ok", &n) && n.is_dir);
	scratch_drop(&s);
}

static struct creat_args creat_args(const struct scratch *s,
				    struct creat_file *files, unsigned int n)
{
	return (struct creat_args){ .device = s->image,
				    .own = { .mode = 0640, .uid = 5,
					     .gid = 6 },
				    .threads = 2, .files = files,
				    .nfiles = n };
}

static void creat_fills_from_the_seed(void **state)
{
	struct creat_file cf[] = {
		{ .name = "p", .size = 3 * MiB + 5, .seed = 99, .fill = true },
		{ .name = "z", .size = 2 * MiB },
	};
	struct creat_args a;
	struct cli_pattern pat;
	struct famfs_node n;
	struct scratch s;
	uint64_t size;
	uint8_t *got, *want;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	a = creat_args(&s, cf, 2);
	assert_int_equal(creat_run(&a), CLI_OK);
	assert_true(lookup(&s, "p", &n));
	assert_int_equal(n.size, 3 * MiB + 5);
	assert_int_equal(n.mode, 0640);
	assert_int_equal(n.uid, 5);
	assert_int_equal(n.gid, 6);

	got = read_back(&s, "p", &size);
	assert_int_equal(size, 3 * MiB + 5);
	want = malloc(size);
	assert_non_null(want);
	cli_pattern_init(&pat, 99);
	cli_pattern_fill(&pat, want, size);
	assert_memory_equal(got, want, size);
	free(got);
	free(want);

	/* not filled: a fresh file of a fresh image reads as zeros */
	got = read_back(&s, "z", &size);
	assert_int_equal(size, 2 * MiB);
	for (uint64_t i = 0; i < size; i++)
		assert_int_equal(got[i], 0);
	free(got);
	scratch_drop(&s);
}

static void creat_again_keeps_a_file_of_the_same_size(void **state)
{
	struct creat_file cf = { .name = "f", .size = 4 * MiB };
	struct creat_args a;
	struct famfs_node n1, n2;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	a = creat_args(&s, &cf, 1);
	assert_int_equal(creat_run(&a), CLI_OK);
	assert_true(lookup(&s, "f", &n1));
	/* same size, or no size: the same file, not a second one */
	assert_int_equal(creat_run(&a), CLI_OK);
	cf.size = 0;
	assert_int_equal(creat_run(&a), CLI_OK);
	assert_true(lookup(&s, "f", &n2));
	assert_int_equal(n1.ino, n2.ino);
	assert_memory_equal(&n1.fmap, &n2.fmap, sizeof(n1.fmap));
	/* another size is an error, and the file stays as it was */
	cf.size = 6 * MiB;
	assert_int_equal(creat_run(&a), CLI_FAIL);
	assert_true(lookup(&s, "f", &n2));
	assert_int_equal(n2.size, 4 * MiB);
	scratch_drop(&s);
}

static void creat_without_size_or_over_a_dir_fails(void **state)
{
	char *dirs[] = { "d" };
	struct creat_file cf[] = {
		{ .name = "nosize" },
		{ .name = "d", .size = MiB },
		{ .name = "good", .size = MiB },
	};
	struct mkdir_args m;
	struct creat_args a;
	struct famfs_node n;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	m = mkdir_args(&s, dirs, 1);
	assert_int_equal(mkdir_run(&m), CLI_OK);
	a = creat_args(&s, cf, 3);
	a.multi = true;
	assert_int_equal(creat_run(&a), CLI_FAIL);
	assert_false(lookup(&s, "nosize", &n));
	assert_true(lookup(&s, "d", &n) && n.is_dir);
	assert_true(lookup(&s, "good", &n) && !n.is_dir);
	scratch_drop(&s);
}

static void creat_stops_at_the_first_no_space(void **state)
{
	struct creat_file cf[] = {
		{ .name = "fits", .size = 20 * MiB },
		{ .name = "huge", .size = 40 * MiB }, /* 34 MiB are free */
		{ .name = "after", .size = MiB },
	};
	struct creat_args a;
	struct famfs_node n;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	a = creat_args(&s, cf, 3);
	assert_int_equal(creat_run(&a), CLI_FAIL);
	assert_true(lookup(&s, "fits", &n));
	assert_false(lookup(&s, "huge", &n));
	/* after ENOSPC the rest is not tried, though it would fit */
	assert_false(lookup(&s, "after", &n));
	scratch_drop(&s);
}

/* A file of @size bytes of @seed's pattern in @dir; its path in @path. */
static void source_file(const char *dir, const char *name, size_t size,
			uint64_t seed, char *path, size_t len)
{
	struct cli_pattern pat;
	uint8_t *buf = malloc(size);
	int fd;

	assert_non_null(buf);
	cli_pattern_init(&pat, seed);
	cli_pattern_fill(&pat, buf, size);
	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
}

static void cp_copies_then_compare_sees_a_change(void **state)
{
	char src[256], *srcs[] = { src };
	struct cp_args a;
	struct famfs_node n;
	struct scratch s;
	uint64_t size;
	uint8_t *got, *want, was;
	int fd;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	source_file(s.dir, "src", 5 * MiB + 3, 7, src, sizeof(src));
	a = (struct cp_args){ .device = s.image, .own = { .mode = 0600 },
			      .threads = 1, .sources = srcs, .nsources = 1,
			      .dest = "copy" };
	assert_int_equal(cp_run(&a), CLI_OK);
	assert_true(lookup(&s, "copy", &n));
	assert_int_equal(n.size, 5 * MiB + 3);

	got = read_back(&s, "copy", &size);
	want = malloc(size);
	assert_non_null(want);
	fd = open(src, O_RDONLY);
	assert_int_equal(read(fd, want, size), (ssize_t)size);
	assert_memory_equal(got, want, size);
	free(got);
	close(fd);
	was = want[4 * MiB];
	free(want);

	a.compare = true;
	assert_int_equal(cp_run(&a), CLI_OK);
	/* one byte of the source changed: compare fails, changes nothing */
	fd = open(src, O_WRONLY);
	assert_int_equal(pwrite(fd, (uint8_t[]){ (uint8_t)~was }, 1, 4 * MiB),
			 1);
	close(fd);
	assert_int_equal(cp_run(&a), CLI_FAIL);
	got = read_back(&s, "copy", &size);
	assert_int_equal(got[4 * MiB], was);
	free(got);
	scratch_drop(&s);
}

static void cp_r_copies_a_tree_into_a_new_dir(void **state)
{
	char tree[256], path[320], *srcs[] = { tree };
	struct cp_args a;
	struct famfs_node n;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	snprintf(tree, sizeof(tree), "%s/tree", s.dir);
	assert_int_equal(mkdir(tree, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub", tree);
	assert_int_equal(mkdir(path, 0700), 0);
	source_file(tree, "one", MiB, 1, path, sizeof(path));
	source_file(tree, "sub/two", 2 * MiB, 2, path, sizeof(path));
	a = (struct cp_args){ .device = s.image, .threads = 2,
			      .sources = srcs, .nsources = 1, .dest = "t" };
	/* without -r a directory is refused */
	assert_int_equal(cp_run(&a), CLI_FAIL);
	assert_false(lookup(&s, "t", &n));
	a.recursive = true;
	assert_int_equal(cp_run(&a), CLI_OK);
	assert_true(lookup(&s, "t", &n) && n.is_dir);
	assert_true(lookup(&s, "t/sub", &n) && n.is_dir);
	assert_int_equal(n.mode, 0700); /* the source's mode */
	assert_true(lookup(&s, "t/one", &n) && n.size == MiB);
	assert_true(lookup(&s, "t/sub/two", &n) && n.size == 2 * MiB);
	a.compare = true;
	assert_int_equal(cp_run(&a), CLI_OK);
	scratch_drop(&s);
}

/* fsck_run()'s code, with its report on stdout sent away. */
static int fsck_quietly(const struct fsck_args *a)
{
	int out = dup(1), null = open("/dev/null", O_WRONLY), rc;

	assert_true(out >= 0 && null >= 0);
	fflush(stdout);
	dup2(null, 1);
	rc = fsck_run(a);
	fflush(stdout);
	dup2(out, 1);
	close(out);
	close(null);
	return rc;
}

static void fsck_finds_and_repairs_a_torn_tail(void **state)
{
	struct creat_file cf[] = { { .name = "a", .size = MiB },
				   { .name = "b", .size = MiB } };
	struct creat_args c;
	struct fsck_args a = { 0 };
	struct famfs_dev dev;
	struct famfs_node n;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	a.path = s.image;
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_CLEAN);
	c = creat_args(&s, cf, 2);
	assert_int_equal(creat_run(&c), CLI_OK);
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_CLEAN);

	/* damage the last entry, as a torn append would */
	assert_int_equal(famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &dev), 0);
	((uint8_t *)famfs_log_entry(dev.log, dev.log->next_index - 1))[30] ^=
		0xff;
	famfs_dev_close(&dev);
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_ERRORS);
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_ERRORS); /* no repair */

	/* --repair says errors were found, and leaves a clean log */
	a.repair = true;
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_ERRORS);
	a.repair = false;
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_CLEAN);
	assert_true(lookup(&s, "a", &n));
	assert_false(lookup(&s, "b", &n));
	scratch_drop(&s);
}

static void fsck_of_no_famfs_and_of_no_file(void **state)
{
	struct fsck_args a = { 0 };
	struct scratch s;

	(void)state;
	scratch_make(&s, 64 * MiB);
	a.path = s.image;
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_NOFS);
	a.path = "/nonexistent/famfs-image";
	assert_int_equal(fsck_quietly(&a), FAMFS_FSCK_FAILED);
	scratch_drop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mkdir_makes_parents_only_with_p),
		cmocka_unit_test(mkdir_refuses_files_and_meta_but_goes_on),
		cmocka_unit_test(creat_fills_from_the_seed),
		cmocka_unit_test(creat_again_keeps_a_file_of_the_same_size),
		cmocka_unit_test(creat_without_size_or_over_a_dir_fails),
		cmocka_unit_test(creat_stops_at_the_first_no_space),
		cmocka_unit_test(cp_copies_then_compare_sees_a_change),
		cmocka_unit_test(cp_r_copies_a_tree_into_a_new_dir),
		cmocka_unit_test(fsck_finds_and_repairs_a_torn_tail),
		cmocka_unit_test(fsck_of_no_famfs_and_of_no_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
