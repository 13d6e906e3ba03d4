/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Command lines read from a table, in the manner of ndctl's parse-options:
 * each option says where its value goes, and one function reads them all
 * into the command's parameter struct. The getopt_long() strings are made
 * from the table, so a bad option gets getopt's own message.
 */
#ifndef FAMFS_TOOL_OPTS_H
#define FAMFS_TOOL_OPTS_H

#include <stdbool.h>
#include <stdio.h>

enum tool_opt_kind {
	TOOL_OPT_END,
	TOOL_OPT_FLAG, /* no argument: sets a bool */
	TOOL_OPT_COUNT, /* no argument: adds one to an int (-v -v) */
	TOOL_OPT_STRING, /* keeps its argument in a const char * */
	TOOL_OPT_VALUE, /* hands its argument to set() */
	TOOL_OPT_CALL, /* no argument: calls set() */
	TOOL_OPT_HELP, /* asks for the help */
};

struct tool_opt {
	int key; /* the short option's letter, 0 for none */
	const char *name; /* the long option's name, NULL for none */
	enum tool_opt_kind kind;
	void *dest;
	/*
	 * VALUE and CALL: 0 to go on; -1 after printing why @arg or the
	 * option is refused; 1 when the option did all there is to do
	 * (--version).
	 */
	int (*set)(const struct tool_opt *o, const char *arg);
};

/* @p as a void *, after the compiler checked it points to a @type */
#define TOOL_OPT_DEST(p, type) ((void *)(1 ? (p) : (type *)0))

#define OPT_FLAG(k, n, p) \
	{ (k), (n), TOOL_OPT_FLAG, TOOL_OPT_DEST(p, bool), NULL }
#define OPT_COUNT(k, n, p) \
	{ (k), (n), TOOL_OPT_COUNT, TOOL_OPT_DEST(p, int), NULL }
#define OPT_STRING(k, n, p) \
	{ (k), (n), TOOL_OPT_STRING, TOOL_OPT_DEST(p, const char *), NULL }
#define OPT_VALUE(k, n, p, fn) { (k), (n), TOOL_OPT_VALUE, (p), (fn) }
#define OPT_CALL(k, n, p, fn) { (k), (n), TOOL_OPT_CALL, (p), (fn) }
/* -h, --help and upstream's -? */
#define OPT_HELP(k, n) { (k), (n), TOOL_OPT_HELP, NULL, NULL }
#define OPT_HELP_ALL OPT_HELP('h', "help"), OPT_HELP('?', NULL)
#define OPT_END { 0 }

/* A table holds at most this many options. */
#define TOOL_OPTS_MAX 32

enum tool_opts_result {
	TOOL_OPTS_OPERANDS, /* all options read: the operands start at optind */
	TOOL_OPTS_HELP, /* the help was asked for */
	TOOL_OPTS_DONE, /* an option did all there was to do */
	TOOL_OPTS_BAD, /* a bad option or value, already said on stderr */
};

/*
 * Read the options of @argv into what @opts names, from the start
 * (optind is reset). @in_order stops at the first operand, for a program
 * whose operands are a command with options of its own.
 */
enum tool_opts_result tool_opts_parse(int argc, char **argv,
				      const struct tool_opt *opts,
				      bool in_order);

/*
 * What a program does with tool_opts_parse()'s @r: -1 to go on with the
 * operands at optind; otherwise the exit code to return: @ok after the
 * help (@usage, on stdout) or an option that did all, @bad after a usage
 * error (tool_usage_error()).
 */
int tool_opts_exit(enum tool_opts_result r, const char *prog,
		   void (*usage)(FILE *), int ok, int bad);
/*
 * After the line that says what is wrong with the command line, the one
 * that points to "@prog --help" (on stderr, as the whole help would bury
 * the reason); returns @code.
 */
int tool_usage_error(const char *prog, int code);

/* For an option that is accepted and changes nothing (upstream's) */
int tool_opt_ignored(const struct tool_opt *o, const char *arg);

/*
 * --version: "PROGRAM VERSION" on stdout, for an entry whose dest is the
 * program's name; then the program is done.
 */
int tool_opt_version(const struct tool_opt *o, const char *arg);

#endif
