// SPDX-License-Identifier: GPL-2.0-or-later
/* fsck: clean file systems pass; each kind of damage is named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "helpers.h"
#include "writer.h"

static bool has_problem(const struct famfs_fsck *r, const char *a,
			const char *b)
{
	for (unsigned int i = 0; i < r->nproblems; i++)
		if (strstr(r->problems[i], a) && (!b || strstr(r->problems[i], b)))
			return true;
	return false;
}

static void make_files(struct famfs_dev *dev)
{
	struct famfs_interleave il = { 4, 2, 2 * MiB };
	struct famfs_writer w;

	assert_int_equal(famfs_writer_begin(&w, dev), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "d", 0755, 0, 0), 0);
	assert_int_equal(famfs_writer_creat(&w, "d/a", 5 * MiB, 0644, 0, 0,
					    NULL, NULL), 0);
	assert_int_equal(famfs_writer_creat(&w, "s", 9 * MiB, 0644, 0, 0, &il,
					    NULL), 0);
	assert_int_equal(famfs_writer_creat(&w, "b", 1, 0644, 0, 0, NULL,
					    NULL), 0);
	famfs_writer_end(&w);
}

static void counts_a_clean_fs(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;

	(void)state;
	scratch_open(&s, 256 * MiB, &dev);
	make_files(&dev);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	assert_int_equal(r.files, 3);
	assert_int_equal(r.dirs, 1);
	assert_int_equal(r.log_used, 4);
	/* 10 MiB metadata + 6 + 12 (2 strips x 3 chunks... rounded) + 2 */
	assert_int_equal(r.space_used + r.space_free, 256 * MiB);
	assert_int_equal(r.space_used, (10 + 6 + 12 + 2) * MiB);
	scratch_close(&s, &dev);
}

static void flipped_entry_is_named(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;

	(void)state;
	scratch_open(&s, 256 * MiB, &dev);
	make_files(&dev);
	((uint8_t *)famfs_log_entry(dev.log, 1))[30] ^= 0xff;
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_ERRORS);
	assert_true(has_problem(&r, "log entry 1", "CRC mismatch"));
	assert_true(has_problem(&r, "2 committed log entries after entry 1", NULL));
	assert_int_equal(r.dirs, 1); /* entry 0 still counted */
	/* the last entry damaged: nothing after it goes unchecked */
	((uint8_t *)famfs_log_entry(dev.log, 1))[30] ^= 0xff;
	((uint8_t *)famfs_log_entry(dev.log, 3))[30] ^= 0xff;
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_true(has_problem(&r, "log entry 3", "CRC mismatch"));
	assert_false(has_problem(&r, "not checked", NULL));
	scratch_close(&s, &dev);
}

static void overlapping_files_are_found(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;
	struct famfs_omf_entry e;

	(void)state;
	scratch_open(&s, 256 * MiB, &dev);
	make_files(&dev);
	/* a well-formed entry that reuses d/a's memory */
	memcpy(&e, famfs_log_entry(dev.log, 1), sizeof(e));
	strcpy(e.file.relpath, "thief");
	assert_int_equal(famfs_dev_lock(&dev), 0);
	assert_int_equal(famfs_log_append(&dev, &e), 0);
	famfs_dev_unlock(&dev);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_ERRORS);
	assert_true(has_problem(&r, "log entry 4 (file \"thief\")", "overlaps"));
	assert_int_equal(r.overlap_bytes, 6 * MiB);
	scratch_close(&s, &dev);
}

/* Valid, so not problems: warnings that leave the status clean. */
static void setid_files_are_warned_about(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;
	struct famfs_writer w;

	(void)state;
	scratch_open(&s, 256 * MiB, &dev);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	assert_int_equal(famfs_writer_creat(&w, "u", 1, 04755, 0, 7, NULL,
					    NULL), 0);
	assert_int_equal(famfs_writer_creat(&w, "g", 1, 02711, 3, 5, NULL,
					    NULL), 0);
	assert_int_equal(famfs_writer_creat(&w, "ug", 1, 06755, 0, 0, NULL,
					    NULL), 0);
	assert_int_equal(famfs_writer_creat(&w, "plain", 1, 0755, 0, 0, NULL,
					    NULL), 0);
	famfs_writer_end(&w);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	assert_int_equal(r.setid_files, 3);
	assert_int_equal(r.nwarnings, 3);
	assert_string_equal(r.warnings[0],
			    "log entry 0: \"u\" is set-user-ID (mode 4755, uid 0)");
	assert_string_equal(r.warnings[1],
			    "log entry 1: \"g\" is set-group-ID (mode 2711, gid 5)");
	assert_string_equal(r.warnings[2],
			    "log entry 2: \"ug\" is set-user-ID and set-group-ID (mode 6755, uid 0, gid 0)");
	scratch_close(&s, &dev);
}

/* A log cannot hold a device node: such an entry is damage, not a file. */
static void device_node_entry_is_a_problem(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;
	struct famfs_omf_entry e;

	(void)state;
	scratch_open(&s, 256 * MiB, &dev);
	make_files(&dev);
	memcpy(&e, famfs_log_entry(dev.log, 1), sizeof(e));
	strcpy(e.file.relpath, "null");
	e.file.mode = S_IFCHR | 0666;
	/* Our writer refuses it; a forged log has it, sealed and committed. */
	assert_int_equal(famfs_dev_lock(&dev), 0);
	assert_int_equal(famfs_log_append(&dev, &e), -EUCLEAN);
	famfs_dev_unlock(&dev);
	e.seqnum = 4;
	e.crc = famfs_entry_crc(&e);
	memcpy(famfs_log_entry(dev.log, 4), &e, sizeof(e));
	dev.log->next_index = dev.log->next_seqnum = 5;
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_ERRORS);
	assert_true(has_problem(&r, "log entry 4", "not a regular file's"));
	assert_int_equal(r.setid_files, 0);
	scratch_close(&s, &dev);
}

static void bad_superblock_and_header(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	assert_int_equal(famfs_dev_open(s.image, FAMFS_OPEN_RW, &dev), 0);
	dev.sb->log_len ^= 1;
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_NOFS);
	assert_true(has_problem(&r, "superblock", "CRC mismatch"));
	dev.sb->log_len ^= 1;
	dev.log->crc ^= 1;
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_NOFS);
	assert_true(has_problem(&r, "log", "CRC mismatch"));
	dev.log->crc ^= 1;
	dev.log->next_index = 1u << 20;
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_NOFS);
	assert_true(has_problem(&r, "log", "room for"));
	scratch_close(&s, &dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_a_clean_fs),
		cmocka_unit_test(flipped_entry_is_named),
		cmocka_unit_test(overlapping_files_are_found),
		cmocka_unit_test(setid_files_are_warned_about),
		cmocka_unit_test(device_node_entry_is_a_problem),
		cmocka_unit_test(bad_superblock_and_header),
	};

	return cmocka_run_group_tests_name("fsck", tests, NULL, NULL);
}
