// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs clone: upstream's test tool. It logs a second file over the memory
 * of the first, the cross-link that fsck must report and that famfs-fused
 * must refuse to serve; upstream's test scripts use it to check both.
 */
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs clone [-v] [-D DEVICE] SRC DEST\n"
		"\n"
		"For testing only: log DEST as a new file that shares the memory of the\n"
		"famfs file SRC (same size, map, mode and owner). This damages the file\n"
		"system on purpose: two files then own the same memory. famfs fsck\n"
		"and famfs check report the cross-link (exit 1), famfs status calls\n"
		"the mount NOT HEALTHY, and famfs-fused refuses DEST (opening it gives\n"
		"EUCLEAN, \"Structure needs cleaning\") while SRC, the first owner,\n"
		"keeps working.\n"
		"There is no repair: make the file system again. Only the master host\n"
		"can clone.\n"
		"\n"
		"Options:\n"
		"  -D, --device=DEV  work on the famfs on DEV (paths relative to its root)\n"
		"  -v, --verbose     say what was logged\n"
		"  -h, -?, --help    show this help\n"
		"\n"
		"Exit status:\n"
		"  0  DEST was logged\n"
		"  1  it was not: SRC missing or a directory, DEST exists, client host...\n"
		"  2  usage error\n");
}

int cmd_clone(int argc, char **argv)
{
	const char *device;
	char src[FAMFS_PATH_LEN], dst[FAMFS_PATH_LEN];
	char show_src[PATH_MAX + 96], show_dst[PATH_MAX + 96];
	struct famfs_writer w;
	struct cli_fs fs;
	int verbose = 0, c, rc = CLI_FAIL;

	c = cli_parse_device_verbose(argc, argv, usage, &device, &verbose);
	if (c >= 0)
		return c;
	if (argc - optind != 2) {
		fprintf(stderr, "famfs clone: give SRC and DEST\n");
		return cli_usage_error(CLI_USAGE);
	}
	if (cli_fs_open(&fs, device, argv[optind], true))
		return CLI_FAIL;
	if (cli_relpath(&fs, argv[optind], src) ||
	    cli_relpath_new(&fs, argv[optind + 1], dst) ||
	    cli_writer_begin(&fs, &w, "clone"))
		goto out;
	if (famfs_writer_clone(&w, src, dst)) {
		fprintf(stderr, "famfs clone: %s\n", famfs_errmsg());
	} else {
		fprintf(stderr, "famfs clone: %s shares the memory of %s: the file system is now cross-linked, as asked\n",
			cli_show(&fs, dst, show_dst, sizeof(show_dst)),
			cli_show(&fs, src, show_src, sizeof(show_src)));
		if (verbose)
			printf("famfs clone: logged %s\n", dst);
		rc = CLI_OK;
	}
	famfs_writer_end(&w);
out:
	cli_fs_close(&fs);
	return rc;
}
