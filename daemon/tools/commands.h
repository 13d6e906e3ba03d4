/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The subcommands of famfs(8); each lives in its own cmd_*.c file. */
#ifndef FAMFS_COMMANDS_H
#define FAMFS_COMMANDS_H

#include <stdbool.h>

#include "cli.h"
#include "modeopt.h"

struct famfs_command {
	const char *name;
	const char *summary; /* one line for famfs --help */
	int (*run)(int argc, char **argv);
};

int cmd_check(int argc, char **argv);
int cmd_daxdev(int argc, char **argv);
int cmd_devadd(int argc, char **argv);
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

/*
 * The commands that change or check a famfs, as daxctl's are: *_parse()
 * turns argv into a struct of parameters, *_run() does the work from that
 * struct alone, so it can be called (and tested) without a command line.
 * *_parse() returns false when there is nothing to run: the help was
 * printed or the command line is wrong (said on stderr), and *code is
 * the exit code. *_run() returns the command's exit code.
 */

struct mkdir_args {
	const char *device; /* --device: paths are relative to its root */
	struct cli_owner own;
	bool parents; /* -p */
	int verbose;
	char *const *dirs;
	int ndirs; /* at least one */
};
bool mkdir_parse(int argc, char **argv, struct mkdir_args *a, int *code);
int mkdir_run(const struct mkdir_args *a);

struct creat_file {
	char name[PATH_MAX]; /* as given: in the mount, or in --device */
	uint64_t size;	     /* 0: the file must exist already */
	uint64_t seed;	     /* the pattern's seed, when filled */
	bool fill;
};

struct creat_args {
	const char *device;
	struct cli_owner own; /* the mode less the umask */
	const struct famfs_interleave *il; /* NULL: contiguous */
	struct famfs_interleave il_buf;	   /* where parse keeps *il */
	uint32_t threads; /* that fill files; 0: one per CPU */
	bool multi;	  /* -M: end with a count of the files */
	int verbose;
	struct creat_file *files;
	unsigned int nfiles; /* at least one */
};
bool creat_parse(int argc, char **argv, struct creat_args *a, int *code);
int creat_run(const struct creat_args *a);
/* What creat_parse() allocated. */
void creat_args_free(struct creat_args *a);

struct cp_args {
	const char *device;
	struct cli_owner own; /* mode 0: each source's, less the umask */
	const struct famfs_interleave *il; /* NULL: contiguous */
	struct famfs_interleave il_buf;
	uint32_t threads; /* that copy files; at least 1 */
	bool recursive;	  /* -r */
	bool dereference; /* -L */
	bool compare;	  /* -c: compare, change nothing */
	int verbose;
	char *const *sources;
	int nsources; /* at least one */
	const char *dest;
};
bool cp_parse(int argc, char **argv, struct cp_args *a, int *code);
int cp_run(const struct cp_args *a);

struct fsck_args {
	const char *path; /* a device, an image or a mount point */
	struct modeopt mode; /* upstream's mode options */
	bool json, human, repair;
	uint32_t nbuckets; /* -B: also show the use of N buckets */
	int verbose;
};
/* fsck's codes are e2fsck's (FAMFS_FSCK_*), not CLI_*. */
bool fsck_parse(int argc, char **argv, struct fsck_args *a, int *code);
int fsck_run(const struct fsck_args *a);

struct devadd_args {
	const char *target; /* a mount point, or the primary device */
	const char *device; /* the device to add */
	bool force;
	int verbose;
};
bool devadd_parse(int argc, char **argv, struct devadd_args *a, int *code);
int devadd_run(const struct devadd_args *a);

#endif
