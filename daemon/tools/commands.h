/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of famfs(8); each lives in its own cmd_*.c file. */
#ifndef FAMFS_COMMANDS_H
#define FAMFS_COMMANDS_H

struct famfs_command {
	const char *name;
	const char *summary; /* one line for famfs --help */
	int (*run)(int argc, char **argv);
};

int cmd_fsck(int argc, char **argv);

#endif
