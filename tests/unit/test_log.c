// SPDX-License-Identifier: GPL-2.0-or-later
/* The log: appending through a writer, walking, and damage. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "writer.h"

static void populate(struct famfs_dev *dev)
{
	struct famfs_writer w;

	assert_int_equal(famfs_writer_begin(&w, dev), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "a", 0755, 1, 2), 0);
	assert_int_equal(famfs_writer_creat(&w, "a/f1", 3 * MiB, 0644, 1, 2,
					    NULL, NULL), 0);
	assert_int_equal(famfs_writer_creat(&w, "f2", 1, 0600, 0, 0, NULL,
					    NULL), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "a/b", 0700, 0, 0), 0);
	famfs_writer_end(&w);
}

static void append_and_walk(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_geometry g;
	struct famfs_walk walk;

	(void)state;
	scratch_open(&s, 128 * MiB, &dev);
	populate(&dev);
	assert_int_equal(dev.log->next_index, 4);
	assert_int_equal(dev.log->next_seqnum, 4);
	famfs_sb_geometry(dev.sb, &g);
	assert_int_equal(famfs_log_walk(dev.log, dev.log_len, &g, 0, NULL,
					NULL, &walk), 0);
	assert_int_equal(walk.valid, 4);
	assert_false(walk.bad);
	assert_int_equal(famfs_log_entry(dev.log, 1)->type, FAMFS_ENTRY_FILE);
	assert_string_equal(famfs_log_entry(dev.log, 1)->file.relpath, "a/f1");
	assert_int_equal(famfs_log_entry(dev.log, 1)->file.fmap.simple.se[0].len, 4 * MiB);
	scratch_close(&s, &dev);
}

static void flipped_entry_is_found_by_number(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_geometry g;
	struct famfs_walk walk;

	(void)state;
	scratch_open(&s, 128 * MiB, &dev);
	populate(&dev);
	((uint8_t *)famfs_log_entry(dev.log, 2))[100] ^= 0x5a;
	famfs_sb_geometry(dev.sb, &g);
	assert_int_equal(famfs_log_walk(dev.log, dev.log_len, &g, 0, NULL,
					NULL, &walk), -EBADMSG);
	assert_true(walk.bad);
	assert_int_equal(walk.valid, 2); /* entries 0 and 1 still count */
	assert_non_null(strstr(walk.why, "log entry 2"));
	assert_non_null(strstr(walk.why, "CRC mismatch"));
	scratch_close(&s, &dev);
}

static void header_claiming_too_much_is_refused(void **state)
{
	struct scratch s;
	struct famfs_dev dev;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	dev.log->next_index = famfs_log_slots(dev.log_len) + 1;
	assert_int_equal(famfs_log_check_header(dev.log, dev.log_len), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "room for 15420"));
	scratch_close(&s, &dev);
}

/* A CRC recomputed over a wrong field: the field is still checked. */
static void a_consistent_lie_is_still_refused(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_geometry g;
	struct famfs_walk walk;
	struct famfs_omf_entry *e;
	struct famfs_writer w;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	populate(&dev);
	/* entry 1 copied into slot 3, its CRC valid: its number is not 3 */
	e = famfs_log_entry(dev.log, 3);
	memcpy(e, famfs_log_entry(dev.log, 1), sizeof(*e));
	e->file.relpath[0] = 'z';
	e->crc = famfs_entry_crc(e);
	famfs_sb_geometry(dev.sb, &g);
	assert_int_equal(famfs_log_walk(dev.log, dev.log_len, &g, 0, NULL,
					NULL, &walk), -EUCLEAN);
	assert_int_equal(walk.valid, 3);
	assert_non_null(strstr(walk.why, "log entry 3: sequence number 1"));
	/* a void entry (ours, from fsck --repair) holds nothing at all */
	memset(e, 0, sizeof(*e));
	e->seqnum = 3;
	e->type = FAMFS_ENTRY_VOID;
	e->crc = famfs_entry_crc(e);
	assert_int_equal(famfs_log_walk(dev.log, dev.log_len, &g, 0, NULL,
					NULL, &walk), 0);
	((uint8_t *)&e->file)[sizeof(e->file) - 1] = 1;
	e->crc = famfs_entry_crc(e);
	assert_int_equal(famfs_log_walk(dev.log, dev.log_len, &g, 0, NULL,
					NULL, &walk), -EUCLEAN);
	assert_non_null(strstr(walk.why, "a void entry with contents"));
	/* an entry that clashes with an earlier name hides only itself */
	memcpy(e, famfs_log_entry(dev.log, 2), sizeof(*e));
	e->seqnum = 3;
	e->crc = famfs_entry_crc(e);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "c", 0755, 0, 0), 0);
	famfs_writer_end(&w);
	/* a header whose last index does not fit the log, CRC and all */
	dev.log->last_index--;
	dev.log->crc = famfs_log_header_crc(dev.log);
	assert_int_equal(famfs_log_check_header(dev.log, dev.log_len), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "last index"));
	scratch_close(&s, &dev);
}

static void only_the_master_appends(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_writer w;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	scratch_become_other_host(&s);
	assert_int_equal(famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &dev), 0);
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_CLIENT);
	assert_int_equal(famfs_writer_begin(&w, &dev), -EPERM);
	assert_non_null(strstr(famfs_errmsg(), "client"));
	assert_int_equal(dev.log->next_index, 0);
	scratch_close(&s, &dev);
}

static void names_and_paths_are_checked(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_writer w;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "d", 0755, 0, 0), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "d", 0755, 0, 0), -EEXIST);
	assert_int_equal(famfs_writer_mkdir(&w, "x/y", 0755, 0, 0), -ENOENT);
	assert_int_equal(famfs_writer_creat(&w, "f", 1, 0644, 0, 0, NULL, NULL), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "f/z", 0755, 0, 0), -ENOTDIR);
	assert_int_equal(famfs_writer_mkdir(&w, "d/../e", 0755, 0, 0), -EINVAL);
	/* the mount's metadata directory: an entry there would be hidden */
	assert_int_equal(famfs_writer_mkdir(&w, ".meta", 0755, 0, 0), -EINVAL);
	assert_int_equal(famfs_writer_creat(&w, ".meta/x", 1, 0644, 0, 0,
					    NULL, NULL), -EINVAL);
	assert_int_equal(famfs_writer_creat(&w, "d/" "0123456789012345678901234567890123456789"
					    "0123456789012345678901234567890123456789",
					    1, 0644, 0, 0, NULL, NULL), -ENAMETOOLONG);
	/* larger than the device: EFBIG, and no overflow on the way */
	assert_int_equal(famfs_writer_creat(&w, "big", 1024 * MiB, 0644, 0, 0,
					    NULL, NULL), -EFBIG);
	assert_int_equal(famfs_writer_creat(&w, "big", UINT64_MAX, 0644, 0, 0,
					    NULL, NULL), -EFBIG);
	assert_non_null(strstr(famfs_errmsg(), "too large"));
	assert_int_equal(famfs_writer_creat(&w, "big", 60 * MiB, 0644, 0, 0,
					    NULL, NULL), -ENOSPC);
	/* the whole device is in use by the log: no room, but not too big */
	assert_int_equal(famfs_writer_creat(&w, "big", 64 * MiB, 0644, 0, 0,
					    NULL, NULL), -ENOSPC);
	assert_int_equal(famfs_writer_creat(&w, "big", 64 * MiB + 1, 0644, 0,
					    0, NULL, NULL), -EFBIG);
	/* the root is not in the log: its mode and owner cannot change */
	assert_int_equal(famfs_writer_set_dir(&w, "", 0700, 0, 0), -EPERM);
	assert_int_equal(famfs_writer_set_dir(&w, "f", 0700, 0, 0), -ENOTDIR);
	assert_int_equal(famfs_writer_set_dir(&w, "nope", 0700, 0, 0), -ENOENT);
	assert_int_equal(famfs_writer_creat(&w, "empty", 0, 0644, 0, 0, NULL,
					    NULL), -EINVAL);
	/* 79 bytes fit the entry's 80 with the NUL; 80 do not */
	assert_int_equal(famfs_writer_creat(&w, "d/" "0123456789012345678901234567890123456789"
					    "0123456789012345678901234567890123456",
					    1, 0644, 0, 0, NULL, NULL), 0);
	assert_int_equal(famfs_writer_creat(&w, "d/" "0123456789012345678901234567890123456789"
					    "01234567890123456789012345678901234567",
					    1, 0644, 0, 0, NULL, NULL), -ENAMETOOLONG);
	/* only .meta itself is the mount's: names that begin so are not */
	assert_int_equal(famfs_writer_mkdir(&w, ".metadata", 0755, 0, 0), 0);
	assert_int_equal(famfs_writer_mkdir(&w, ".meta2", 0755, 0, 0), 0);
	assert_int_equal(famfs_writer_creat(&w, ".meta2/x", 1, 0644, 0, 0,
					    NULL, NULL), 0);
	famfs_writer_end(&w);
	assert_int_equal(dev.log->next_index, 6);
	/* a damaged log: no writer starts, and it says what to do */
	((uint8_t *)famfs_log_entry(dev.log, 1))[100] ^= 0x5a;
	assert_int_equal(famfs_writer_begin(&w, &dev), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "the log is damaged (log entry 1"));
	assert_non_null(strstr(famfs_errmsg(), "run famfs fsck"));
	scratch_close(&s, &dev);
}

static void full_log_says_so(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_writer w;
	uint64_t slots;
	char name[32];

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	slots = famfs_log_slots(dev.log_len);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	for (uint64_t i = 0; i < slots; i++) {
		snprintf(name, sizeof(name), "d%llu", (unsigned long long)i);
		assert_int_equal(famfs_writer_mkdir(&w, name, 0755, 0, 0), 0);
	}
	assert_int_equal(famfs_writer_mkdir(&w, "one-too-many", 0755, 0, 0),
			 -ENOSPC);
	assert_non_null(strstr(famfs_errmsg(), "log is full"));
	famfs_writer_end(&w);
	assert_int_equal(dev.log->next_index, slots);
	scratch_close(&s, &dev);
}

/*
 * An append that the writer's lock did not see (another writer through
 * another lock) moves the tail: the writer's next append must not land
 * on that entry, but refuse and leave it as it is.
 */
static void append_rechecks_the_tail(void **state)
{
	struct scratch s;
	struct famfs_dev dev, other;
	struct famfs_writer w;
	struct famfs_omf_entry e;
	struct famfs_fsck r;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	assert_int_equal(famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &other), 0);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "mine", 0755, 0, 0), 0);
	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_MKDIR;
	e.mkdir.mode = 0755;
	strcpy(e.mkdir.relpath, "theirs");
	assert_int_equal(famfs_log_append(&other, &e), 0);
	assert_int_equal(famfs_writer_mkdir(&w, "again", 0755, 0, 0), -EBUSY);
	assert_non_null(strstr(famfs_errmsg(), "moved"));
	famfs_writer_end(&w);
	assert_int_equal(dev.log->next_index, 2);
	assert_string_equal(famfs_log_entry(dev.log, 1)->mkdir.relpath,
			    "theirs");
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	famfs_dev_close(&other);
	scratch_close(&s, &dev);
}

/* Two processes appending at once: every entry lands, none interleaves. */
static void concurrent_appenders_serialise(void **state)
{
	enum { PER_PROC = 200 };
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;
	pid_t pid[2];

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	for (int p = 0; p < 2; p++) {
		pid[p] = fork();
		assert_true(pid[p] >= 0);
		if (pid[p] == 0) {
			struct famfs_writer w;
			char name[32];
			int bad = 0;

			if (famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &dev))
				_exit(1);
			for (int i = 0; i < PER_PROC; i++) {
				/* one writer per entry: lock, replay, append, unlock */
				snprintf(name, sizeof(name), "p%d-%d", p, i);
				if (famfs_writer_begin(&w, &dev)) {
					bad++;
					continue;
				}
				bad += famfs_writer_mkdir(&w, name, 0755, 0, 0) != 0;
				famfs_writer_end(&w);
			}
			_exit(bad ? 1 : 0);
		}
	}
	for (int p = 0; p < 2; p++) {
		int st;

		assert_int_equal(waitpid(pid[p], &st, 0), pid[p]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), 0);
	assert_int_equal(dev.log->next_index, 2 * PER_PROC);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	assert_int_equal(r.dirs, 2 * PER_PROC);
	scratch_close(&s, &dev);
}

/*
 * What a mount does before it moves a device whose node cannot be read
 * (daxbind.c): wait for the log lock that a daemon whose mount is gone
 * holds while it still logs files, and never keep it.
 */
static void mounts_wait_for_a_writer_and_take_no_lock(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	int up[2], down[2];
	char b, who[32];
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0)
		skip(); /* only root's lock files are waited for */
	scratch_mkfs(&s, 64 * MiB);
	assert_int_equal(famfs_dev_wait_writers(s.image), 0);
	/* it kept no lock: a writer takes it at once */
	assert_int_equal(famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &dev), 0);
	assert_int_equal(famfs_dev_trylock(&dev), 0);
	famfs_dev_close(&dev);
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* a daemon: holds the lock until it has let go of the device */
		if (famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &dev) ||
		    famfs_dev_lock(&dev) || write(up[1], "", 1) != 1 ||
		    read(down[0], &b, 1) != 1)
			_exit(1);
		famfs_dev_close(&dev);
		_exit(write(up[1], "", 1) == 1 ? 0 : 1);
	}
	assert_int_equal(read(up[0], &b, 1), 1);
	setenv("FAMFS_LOCK_TIMEOUT", "1", 1);
	assert_int_equal(famfs_dev_wait_writers(s.image), -ETIMEDOUT);
	snprintf(who, sizeof(who), "pid %d", (int)pid);
	assert_non_null(strstr(famfs_errmsg(), who));
	unsetenv("FAMFS_LOCK_TIMEOUT");
	assert_int_equal(write(down[1], "", 1), 1);
	assert_int_equal(read(up[0], &b, 1), 1);
	assert_int_equal(famfs_dev_wait_writers(s.image), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	scratch_drop(&s);
}

/* An entry as a hostile host would forge it: CRC and number right. */
static int forged_check(struct famfs_omf_entry *e,
			const struct famfs_geometry *g)
{
	e->seqnum = 5;
	e->crc = famfs_entry_crc(e);
	return famfs_entry_check(e, 5, g);
}

static struct famfs_omf_entry forged_file(const char *relpath)
{
	struct famfs_omf_entry e;

	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_FILE;
	e.file.size = 1;
	e.file.mode = 0644;
	snprintf(e.file.relpath, sizeof(e.file.relpath), "%s", relpath);
	e.file.fmap.ext_type = FAMFS_EXT_SIMPLE;
	e.file.fmap.simple.nextents = 1;
	e.file.fmap.simple.se[0] = (struct famfs_omf_extent){ 0, 10 * MiB,
							      2 * MiB };
	return e;
}

/*
 * A log written by another host may name paths the namespace must never
 * see: every component is checked, not only "..". The CRC is right, so
 * only the path check stands between the entry and the tree.
 */
static void forged_paths_are_refused_component_by_component(void **state)
{
	static const char *const bad[] = {
		"a/./b", ".", "a/.", "a//b", "a/", "/a", "//a",
	};
	const struct famfs_geometry g = { .dev_size = 64 * MiB,
					  .alloc_unit = 2 * MiB,
					  .data_start = 10 * MiB,
					  .ndevs = 1,
					  .dev = { { .size = 64 * MiB } } };
	struct famfs_omf_entry e;

	(void)state;
	e = forged_file("a/.b/..c/...");
	assert_int_equal(forged_check(&e, &g), 0); /* dots inside names are fine */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e = forged_file(bad[i]);
		assert_int_equal(forged_check(&e, &g), -EUCLEAN);
		assert_non_null(strstr(famfs_errmsg(), "log entry 5"));
		assert_non_null(strstr(famfs_errmsg(), bad[i]));
		/* the same check guards directories */
		memset(&e, 0, sizeof(e));
		e.type = FAMFS_ENTRY_MKDIR;
		e.mkdir.mode = 0755;
		snprintf(e.mkdir.relpath, sizeof(e.mkdir.relpath), "%s", bad[i]);
		assert_int_equal(forged_check(&e, &g), -EUCLEAN);
	}
	e = forged_file("a/");
	forged_check(&e, &g);
	assert_non_null(strstr(famfs_errmsg(), "ends with '/'"));
	e = forged_file("/a");
	forged_check(&e, &g);
	assert_non_null(strstr(famfs_errmsg(), "not a relative path"));
	/* all 80 bytes used: no NUL, so no string at all */
	e = forged_file("x");
	memset(e.file.relpath, 'x', sizeof(e.file.relpath));
	assert_int_equal(forged_check(&e, &g), -ENAMETOOLONG);
	assert_non_null(strstr(famfs_errmsg(), "not NUL-terminated"));
}

/*
 * Modes, padding and void entries: the fields other than the path that a
 * forged entry could use to make a device node, a directory that is a
 * file, or carry data in a slot every reader skips.
 */
static void forged_modes_and_padding_are_refused(void **state)
{
	const struct famfs_geometry g = { .dev_size = 64 * MiB,
					  .alloc_unit = 2 * MiB,
					  .data_start = 10 * MiB,
					  .ndevs = 1,
					  .dev = { { .size = 64 * MiB } } };
	struct famfs_omf_entry e;

	(void)state;
	e = forged_file("f");
	e.file.mode = S_IFREG | 04755; /* upstream's cp records S_IFREG */
	assert_int_equal(forged_check(&e, &g), 0);
	e.file.mode = S_IFDIR | 0755;
	assert_int_equal(forged_check(&e, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "is not a regular file's"));
	e.file.mode = S_IFCHR | 0666;
	assert_int_equal(forged_check(&e, &g), -EUCLEAN);

	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_MKDIR;
	snprintf(e.mkdir.relpath, sizeof(e.mkdir.relpath), "d");
	e.mkdir.mode = S_IFDIR | 0755;
	assert_int_equal(forged_check(&e, &g), 0);
	e.mkdir.mode = S_IFREG | 0755;
	assert_int_equal(forged_check(&e, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "is not a directory's"));

	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_ADD_DAXDEV;
	e.daxdev.index = 1;
	e.daxdev.size = 64 * MiB;
	memset(e.daxdev.uuid, 0x42, sizeof(e.daxdev.uuid));
	assert_int_equal(forged_check(&e, &g), 0);
	e.daxdev.pad0 = 1;
	assert_int_equal(forged_check(&e, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "padding set"));

	/* a void entry: even one byte of payload makes it not void */
	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_VOID;
	assert_int_equal(forged_check(&e, &g), 0);
	e.file.relpath[0] = 'x';
	assert_int_equal(forged_check(&e, &g), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "a void entry with contents"));
}

/*
 * A log header that agrees with itself (its CRC recomputed) but not with
 * the superblock: the log length the superblock gives is the one to trust.
 */
static void a_header_length_the_superblock_does_not_give(void **state)
{
	struct scratch s;
	struct famfs_dev dev;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	assert_int_equal(famfs_log_check_header(dev.log, dev.log_len), 0);
	dev.log->len = dev.log_len * 2;
	dev.log->crc = famfs_log_header_crc(dev.log);
	assert_int_equal(famfs_log_check_header(dev.log, dev.log_len), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "differs from the superblock's"));
	scratch_close(&s, &dev);
}

/*
 * famfs_log_walk() is given a log as found: a next_index past the last
 * slot must stop it before it reads a single entry beyond the log, even
 * when its caller did not check the header first.
 */
static void a_walk_refuses_a_tail_past_the_log(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_geometry g;
	struct famfs_walk walk;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	populate(&dev);
	dev.log->next_index = famfs_log_slots(dev.log_len) + 1;
	famfs_sb_geometry(dev.sb, &g);
	assert_int_equal(famfs_log_walk(dev.log, dev.log_len, &g, 2, NULL,
					NULL, &walk), -EUCLEAN);
	assert_true(walk.bad);
	assert_int_equal(walk.valid, 2); /* from where the walk began */
	assert_non_null(strstr(walk.why, "room for 15420"));
	scratch_close(&s, &dev);
}

/*
 * A clone is the same file under another name: it keeps what the source
 * entry says, the flags upstream wrote (all hosts read-only here) and the
 * owner, not what a file created now would get.
 */
static void a_clone_keeps_the_flags_and_owner_of_its_source(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_writer w;
	struct famfs_omf_entry e, *c;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_FILE;
	e.file.size = 1;
	e.file.flags = FAMFS_FILE_ALL_HOSTS_RO;
	e.file.mode = 0640;
	e.file.uid = 1000;
	e.file.gid = 100;
	snprintf(e.file.relpath, sizeof(e.file.relpath), "ro");
	e.file.fmap.ext_type = FAMFS_EXT_SIMPLE;
	e.file.fmap.simple.nextents = 1;
	e.file.fmap.simple.se[0] = (struct famfs_omf_extent){ 0, 10 * MiB,
							      2 * MiB };
	assert_int_equal(famfs_log_append(&dev, &e), 0);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	assert_int_equal(famfs_writer_clone(&w, "ro", "ro2"), 0);
	famfs_writer_end(&w);
	c = famfs_log_entry(dev.log, 1);
	assert_string_equal(c->file.relpath, "ro2");
	assert_int_equal(c->file.flags, FAMFS_FILE_ALL_HOSTS_RO);
	assert_int_equal(c->file.mode, 0640);
	assert_int_equal(c->file.uid, 1000);
	assert_int_equal(c->file.gid, 100);
	assert_memory_equal(&c->file.fmap, &e.file.fmap, sizeof(e.file.fmap));
	scratch_close(&s, &dev);
}

/*
 * A map handed in by a caller (famfs logfile, a daemon flushing a file)
 * is checked as a reader would check it, before it is written: a bad one
 * leaves the log as it was.
 */
static void an_append_never_writes_what_a_reader_would_refuse(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_writer w;
	struct famfs_omf_fmap fm;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	memset(&fm, 0, sizeof(fm));
	fm.ext_type = FAMFS_EXT_SIMPLE;
	fm.simple.nextents = 1;
	fm.simple.se[0] = (struct famfs_omf_extent){ 0, 64 * MiB, 2 * MiB };
	assert_int_equal(famfs_writer_log_file(&w, "past", 1, 0644, 0, 0, &fm),
			 -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "past the end"));
	fm.simple.se[0].offset = 2 * MiB; /* the log itself */
	assert_int_equal(famfs_writer_log_file(&w, "log", 1, 0644, 0, 0, &fm),
			 -EUCLEAN);
	assert_int_equal(dev.log->next_index, 0);
	assert_int_equal(w.next, 0);
	fm.simple.se[0].offset = 10 * MiB;
	assert_int_equal(famfs_writer_log_file(&w, "ok", 1, 0644, 0, 0, &fm), 0);
	assert_int_equal(dev.log->next_index, 1);
	assert_int_equal(w.next, 1);
	/*
	 * One written that the namespace could not take (out of step with
	 * the log: the writer makes room first, so never for want of memory)
	 * is in the log all the same: the writer's index says so, and the
	 * daemon keeps that file's memory on it.
	 */
	fm.simple.se[0].offset = 12 * MiB;
	w.ns->nindex++;
	assert_int_equal(famfs_writer_log_file(&w, "f", 1, 0644, 0, 0, &fm),
			 -EINVAL);
	assert_non_null(strstr(famfs_errmsg(), "out of order"));
	assert_int_equal(dev.log->next_index, 2);
	assert_int_equal(w.next, 2);
	assert_string_equal(famfs_log_entry(dev.log, 1)->file.relpath, "f");
	w.ns->nindex--;
	famfs_writer_end(&w);
	scratch_close(&s, &dev);
}

/*
 * A writer knows the free space only from the log: the files a writer
 * before it logged must be in its map, or it hands out their memory.
 */
static void a_new_writer_never_reuses_logged_space(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_writer w;
	const struct famfs_node *a, *b, *c;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	assert_int_equal(famfs_writer_creat(&w, "a", 4 * MiB, 0644, 0, 0,
					    NULL, &a), 0);
	assert_int_equal(a->fmap.simple.se[0].offset, 10 * MiB);
	famfs_writer_end(&w);
	assert_int_equal(famfs_writer_begin(&w, &dev), 0);
	assert_int_equal(w.alloc->used, 5 + 2); /* superblock, log and "a" */
	assert_int_equal(famfs_writer_creat(&w, "b", 2 * MiB, 0644, 0, 0,
					    NULL, &b), 0);
	assert_int_equal(b->fmap.simple.se[0].offset, 14 * MiB);
	c = famfs_ns_resolve(w.ns, "a");
	assert_non_null(c);
	assert_false(c->overlaps);
	famfs_writer_end(&w);
	scratch_close(&s, &dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(append_and_walk),
		cmocka_unit_test(flipped_entry_is_found_by_number),
		cmocka_unit_test(header_claiming_too_much_is_refused),
		cmocka_unit_test(a_consistent_lie_is_still_refused),
		cmocka_unit_test(only_the_master_appends),
		cmocka_unit_test(names_and_paths_are_checked),
		cmocka_unit_test(full_log_says_so),
		cmocka_unit_test(concurrent_appenders_serialise),
		cmocka_unit_test(append_rechecks_the_tail),
		cmocka_unit_test(mounts_wait_for_a_writer_and_take_no_lock),
		cmocka_unit_test(forged_paths_are_refused_component_by_component),
		cmocka_unit_test(forged_modes_and_padding_are_refused),
		cmocka_unit_test(a_header_length_the_superblock_does_not_give),
		cmocka_unit_test(a_walk_refuses_a_tail_past_the_log),
		cmocka_unit_test(a_clone_keeps_the_flags_and_owner_of_its_source),
		cmocka_unit_test(an_append_never_writes_what_a_reader_would_refuse),
		cmocka_unit_test(a_new_writer_never_reuses_logged_space),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
