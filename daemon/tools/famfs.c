// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs: the command-line front end; it dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct famfs_command commands[] = {
	{ "fsck", "check a famfs on a device or a mounted famfs", cmd_fsck },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"famfs shares memory (CXL, or any devdax device) between hosts as\n"
		"files. 'mkfs.famfs DEVICE' makes one; these commands work on it.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"'famfs COMMAND --help' explains a command, its options and its\n"
		"exit status. See also famfs(8) and mkfs.famfs(8).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-?")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("famfs %s\n", FAMFS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "famfs: '%s' is not a famfs command; see 'famfs --help'\n",
		argv[1]);
	return 2;
}
