// SPDX-License-Identifier: GPL-2.0-or-later
/* The namespace built from log entries. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "namespace.h"

static struct famfs_omf_entry mkdir_entry(const char *path)
{
	struct famfs_omf_entry e;

	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_MKDIR;
	e.mkdir.mode = 0750;
	e.mkdir.uid = 7;
	strcpy(e.mkdir.relpath, path);
	return e;
}

static struct famfs_omf_entry file_entry(const char *path, uint64_t size)
{
	struct famfs_omf_entry e;

	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_FILE;
	e.file.size = size;
	e.file.mode = 0640;
	strcpy(e.file.relpath, path);
	return e;
}

static void builds_a_tree_with_stable_inodes(void **state)
{
	struct famfs_ns ns;
	struct famfs_omf_entry e;
	struct famfs_node *n;
	char path[128];

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	e = mkdir_entry("a");
	assert_int_equal(famfs_ns_apply(&ns, &e, 0), 0);
	e = mkdir_entry("a/b");
	assert_int_equal(famfs_ns_apply(&ns, &e, 1), 0);
	e = file_entry("a/b/f", 42);
	assert_int_equal(famfs_ns_apply(&ns, &e, 2), 0);
	e = file_entry("g", 1);
	assert_int_equal(famfs_ns_apply(&ns, &e, 3), 0);

	n = famfs_ns_resolve(&ns, "a/b/f");
	assert_non_null(n);
	assert_int_equal(n->ino, 4);
	assert_int_equal(n->size, 42);
	assert_int_equal(n->mode, 0640);
	assert_false(n->is_dir);
	assert_ptr_equal(famfs_ns_get(&ns, 4), n);
	assert_ptr_equal(famfs_ns_get(&ns, FAMFS_ROOT_INO), &ns.root);
	assert_null(famfs_ns_get(&ns, 99));
	assert_null(famfs_ns_get(&ns, 0));
	/* the last entry's inode, and the one just past it */
	assert_string_equal(famfs_ns_get(&ns, 5)->name, "g");
	assert_null(famfs_ns_get(&ns, 6));
	famfs_ns_path(n, path, sizeof(path));
	assert_string_equal(path, "a/b/f");
	n = famfs_ns_lookup(&ns, famfs_ns_resolve(&ns, "a"), "b");
	assert_non_null(n);
	assert_true(n->is_dir);
	assert_int_equal(n->ino, 3);
	assert_int_equal(ns.root.nchildren, 2);
	assert_string_equal(ns.root.first_child->name, "a");
	assert_string_equal(ns.root.first_child->next_sibling->name, "g");
	assert_int_equal(ns.files, 2);
	assert_int_equal(ns.dirs, 2);
	famfs_ns_free(&ns);
}

static void bad_paths_hide_only_their_entry(void **state)
{
	struct famfs_ns ns;
	struct famfs_omf_entry e;

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	e = file_entry("f", 1);
	assert_int_equal(famfs_ns_apply(&ns, &e, 0), 0);
	e = file_entry("f", 1);
	assert_int_equal(famfs_ns_apply(&ns, &e, 1), -EEXIST);
	e = mkdir_entry("nope/d");
	assert_int_equal(famfs_ns_apply(&ns, &e, 2), -ENOENT);
	e = mkdir_entry("f/d");
	assert_int_equal(famfs_ns_apply(&ns, &e, 3), -ENOTDIR);
	assert_non_null(strstr(famfs_errmsg(), "log entry 3"));
	e = mkdir_entry("d");
	assert_int_equal(famfs_ns_apply(&ns, &e, 4), 0);
	assert_int_equal(ns.nindex, 5);
	assert_int_equal(famfs_ns_resolve(&ns, "d")->ino, 6);
	e = mkdir_entry("late");
	assert_int_equal(famfs_ns_apply(&ns, &e, 9), -EINVAL); /* out of order */
	famfs_ns_free(&ns);
}

static void a_second_mkdir_changes_mode_and_owner(void **state)
{
	struct famfs_ns ns;
	struct famfs_omf_entry e;
	const struct famfs_node *d;

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	e = mkdir_entry("d");
	assert_int_equal(famfs_ns_apply(&ns, &e, 0), 0);
	e = file_entry("d/f", 1);
	assert_int_equal(famfs_ns_apply(&ns, &e, 1), 0);
	e = mkdir_entry("d");
	e.mkdir.mode = 02775;
	e.mkdir.uid = 1000;
	e.mkdir.gid = 100;
	assert_int_equal(famfs_ns_apply(&ns, &e, 2), 0);
	d = famfs_ns_resolve(&ns, "d");
	/* the same directory, with its child, given the new entry's */
	assert_int_equal(d->ino, 2);
	assert_int_equal(d->mode, 02775);
	assert_int_equal(d->uid, 1000);
	assert_int_equal(d->gid, 100);
	assert_int_equal(d->nchildren, 1);
	assert_null(famfs_ns_get(&ns, 4));
	assert_int_equal(ns.dirs, 1);
	assert_int_equal(ns.dir_changes, 1);
	assert_int_equal(ns.nindex, 3);
	/* a MKDIR over a file is still a clash that hides only itself */
	e = mkdir_entry("d/f");
	assert_int_equal(famfs_ns_apply(&ns, &e, 3), -EEXIST);
	assert_false(famfs_ns_resolve(&ns, "d/f")->is_dir);
	assert_int_equal(famfs_ns_resolve(&ns, "d/f")->mode, 0640);
	assert_int_equal(ns.dir_changes, 1);
	famfs_ns_free(&ns);
}

/* A file at @off of @len bytes, one simple extent. */
static struct famfs_omf_entry file_at(const char *path, uint64_t off,
				      uint64_t len)
{
	struct famfs_omf_entry e = file_entry(path, len);

	e.file.fmap.ext_type = FAMFS_EXT_SIMPLE;
	e.file.fmap.simple.nextents = 1;
	e.file.fmap.simple.se[0].offset = off;
	e.file.fmap.simple.se[0].len = len;
	return e;
}

static void the_first_owner_keeps_shared_memory(void **state)
{
	const uint64_t mib = 1 << 20;
	struct famfs_geometry g = { .dev_size = 64 * mib,
				    .alloc_unit = 2 * mib,
				    .data_start = 10 * mib };
	struct famfs_alloc a;
	struct famfs_ns ns;
	struct famfs_omf_entry e;

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	assert_int_equal(famfs_alloc_init(&a, &g), 0);
	e = file_at("owner", 10 * mib, 4 * mib);
	assert_int_equal(famfs_ns_apply(&ns, &e, 0), 0);
	assert_false(famfs_ns_claim(&ns, &a, &e, 0));
	/* the same memory again, by name and by a range that straddles it */
	e = file_at("clone", 10 * mib, 4 * mib);
	assert_int_equal(famfs_ns_apply(&ns, &e, 1), 0);
	assert_true(famfs_ns_claim(&ns, &a, &e, 1));
	e = file_at("straddle", 12 * mib, 4 * mib);
	assert_int_equal(famfs_ns_apply(&ns, &e, 2), 0);
	assert_true(famfs_ns_claim(&ns, &a, &e, 2));
	/* the superblock and log are nobody's file */
	e = file_at("onlog", 2 * mib, 2 * mib);
	assert_int_equal(famfs_ns_apply(&ns, &e, 3), 0);
	assert_true(famfs_ns_claim(&ns, &a, &e, 3));
	/* an entry that made no node still claims its memory: "late" overlaps */
	e = file_at("owner", 20 * mib, 2 * mib);
	assert_int_equal(famfs_ns_apply(&ns, &e, 4), -EEXIST);
	assert_false(famfs_ns_claim(&ns, &a, &e, 4));
	e = mkdir_entry("d");
	assert_int_equal(famfs_ns_apply(&ns, &e, 5), 0);
	assert_false(famfs_ns_claim(&ns, &a, &e, 5));
	e = file_at("fresh", 22 * mib, 2 * mib);
	assert_int_equal(famfs_ns_apply(&ns, &e, 6), 0);
	assert_false(famfs_ns_claim(&ns, &a, &e, 6));
	e = file_at("late", 20 * mib, 2 * mib);
	assert_int_equal(famfs_ns_apply(&ns, &e, 7), 0);
	assert_true(famfs_ns_claim(&ns, &a, &e, 7));

	assert_false(famfs_ns_resolve(&ns, "owner")->overlaps);
	assert_true(famfs_ns_resolve(&ns, "clone")->overlaps);
	assert_true(famfs_ns_resolve(&ns, "straddle")->overlaps);
	assert_true(famfs_ns_resolve(&ns, "onlog")->overlaps);
	assert_false(famfs_ns_resolve(&ns, "d")->overlaps);
	assert_false(famfs_ns_resolve(&ns, "fresh")->overlaps);
	assert_true(famfs_ns_resolve(&ns, "late")->overlaps);
	famfs_alloc_release(&a);
	famfs_ns_free(&ns);
}

static void many_entries_stay_fast_and_findable(void **state)
{
	struct famfs_ns ns;
	struct famfs_omf_entry e;
	char name[32];

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		e = mkdir_entry(name);
		assert_int_equal(famfs_ns_apply(&ns, &e, (uint64_t)i), 0);
	}
	for (int i = 0; i < 20000; i += 997) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(famfs_ns_resolve(&ns, name)->ino,
				 (uint64_t)i + 2);
	}
	famfs_ns_free(&ns);
}

/*
 * After famfs_ns_reserve() the next entry needs no memory: its slot, the
 * hash table's size and its node are there already, across every growth
 * of the slots and the hash table.
 */
static void a_reserve_holds_all_the_next_entry_needs(void **state)
{
	struct famfs_ns ns;
	struct famfs_omf_entry e;
	struct famfs_node *spare, **slots, **hash;
	char name[32];

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	for (uint64_t i = 0; i < 700; i++) {
		assert_int_equal(famfs_ns_reserve(&ns), 0);
		spare = ns.spare;
		slots = ns.by_index;
		hash = ns.hash;
		assert_non_null(spare);
		assert_true(ns.cap > ns.nindex);
		assert_true(ns.files + ns.dirs + 1 <= ns.nhash / 2);
		snprintf(name, sizeof(name), "f%llu", (unsigned long long)i);
		e = i % 3 ? file_entry(name, 4096) : mkdir_entry(name);
		assert_int_equal(famfs_ns_apply(&ns, &e, i), 0);
		assert_ptr_equal(famfs_ns_resolve(&ns, name), spare);
		assert_ptr_equal(ns.by_index, slots);
		assert_ptr_equal(ns.hash, hash);
		assert_null(ns.spare);
	}
	/* kept for the next entry, and freed with the namespace */
	assert_int_equal(famfs_ns_reserve(&ns), 0);
	famfs_ns_free(&ns);
}

/* One name in a thousand directories: each lookup finds its own. */
static void the_same_name_in_many_directories(void **state)
{
	struct famfs_ns ns;
	struct famfs_omf_entry e;
	struct famfs_node *n;
	char name[32];
	uint64_t i = 0;

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	for (int d = 0; d < 1000; d++) {
		snprintf(name, sizeof(name), "d%d", d);
		e = mkdir_entry(name);
		assert_int_equal(famfs_ns_apply(&ns, &e, i++), 0);
		snprintf(name, sizeof(name), "d%d/f", d);
		e = file_entry(name, (uint64_t)d);
		assert_int_equal(famfs_ns_apply(&ns, &e, i++), 0);
	}
	for (int d = 0; d < 1000; d++) {
		snprintf(name, sizeof(name), "d%d/f", d);
		n = famfs_ns_resolve(&ns, name);
		assert_non_null(n);
		assert_int_equal(n->size, (uint64_t)d);
		assert_int_equal(n->ino, (uint64_t)d * 2 + 3);
		snprintf(name, sizeof(name), "d%d", d);
		assert_string_equal(n->parent->name, name);
	}
	famfs_ns_free(&ns);
}

/*
 * Entries that make no node (directory changes) still take inodes: then
 * two directories' inodes can share a hash bucket's bits, and their
 * children of one name one bucket. Each lookup still finds its own.
 */
static void the_same_name_after_many_directory_changes(void **state)
{
	struct famfs_ns ns;
	struct famfs_omf_entry e;
	uint64_t i = 0;

	(void)state;
	famfs_ns_init(&ns, 0755, 0, 0);
	e = mkdir_entry("a");
	assert_int_equal(famfs_ns_apply(&ns, &e, i++), 0);
	while (i < 256) {
		e = mkdir_entry("a");
		e.mkdir.mode = 0700 + (uint32_t)(i & 1);
		assert_int_equal(famfs_ns_apply(&ns, &e, i++), 0);
	}
	e = mkdir_entry("b");
	assert_int_equal(famfs_ns_apply(&ns, &e, i++), 0);
	assert_int_equal(famfs_ns_resolve(&ns, "b")->ino, 256 + 2);
	e = file_entry("a/f", 1);
	assert_int_equal(famfs_ns_apply(&ns, &e, i++), 0);
	e = file_entry("b/f", 2);
	assert_int_equal(famfs_ns_apply(&ns, &e, i++), 0);
	assert_int_equal(famfs_ns_resolve(&ns, "a/f")->size, 1);
	assert_int_equal(famfs_ns_resolve(&ns, "b/f")->size, 2);
	assert_int_equal(ns.dir_changes, 255);
	famfs_ns_free(&ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builds_a_tree_with_stable_inodes),
		cmocka_unit_test(bad_paths_hide_only_their_entry),
		cmocka_unit_test(a_second_mkdir_changes_mode_and_owner),
		cmocka_unit_test(many_entries_stay_fast_and_findable),
		cmocka_unit_test(a_reserve_holds_all_the_next_entry_needs),
		cmocka_unit_test(the_same_name_in_many_directories),
		cmocka_unit_test(the_same_name_after_many_directory_changes),
		cmocka_unit_test(the_first_owner_keeps_shared_memory),
	};

	return cmocka_run_group_tests_name("namespace", tests, NULL, NULL);
}
