// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Option values the famfs subcommands share (numbers, sizes, modes, the
 * end of an option switch) and the global options; see cli.h.
 */
#include <errno.h>
#include <getopt.h>
#include <unistd.h>

#include "cli.h"
#include "tool_util.h"

const char *cli_device;
const char *cli_cmd;
char cli_open_dev[4096];
bool cli_dryrun;

bool cli_help_asked(int c)
{
	return c == 'h' || (c == '?' && optopt == '?');
}

int cli_usage(void (*usage)(FILE *), int c, int ok, int bad)
{
	if (cli_help_asked(c)) {
		usage(stdout);
		return ok;
	}
	return cli_usage_error(bad);
}

int cli_usage_error(int code)
{
	fprintf(stderr, "Try 'famfs%s%s --help' for more information.\n",
		cli_cmd ? " " : "", cli_cmd ? cli_cmd : "");
	return code;
}

int cli_parse_device_verbose(int argc, char **argv, void (*usage)(FILE *),
			     const char **device, int *verbose)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'D' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	*device = cli_device;
	*verbose = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "D:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			*device = optarg;
			break;
		case 'v':
			(*verbose)++;
			break;
		case 'h':
		default:
			return cli_usage(usage, c, CLI_OK, CLI_USAGE);
		}
	}
	return -1;
}

int cli_parse_size(const char *what, const char *s, uint64_t *out)
{
	if (famfs_parse_size(s, out)) {
		fprintf(stderr, "famfs: %s: %s\n", what, famfs_errmsg());
		return -1;
	}
	return 0;
}

int cli_parse_number(const char *what, const char *s, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	if (famfs_parse_number(s, min, max, out)) {
		fprintf(stderr, "famfs: %s: %s\n", what, famfs_errmsg());
		return -1;
	}
	return 0;
}

int cli_parse_mode(const char *what, const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || !*s || *end || v > 07777) {
		fprintf(stderr, "famfs: %s: \"%s\" is not an octal mode (0 to 7777)\n",
			what, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_u32(const char *what, const char *s, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_number(what, s, 0, UINT32_MAX, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cli_owner_opt(struct cli_owner *o, int c, const char *arg)
{
	switch (c) {
	case 'm':
		return cli_parse_mode("-m", arg, &o->mode) ? -1 : 1;
	case 'u':
		return cli_parse_u32("-u", arg, &o->uid) ? -1 : 1;
	case 'g':
		return cli_parse_u32("-g", arg, &o->gid) ? -1 : 1;
	}
	return 0;
}

int cli_interleave_opt(struct cli_interleave *il, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'N':
		il->set = true;
		if (cli_parse_number("-N (strips)", arg, 1, FAMFS_MAX_STRIPS, &v))
			return -1;
		il->nstrips = (uint32_t)v;
		return 1;
	case 'B':
		il->set = true;
		return cli_parse_u32("-B (buckets)", arg, &il->nbuckets) ? -1 : 1;
	case 'C':
		il->set = true;
		return cli_parse_size("-C (chunk size)", arg, &il->chunk_size) ?
			       -1 : 1;
	}
	return 0;
}

int cli_interleave_finish(struct cli_interleave *il,
			  struct famfs_interleave *buf,
			  const struct famfs_interleave **out)
{
	*out = NULL;
	if (!il->set)
		return 0;
	/*
	 * Upstream can stripe across several devices with -N alone; we have
	 * one device, so strips always come from buckets of it, one bucket
	 * per strip unless -B asks for more.
	 */
	if (!il->nstrips) {
		fprintf(stderr, "famfs: -B and -C describe an interleaved layout and need -N (the number of strips)\n");
		return -1;
	}
	buf->nstrips = il->nstrips;
	buf->nbuckets = il->nbuckets ? il->nbuckets : il->nstrips;
	buf->chunk_size = il->chunk_size ? il->chunk_size : FAMFS_ALLOC_UNIT;
	*out = buf;
	return 0;
}
