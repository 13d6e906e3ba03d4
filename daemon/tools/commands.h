/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of famfs(8); each lives in its own cmd_*.c file. */
#ifndef FAMFS_COMMANDS_H
#define FAMFS_COMMANDS_H

struct famfs_command {
	const char *name;
	const char *summary; /* one line for famfs --help */
	int (*run)(int argc, char **argv);
};

int cmd_check(int argc, char **argv);
int cmd_chkread(int argc, char **argv);
int cmd_clone(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_creat(int argc, char **argv);
int cmd_flush(int argc, char **argv);
int cmd_fsck(int argc, char **argv);
int cmd_getmap(int argc, char **argv);
int cmd_logplay(int argc, char **argv);
int cmd_mkdir(int argc, char **argv);
int cmd_mkmeta(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_verify(int argc, char **argv);

#endif
