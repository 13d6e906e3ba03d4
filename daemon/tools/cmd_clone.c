// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs clone: upstream's test tool that logs a second file over the
 * memory of the first, a cross-link that fsck must then report. We do not
 * ship a command whose only purpose is to damage a file system; tests
 * that need a cross-link build the log entry themselves.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

int cmd_clone(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "-?") ||
			 !strcmp(argv[1], "--help"))) {
		printf("Usage: famfs clone SRC DEST\n"
		       "\n"
		       "Not provided. Upstream's clone makes a second file share the\n"
		       "memory of the first: a deliberate cross-link for testing fsck.\n"
		       "famfs-fuse does not ship a command that damages a file system.\n"
		       "\n"
		       "Exit status: always 1.\n");
		return CLI_OK;
	}
	fprintf(stderr, "famfs clone: not provided: it exists upstream only to cross-link files for testing fsck; see 'famfs clone --help'\n");
	return CLI_FAIL;
}
