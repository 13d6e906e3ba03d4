// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The option tables of the tools: tool_opts_parse() itself, and the
 * commands' *_parse() functions, which fill the parameter structs that
 * their *_run() functions take.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "commands.h"
#include "tool_opts.h"

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })
#define ARGC(v) ((int)(sizeof(v) / sizeof((v)[0])) - 1)

/* Parse @argv with @opts; stderr (getopt's messages) is sent away. */
#define PARSE(opts, in_order, ...)                                    \
	quietly(opts, in_order, ARGC(ARGV(__VA_ARGS__)), ARGV(__VA_ARGS__))

static enum tool_opts_result quietly(const struct tool_opt *opts,
				     bool in_order, int argc, char **argv)
{
	enum tool_opts_result r;
	FILE *saved = stderr;

	stderr = fopen("/dev/null", "w");
	assert_non_null(stderr);
	r = tool_opts_parse(argc, argv, opts, in_order);
	fclose(stderr);
	stderr = saved;
	return r;
}

/* A table of each kind, as a command would have it */
struct params {
	bool flag;
	int count;
	const char *str;
	unsigned int value, calls;
};

static int set_value(const struct tool_opt *o, const char *arg)
{
	struct params *p = o->dest;

	if (strcmp(arg, "bad") == 0)
		return -1;
	p->value = (unsigned int)atoi(arg);
	return 0;
}

static int call_me(const struct tool_opt *o, const char *arg)
{
	struct params *p = o->dest;

	assert_null(arg);
	p->calls++;
	return p->calls == 3 ? 1 : 0; /* the third call is "all done" */
}

#define TABLE(p)                                         \
	const struct tool_opt opts[] = {                 \
		OPT_FLAG('f', "flag", &(p).flag),        \
		OPT_COUNT('v', "verbose", &(p).count),   \
		OPT_STRING('s', "str", &(p).str),        \
		OPT_VALUE('n', "num", &(p), set_value),  \
		OPT_CALL(0, "call", &(p), call_me),      \
		OPT_HELP_ALL,                            \
		OPT_END,                                 \
	}

static void each_kind_by_short_and_long_name(void **state)
{
	struct params p = { 0 };
	TABLE(p);

	(void)state;
	assert_int_equal(PARSE(opts, false, "cmd", "-f", "-vv", "--verbose",
			       "-s", "x", "--num=7", "--call", "a", "b"),
			 TOOL_OPTS_OPERANDS);
	assert_true(p.flag);
	assert_int_equal(p.count, 3);
	assert_string_equal(p.str, "x");
	assert_int_equal(p.value, 7);
	assert_int_equal(p.calls, 1);
	assert_int_equal(optind, 8);

	memset(&p, 0, sizeof(p));
	assert_int_equal(PARSE(opts, false, "cmd", "--str", "y", "-sz", "-n",
			       "3"),
			 TOOL_OPTS_OPERANDS);
	assert_string_equal(p.str, "z"); /* the last one counts */
	assert_int_equal(p.value, 3);
	assert_false(p.flag);
	assert_int_equal(optind, 6);
}

static void operands_first_unless_in_order(void **state)
{
	struct params p = { 0 };
	TABLE(p);
	char **argv = ARGV("cmd", "a", "-v", "b");

	(void)state;
	/* options after an operand are still options... */
	assert_int_equal(quietly(opts, false, 4, argv), TOOL_OPTS_OPERANDS);
	assert_int_equal(p.count, 1);
	assert_int_equal(optind, 2);
	/* ...except in order, where the operand starts a command line */
	p.count = 0;
	argv = ARGV("famfs", "-f", "creat", "-v");
	assert_int_equal(quietly(opts, true, 4, argv), TOOL_OPTS_OPERANDS);
	assert_true(p.flag);
	assert_int_equal(p.count, 0);
	assert_int_equal(optind, 2);
	assert_string_equal(argv[optind], "creat");
}

static void help_in_three_spellings(void **state)
{
	struct params p = { 0 };
	TABLE(p);

	(void)state;
	assert_int_equal(PARSE(opts, false, "cmd", "-h"), TOOL_OPTS_HELP);
	assert_int_equal(PARSE(opts, false, "cmd", "--help"), TOOL_OPTS_HELP);
	assert_int_equal(PARSE(opts, false, "cmd", "-?"), TOOL_OPTS_HELP);
	assert_int_equal(PARSE(opts, false, "cmd", "-v", "-?", "-x"),
			 TOOL_OPTS_HELP);
}

static void bad_options_and_values(void **state)
{
	struct params p = { 0 };
	TABLE(p);

	(void)state;
	assert_int_equal(PARSE(opts, false, "cmd", "-x"), TOOL_OPTS_BAD);
	assert_int_equal(PARSE(opts, false, "cmd", "--bogus"), TOOL_OPTS_BAD);
	/* "--he" is --help cut short; "--v" is not ambiguous either */
	assert_int_equal(PARSE(opts, false, "cmd", "--he"), TOOL_OPTS_HELP);
	assert_int_equal(PARSE(opts, false, "cmd", "-s"), TOOL_OPTS_BAD);
	assert_int_equal(PARSE(opts, false, "cmd", "--str"), TOOL_OPTS_BAD);
	assert_int_equal(PARSE(opts, false, "cmd", "--flag=1"), TOOL_OPTS_BAD);
	assert_int_equal(PARSE(opts, false, "cmd", "-n", "bad"),
			 TOOL_OPTS_BAD);
	/* a short option with no short form in the table */
	assert_int_equal(PARSE(opts, false, "cmd", "-c"), TOOL_OPTS_BAD);
	/* a bad option after a good help still stops at the bad one first */
	assert_int_equal(PARSE(opts, false, "cmd", "-x", "-h"), TOOL_OPTS_BAD);
}

static void an_option_can_finish_the_work(void **state)
{
	struct params p = { 0 };
	TABLE(p);

	(void)state;
	assert_int_equal(PARSE(opts, false, "cmd", "--call", "--call",
			       "--call", "-x"),
			 TOOL_OPTS_DONE);
	assert_int_equal(p.calls, 3);
}

/*
 * The exit code @parse leaves in the caller's int code for a command line
 * it does not accept (a usage error, or the help).
 */
#define REFUSED(parse, a, ...)                                            \
	(assert_false(parse(ARGC(ARGV(__VA_ARGS__)), ARGV(__VA_ARGS__), (a), \
			    &code)),                                          \
	 code)

/* The commands' tables: each option lands in its field of the struct. */
static void mkdir_parse_fills_its_args(void **state)
{
	char **argv = ARGV("mkdir", "-p", "-m", "0700", "--uid=5", "-g", "6",
			   "-D", "img", "-v", "a", "b");
	struct mkdir_args a;
	int code;

	(void)state;
	assert_true(mkdir_parse(12, argv, &a, &code));
	assert_true(a.parents);
	assert_int_equal(a.own.mode, 0700);
	assert_int_equal(a.own.uid, 5);
	assert_int_equal(a.own.gid, 6);
	assert_string_equal(a.device, "img");
	assert_int_equal(a.verbose, 1);
	assert_int_equal(a.ndirs, 2);
	assert_string_equal(a.dirs[1], "b");

	assert_int_equal(REFUSED(mkdir_parse, &a, "mkdir", "-m", "8", "a"),
			 CLI_USAGE);
	assert_int_equal(REFUSED(mkdir_parse, &a, "mkdir", "-p"), CLI_USAGE);
}

static void creat_parse_fills_its_args(void **state)
{
	char **argv = ARGV("creat", "-s", "2m", "-r", "-S", "9", "-N", "2",
			   "-C", "4m", "-t", "3", "f");
	struct creat_args a;
	int code;

	(void)state;
	assert_true(creat_parse(13, argv, &a, &code));
	assert_int_equal(a.nfiles, 1);
	assert_string_equal(a.files[0].name, "f");
	assert_int_equal(a.files[0].size, 2 << 20);
	assert_true(a.files[0].fill);
	assert_int_equal(a.files[0].seed, 9);
	assert_int_equal(a.threads, 3);
	assert_non_null(a.il);
	assert_int_equal(a.il->nstrips, 2);
	assert_int_equal(a.il->nbuckets, 2);
	assert_int_equal(a.il->chunk_size, 4 << 20);
	creat_args_free(&a);

	argv = ARGV("creat", "-M", "x,1m", "--multi", "y,2m,5");
	assert_true(creat_parse(5, argv, &a, &code));
	assert_int_equal(a.nfiles, 2);
	assert_string_equal(a.files[1].name, "y");
	assert_int_equal(a.files[1].seed, 5);
	creat_args_free(&a);

	assert_int_equal(REFUSED(creat_parse, &a, "creat", "-t", "257", "f"),
			 CLI_USAGE);
	/* -S needs -r */
	assert_int_equal(REFUSED(creat_parse, &a, "creat", "-S", "1", "f"),
			 CLI_USAGE);
	assert_int_equal(REFUSED(creat_parse, &a, "creat", "--help"), CLI_OK);
}

static void cp_parse_fills_its_args(void **state)
{
	char **argv = ARGV("cp", "-rLc", "-t", "0", "-m", "0600", "s1", "s2",
			   "dest");
	struct cp_args a;
	int code;

	(void)state;
	assert_true(cp_parse(9, argv, &a, &code));
	assert_true(a.recursive && a.dereference && a.compare);
	assert_int_equal(a.threads, 1); /* upstream's -t0: no pool */
	assert_int_equal(a.own.mode & 0700, 0600);
	assert_null(a.il);
	assert_int_equal(a.nsources, 2);
	assert_string_equal(a.dest, "dest");

	/* -B without -N */
	assert_int_equal(REFUSED(cp_parse, &a, "cp", "-B", "4", "s", "d"),
			 CLI_USAGE);
	assert_int_equal(REFUSED(cp_parse, &a, "cp", "only-one"), CLI_USAGE);
}

static void fsck_parse_keeps_upstreams_meanings(void **state)
{
	char **argv = ARGV("fsck", "-h", "-vv", "-B", "4", "--repair", "-m",
			   "-f", "--nodax", "-M", "img");
	struct fsck_args a;
	int code;

	(void)state;
	assert_true(fsck_parse(11, argv, &a, &code));
	assert_true(a.human); /* upstream's -h is --human */
	assert_int_equal(a.verbose, 2);
	assert_int_equal(a.nbuckets, 4);
	assert_true(a.repair);
	assert_true(a.mode.set_daxmode);
	assert_string_equal(a.path, "img");

	argv = ARGV("fsck", "-r", "img"); /* upstream's --read */
	assert_true(fsck_parse(3, argv, &a, &code));
	assert_false(a.repair);
	assert_int_equal(REFUSED(fsck_parse, &a, "fsck", "-m", "-r", "img"),
			 FAMFS_FSCK_USAGE);
	assert_int_equal(REFUSED(fsck_parse, &a, "fsck", "-B", "0", "img"),
			 FAMFS_FSCK_USAGE);
	assert_int_equal(REFUSED(fsck_parse, &a, "fsck", "-F", "img"),
			 FAMFS_FSCK_USAGE);
	assert_int_equal(REFUSED(fsck_parse, &a, "fsck", "--help"),
			 FAMFS_FSCK_CLEAN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_kind_by_short_and_long_name),
		cmocka_unit_test(operands_first_unless_in_order),
		cmocka_unit_test(help_in_three_spellings),
		cmocka_unit_test(bad_options_and_values),
		cmocka_unit_test(an_option_can_finish_the_work),
		cmocka_unit_test(mkdir_parse_fills_its_args),
		cmocka_unit_test(creat_parse_fills_its_args),
		cmocka_unit_test(cp_parse_fills_its_args),
		cmocka_unit_test(fsck_parse_keeps_upstreams_meanings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
