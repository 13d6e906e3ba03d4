// SPDX-License-Identifier: GPL-2.0-or-later
/* Command lines read from a table; see tool_opts.h. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool_opts.h"

/* getopt's value for the long option of table entry i */
#define LONG_VAL(i) (0x1000 + (i))

static bool takes_arg(const struct tool_opt *o)
{
	return o->kind == TOOL_OPT_STRING || o->kind == TOOL_OPT_VALUE;
}

/* The getopt_long() strings of @opts; the number of entries. */
static size_t getopt_strings(const struct tool_opt *opts, bool in_order,
			     char *shorts, struct option *longs)
{
	size_t i, s = 0, l = 0;

	if (in_order)
		shorts[s++] = '+';
	for (i = 0; opts[i].kind != TOOL_OPT_END; i++) {
		if (i == TOOL_OPTS_MAX) {
			fprintf(stderr, "more than %d options in a table\n",
				TOOL_OPTS_MAX);
			abort();
		}
		if (opts[i].key) {
			shorts[s++] = (char)opts[i].key;
			if (takes_arg(&opts[i]))
				shorts[s++] = ':';
		}
		if (opts[i].name)
			longs[l++] = (struct option){
				opts[i].name,
				takes_arg(&opts[i]) ? required_argument :
						      no_argument,
				NULL, LONG_VAL((int)i)
			};
	}
	shorts[s] = '\0';
	longs[l] = (struct option){ 0 };
	return i;
}

/*
 * getopt returns '?' both for -? (when it is in the option string) and for
 * a bad option; only a bad option sets optopt (0 for a bad long option,
 * which its "--" tells).
 */
static bool question_mark_asked(char **argv)
{
	return (!optopt || optopt == '?') && optind > 0 &&
	       strncmp(argv[optind - 1], "--", 2) != 0;
}

/* The entry getopt's @c stands for, or NULL for a bad option. */
static const struct tool_opt *entry_of(const struct tool_opt *opts, size_t n,
				       int c, char **argv)
{
	if (c >= LONG_VAL(0) && c < LONG_VAL((int)n))
		return &opts[c - LONG_VAL(0)];
	if (c == '?' && !question_mark_asked(argv))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (opts[i].key == c)
			return &opts[i];
	return NULL;
}

enum tool_opts_result tool_opts_parse(int argc, char **argv,
				      const struct tool_opt *opts,
				      bool in_order)
{
	char shorts[3 * TOOL_OPTS_MAX + 2];
	struct option longs[TOOL_OPTS_MAX + 1];
	size_t n = getopt_strings(opts, in_order, shorts, longs);
	const struct tool_opt *o;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		o = entry_of(opts, n, c, argv);
		if (!o)
			return TOOL_OPTS_BAD;
		switch (o->kind) {
		case TOOL_OPT_FLAG:
			*(bool *)o->dest = true;
			break;
		case TOOL_OPT_COUNT:
			++*(int *)o->dest;
			break;
		case TOOL_OPT_STRING:
			*(const char **)o->dest = optarg;
			break;
		case TOOL_OPT_VALUE:
		case TOOL_OPT_CALL:
			r = o->set(o, optarg);
			if (r)
				return r < 0 ? TOOL_OPTS_BAD : TOOL_OPTS_DONE;
			break;
		default:
			return TOOL_OPTS_HELP;
		}
	}
	return TOOL_OPTS_OPERANDS;
}

int tool_opt_ignored(const struct tool_opt *o, const char *arg)
{
	(void)o;
	(void)arg;
	return 0;
}

int tool_opts_exit(enum tool_opts_result r, const char *prog,
		   void (*usage)(FILE *), int ok, int bad)
{
	switch (r) {
	case TOOL_OPTS_OPERANDS:
		return -1;
	case TOOL_OPTS_HELP:
		usage(stdout);
		return ok;
	case TOOL_OPTS_DONE:
		return ok;
	default:
		return tool_usage_error(prog, bad);
	}
}

int tool_usage_error(const char *prog, int code)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return code;
}

int tool_opt_version(const struct tool_opt *o, const char *arg)
{
	(void)arg;
	printf("%s %s\n", (const char *)o->dest, FAMFS_VERSION);
	return 1;
}
