// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs_read_within(): a read that a daemon which never answers cannot
 * hold. A FIFO with no writer stands in for such a mount: its open waits
 * for ever, in the kernel, as a read of a stopped daemon's mount does.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void a_file_is_read_whole_or_to_its_end(void **state)
{
	struct scratch s;
	char path[160], buf[16];
	FILE *f;

	(void)state;
	scratch_make(&s, 0);
	snprintf(path, sizeof(path), "%s/text", s.dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("superblock", f);
	fclose(f);
	assert_int_equal(famfs_read_within(path, buf, 5, 2000), 5);
	assert_memory_equal(buf, "super", 5);
	/* shorter than asked: what there is */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(famfs_read_within(path, buf, sizeof(buf), 2000), 10);
	assert_string_equal(buf, "superblock");
	scratch_drop(&s);
}

static void a_failed_open_says_why(void **state)
{
	struct scratch s;
	char path[160], buf[8];

	(void)state;
	scratch_make(&s, 0);
	snprintf(path, sizeof(path), "%s/absent", s.dir);
	assert_int_equal(famfs_read_within(path, buf, sizeof(buf), 2000),
			 -ENOENT);
	/* a directory opens, and its read fails */
	assert_int_equal(famfs_read_within(s.dir, buf, sizeof(buf), 2000),
			 -EISDIR);
	scratch_drop(&s);
}

static void a_read_that_never_ends_is_given_up_at_the_deadline(void **state)
{
	struct scratch s;
	char path[160], buf[8];
	double t0, took;
	int st;

	(void)state;
	scratch_make(&s, 0);
	snprintf(path, sizeof(path), "%s/fifo", s.dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	t0 = now_s();
	assert_int_equal(famfs_read_within(path, buf, sizeof(buf), 300),
			 -ETIMEDOUT);
	took = now_s() - t0;
	assert_true(took >= 0.3);
	assert_true(took < 2.5); /* the deadline and the reaping, no more */
	/* the child was killed and reaped: none is left behind */
	assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	scratch_drop(&s);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * A signal (a stop request to famfs status --watch) ends the wait neither
 * early nor late: the deadline holds.
 */
static void a_signal_neither_ends_nor_stretches_the_wait(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval tick = { .it_value = { 0, 100000 } };
	struct scratch s;
	char path[160], buf[8];
	double t0, took;

	(void)state;
	scratch_make(&s, 0);
	snprintf(path, sizeof(path), "%s/fifo", s.dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &tick, NULL), 0);
	t0 = now_s();
	assert_int_equal(famfs_read_within(path, buf, sizeof(buf), 400),
			 -ETIMEDOUT);
	took = now_s() - t0;
	assert_true(took >= 0.4);
	assert_true(took < 2.5);
	signal(SIGALRM, SIG_DFL);
	scratch_drop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_file_is_read_whole_or_to_its_end),
		cmocka_unit_test(a_failed_open_says_why),
		cmocka_unit_test(a_read_that_never_ends_is_given_up_at_the_deadline),
		cmocka_unit_test(a_signal_neither_ends_nor_stretches_the_wait),
	};

	return cmocka_run_group_tests_name("mounted", tests, NULL, NULL);
}
