// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs mkmeta: upstream's standalone famfs needs the .meta files created
 * in a fresh mount by hand; the famfs daemon serves them itself. Kept so
 * that upstream's scripts keep working, and says so.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs mkmeta MOUNTPOINT\n"
		"\n"
		"Upstream's standalone famfs needs this to create .meta/.superblock and\n"
		".meta/.log in a new mount. The famfs daemon serves them from the moment\n"
		"the mount is made, so here mkmeta only checks that they are there.\n"
		"\n"
		"Exit status: 0 the .meta files are there; 1 they are not (not a mounted\n"
		"famfs); 2 usage error.\n");
}

int cmd_mkmeta(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct cli_fs fs;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		if (c == 'v')
			continue;
		return cli_usage(usage, c, CLI_OK, CLI_USAGE);
	}
	if (optind != argc - 1) {
		return cli_usage_error(CLI_USAGE);
	}
	if (cli_fs_open(&fs, NULL, argv[optind], false))
		return CLI_FAIL;
	printf("famfs mkmeta: %s: nothing to do; the famfs daemon serves %s/.meta itself\n",
	       argv[optind], fs.root);
	cli_fs_close(&fs);
	return CLI_OK;
}
