// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs mkmeta: upstream's standalone famfs needs the .meta files created
 * in a fresh mount by hand; the famfs daemon serves them itself. Kept so
 * that upstream's scripts keep working, and says so.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs mkmeta DEVICE|MOUNTPOINT\n"
		"\n"
		"Upstream's standalone famfs needs this to create .meta/.superblock and\n"
		".meta/.log in a new mount of DEVICE. The famfs daemon serves them from\n"
		"the moment the mount is made, so here mkmeta only checks that they are\n"
		"there, in the mount of DEVICE (a devdax device or an image file) or at\n"
		"MOUNTPOINT.\n"
		"\n"
		"Exit status: 0 the .meta files are there; 1 they are not (DEVICE is not\n"
		"mounted, or not a mounted famfs); 2 usage error.\n");
}

int cmd_mkmeta(int argc, char **argv)
{
	int verbose = 0; /* accepted, as upstream's; there is nothing to say */
	const struct tool_opt opts[] = {
		OPT_COUNT('v', "verbose", &verbose),
		OPT_HELP_ALL,
		OPT_END,
	};
	char where[PATH_MAX];
	const char *target;
	struct cli_fs fs;
	struct stat st;
	int rc;

	rc = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1) {
		return cli_usage_error(CLI_USAGE);
	}
	target = argv[optind];
	/* upstream names the device; a directory is taken as the mount */
	if (stat(target, &st) == 0 && !S_ISDIR(st.st_mode)) {
		if (!famfs_dev_mounted(target, where, sizeof(where))) {
			fprintf(stderr, "famfs mkmeta: %s is not mounted; 'famfs mount %s MOUNTPOINT' mounts it, and the daemon serves .meta\n",
				target, target);
			return CLI_FAIL;
		}
		target = where;
	}
	if (cli_fs_open(&fs, NULL, target, false))
		return CLI_FAIL;
	printf("famfs mkmeta: %s: nothing to do; the famfs daemon serves %s/.meta itself\n",
	       argv[optind], fs.root);
	cli_fs_close(&fs);
	return CLI_OK;
}
