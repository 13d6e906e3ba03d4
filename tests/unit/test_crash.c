// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Crashes and torn appends: the log stays readable, every complete entry
 * before the damage is kept, repair drops only a damaged tail and voids
 * a damaged entry that intact ones follow.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "writer.h"

/* Append @n directories named PREFIX0, PREFIX1, ... */
static void make_dirs(struct famfs_dev *dev, const char *prefix, int n)
{
	struct famfs_writer w;
	char name[32];

	assert_int_equal(famfs_writer_begin(&w, dev), 0);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		assert_int_equal(famfs_writer_mkdir(&w, name, 0755, 0, 0), 0);
	}
	famfs_writer_end(&w);
}

/* A header that commits an entry whose bytes only half arrived. */
static void torn_tail_is_repaired_without_loss(void **state)
{
	struct famfs_omf_entry e;
	struct famfs_dev dev;
	struct famfs_fsck r;
	struct scratch s;
	struct famfs_repair rep;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	make_dirs(&dev, "d", 5);
	memcpy(&e, famfs_log_entry(dev.log, 4), sizeof(e));
	strcpy(e.mkdir.relpath, "torn");
	e.seqnum = 5;
	e.crc = famfs_entry_crc(&e);
	memcpy(famfs_log_entry(dev.log, 5), &e, sizeof(e) / 2);
	dev.log->next_index = 6;

	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_ERRORS);
	assert_non_null(strstr(r.problems[0], "log entry 5"));
	assert_int_equal(r.dirs, 5);

	assert_int_equal(famfs_fsck_repair(&dev, &rep), 0);
	assert_int_equal(rep.dropped, 1);
	assert_int_equal(rep.voided, 0);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	assert_int_equal(r.dirs, 5);
	/* and the log takes appends again, in the repaired slot */
	make_dirs(&dev, "again", 1);
	assert_int_equal(dev.log->next_index, 6);
	assert_string_equal(famfs_log_entry(dev.log, 5)->mkdir.relpath, "again0");
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	assert_int_equal(r.dirs, 6);
	scratch_close(&s, &dev);
}

/* A damaged entry in the middle is voided; the intact ones after it stay. */
static void damage_in_the_middle_is_voided(void **state)
{
	struct famfs_dev dev;
	struct famfs_fsck r;
	struct famfs_repair rep;
	struct scratch s;

	(void)state;
	scratch_open(&s, 64 * MiB, &dev);
	make_dirs(&dev, "d", 4);
	((uint8_t *)famfs_log_entry(dev.log, 1))[40] ^= 1;
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(r.dirs, 1);
	assert_int_equal(famfs_fsck_repair(&dev, &rep), 0);
	assert_int_equal(rep.voided, 1);
	assert_int_equal(rep.first_voided, 1);
	assert_int_equal(rep.dropped, 0);
	assert_int_equal(dev.log->next_index, 4);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	assert_int_equal(r.dirs, 3);
	assert_int_equal(r.voided, 1);
	scratch_close(&s, &dev);
}

/*
 * Kill a writer at random points, many times: whatever instant the kill
 * lands on, the log is clean and nothing committed before is lost. Each
 * writer says when its first entry is committed, and the kill comes a
 * random 0-3 ms after that, while it keeps appending: every iteration
 * must add entries, so a slow machine cannot quietly test nothing.
 * FAMFS_CRASH_SEED repeats a run's delays (the seed is printed);
 * FAMFS_CRASH_ITERATIONS sets how many writers are killed.
 */
static void killed_writers_leave_a_clean_log(void **state)
{
	const int iterations = getenv("FAMFS_CRASH_ITERATIONS") ?
				       atoi(getenv("FAMFS_CRASH_ITERATIONS")) :
				       1000;
	const unsigned int seed = getenv("FAMFS_CRASH_SEED") ?
		(unsigned int)strtoul(getenv("FAMFS_CRASH_SEED"), NULL, 0) :
		20261203u;
	struct famfs_dev dev;
	struct famfs_fsck r;
	struct scratch s;
	uint64_t before = 0;
	int it, st;

	(void)state;
	print_message("seed %u (FAMFS_CRASH_SEED), %d iterations\n", seed,
		      iterations);
	srand(seed);
	scratch_mkfs(&s, 1024 * MiB);
	for (it = 0; it < iterations; it++) {
		struct pollfd pfd;
		int fds[2];
		char c;
		pid_t pid;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct famfs_writer w;
			char name[48];

			close(fds[0]);
			if (famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &dev) ||
			    famfs_writer_begin(&w, &dev))
				_exit(1);
			for (int i = 0;; i++) {
				snprintf(name, sizeof(name), "i%d-%d", it, i);
				if (i % 16 == 15)
					famfs_writer_creat(&w, name, 1, 0644,
							   0, 0, NULL, NULL);
				else if (famfs_writer_mkdir(&w, name, 0755,
							    0, 0))
					_exit(2);
				if (i == 0 && write(fds[1], "1", 1) != 1)
					_exit(3);
			}
		}
		close(fds[1]);
		/* The first entry is in the log (60 s: a very busy machine). */
		pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		if (poll(&pfd, 1, 60000) != 1 || read(fds[0], &c, 1) != 1) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("iteration %d: the writer committed nothing "
				 "(exit status 0x%x)", it, st);
		}
		close(fds[0]);
		usleep((useconds_t)(rand() % 3000));
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		/* Killed while appending, not ended by an error of its own. */
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
			fail_msg("iteration %d: writer ended with status 0x%x",
				 it, st);

		assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), 0);
		assert_int_equal(famfs_fsck(&dev, &r), 0);
		if (famfs_fsck_status(&r) != FAMFS_FSCK_CLEAN)
			fail_msg("iteration %d: %s", it, r.problems[0]);
		if (r.log_used <= before)
			fail_msg("iteration %d: log went from %llu to %llu entries",
				 it, (unsigned long long)before,
				 (unsigned long long)r.log_used);
		before = r.log_used;
		famfs_dev_close(&dev);
		if (before > famfs_log_slots(8 * MiB) - 2000)
			break; /* the log is nearly full: enough evidence */
	}
	print_message("%llu entries committed across %d kills\n",
		      (unsigned long long)before, it);
	assert_true(before >= (uint64_t)(it < iterations ? it : iterations));
	scratch_drop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torn_tail_is_repaired_without_loss),
		cmocka_unit_test(damage_in_the_middle_is_voided),
		cmocka_unit_test(killed_writers_leave_a_clean_log),
	};

	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
