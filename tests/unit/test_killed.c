// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's test of a dying writer (daemon/fused/create.c): a file
 * whose writer was killed half way is not logged. It reads fields 9 (the
 * task's flags) and 52 (its exit code) of /proc/PID/stat; the command's
 * name, field 2, may hold spaces and parentheses of its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fused.h"

#define PF_EXITING 0x4

/*
 * Is the task of a stat line of @name killed? Field 9 of the line is
 * @flags, field 52 @code, every other field from 3 on is @other; the
 * line has @nfields fields.
 */
static bool line_killed(const char *name, unsigned long long flags,
			unsigned long long code, unsigned long long other,
			int nfields)
{
	char buf[2048];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "4242 (%s)", name);

	for (int i = 3; i <= nfields; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %llu",
				      i == 9 ? flags : i == 52 ? code : other);
	snprintf(buf + n, sizeof(buf) - n, "\n");
	return fused_stat_says_killed(buf);
}

static bool killed(const char *name, unsigned long long flags,
		   unsigned long long code, int nfields)
{
	return line_killed(name, flags, code, 0, nfields);
}

static void test_a_signal_while_exiting_is_a_kill(void **state)
{
	(void)state;
	assert_true(killed("tar", PF_EXITING, 9, 52));
	assert_true(killed("cp", PF_EXITING | 0x400000, 15, 52));
	/* a core dump sets 0x80 beside the signal */
	assert_true(killed("dd", PF_EXITING, 0x80 | 11, 52));
	/* newer kernels add fields after 52 */
	assert_true(killed("tar", PF_EXITING, 9, 60));
}

static void test_exit_and_a_live_task_are_no_kill(void **state)
{
	(void)state;
	/* exit(1): the status is in the high byte */
	assert_false(killed("tar", PF_EXITING, 1 << 8, 52));
	assert_false(killed("tar", PF_EXITING, 0, 52));
	/* a live task that closes its file (a code from an earlier life) */
	assert_false(killed("tar", 0, 9, 52));
	assert_false(killed("tar", 0x400000, 9, 52));
}

static void test_the_fields_are_counted_after_the_last_paren(void **state)
{
	(void)state;
	/* a name made to shift the count: spaces and ") 4 " inside it */
	assert_true(killed("a) 4 4 4 (b", PF_EXITING, 9, 52));
	assert_false(killed("a) 4 4 4 (b", 0, 9, 52));
	assert_false(killed("x) 0 0 0 0 0 0 0 0 0 0", 0, 9, 52));
	/* only field 9 is the flags, only field 52 the exit code */
	assert_false(line_killed("tar", 0, 9, PF_EXITING, 52));
	assert_false(line_killed("tar", PF_EXITING, 0, 9, 53));
	assert_true(line_killed("tar", PF_EXITING, 9, 0, 53));
}

static void test_a_short_or_odd_line_is_no_kill(void **state)
{
	(void)state;
	assert_false(killed("tar", PF_EXITING, 9, 51));
	assert_false(fused_stat_says_killed(""));
	assert_false(fused_stat_says_killed("4242 tar S 1 2 3"));
	assert_false(fused_stat_says_killed("4242 (tar)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_signal_while_exiting_is_a_kill),
		cmocka_unit_test(test_exit_and_a_live_task_are_no_kill),
		cmocka_unit_test(test_the_fields_are_counted_after_the_last_paren),
		cmocka_unit_test(test_a_short_or_odd_line_is_no_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
