// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Option values the famfs subcommands share (numbers, sizes, modes, the
 * end of an option switch) and the global options; see cli.h.
 */
#include <errno.h>
#include <unistd.h>

#include "cli.h"
#include "tool_opts.h"
#include "tool_util.h"

const char *cli_device;
const char *cli_cmd;
char cli_open_dev[4096];
bool cli_dryrun;

const char *cli_prog(void)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "famfs%s%s", cli_cmd ? " " : "",
		 cli_cmd ? cli_cmd : "");
	return buf;
}

int cli_parse_opts(int argc, char **argv, const struct tool_opt *opts,
		   void (*usage)(FILE *), int ok, int bad)
{
	return tool_opts_exit(tool_opts_parse(argc, argv, opts, false),
			      cli_prog(), usage, ok, bad);
}

int cli_usage_error(int code)
{
	return tool_usage_error(cli_prog(), code);
}

int cli_parse_device_verbose(int argc, char **argv, void (*usage)(FILE *),
			     const char **device, int *verbose)
{
	const struct tool_opt opts[] = {
		OPT_STRING('D', "device", device),
		OPT_COUNT('v', "verbose", verbose),
		OPT_HELP_ALL,
		OPT_END,
	};

	*device = cli_device;
	*verbose = 0;
	return cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
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

/* "-X" for the messages about option @o */
static const char *opt_name(const struct tool_opt *o, char buf[3])
{
	buf[0] = '-';
	buf[1] = (char)o->key;
	buf[2] = '\0';
	return buf;
}

int cli_opt_mode(const struct tool_opt *o, const char *arg)
{
	char n[3];

	return cli_parse_mode(opt_name(o, n), arg, o->dest);
}

int cli_opt_u32(const struct tool_opt *o, const char *arg)
{
	char n[3];

	return cli_parse_u32(opt_name(o, n), arg, o->dest);
}

int cli_opt_size(const struct tool_opt *o, const char *arg)
{
	char n[3];

	return cli_parse_size(opt_name(o, n), arg, o->dest);
}

int cli_opt_nstrips(const struct tool_opt *o, const char *arg)
{
	struct cli_interleave *il = o->dest;
	uint64_t v;

	il->set = true;
	if (cli_parse_number("-N (strips)", arg, 1, FAMFS_MAX_STRIPS, &v))
		return -1;
	il->nstrips = (uint32_t)v;
	return 0;
}

int cli_opt_nbuckets(const struct tool_opt *o, const char *arg)
{
	struct cli_interleave *il = o->dest;

	il->set = true;
	return cli_parse_u32("-B (buckets)", arg, &il->nbuckets);
}

int cli_opt_chunksize(const struct tool_opt *o, const char *arg)
{
	struct cli_interleave *il = o->dest;

	il->set = true;
	return cli_parse_size("-C (chunk size)", arg, &il->chunk_size);
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

int cli_opt_how(const struct tool_opt *o, const char *arg)
{
	int *how = o->dest;

	(void)arg;
	if (*how && *how != o->key) {
		fprintf(stderr, "%s: -m/--mmap and -r/--read are mutually exclusive\n",
			cli_prog());
		return -1;
	}
	*how = o->key;
	return 0;
}

int cli_opt_how_noted(const struct tool_opt *o, const char *arg)
{
	if (cli_opt_how(o, arg))
		return -1;
	fprintf(stderr, "%s: note: -%c has no effect: the log is always read through a shared mapping\n",
		cli_prog(), o->key);
	return 0;
}
