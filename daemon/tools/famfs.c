// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs: the command-line front end; it dispatches to a subcommand. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static const struct famfs_command commands[] = {
	{ "mount", "mount a famfs (runs mount.famfs)", cmd_mount },
	{ "status", "list mounted famfs file systems and their health", cmd_status },
	{ "fsck", "check a famfs on a device or a mounted famfs", cmd_fsck },
	{ "check", "check that every file in a mount is mapped by the log", cmd_check },
	{ "devadd", "add a device to a famfs", cmd_devadd },
	{ "daxdev", "list a famfs's devices and where this host finds them", cmd_daxdev },
	{ "mkdir", "create directories", cmd_mkdir },
	{ "creat", "create (allocate) files, optionally filled with a pattern", cmd_creat },
	{ "cp", "copy files and directory trees into a famfs", cmd_cp },
	{ "verify", "check a file's contents against a creat -r pattern", cmd_verify },
	{ "flush", "write back the CPU cache for files", cmd_flush },
	{ "logplay", "show the log, and make a mount show every entry", cmd_logplay },
	{ "getmap", "show where a file's bytes live on the device", cmd_getmap },
	{ "chkread", "compare a file read with read(2) and with mmap", cmd_chkread },
	{ "mkmeta", "(upstream's standalone famfs only; not needed)", cmd_mkmeta },
	{ "clone", "log a second file over a file's memory (testing only)", cmd_clone },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Exit codes of famfs itself, as upstream's: 1 no command, 3 unknown one. */
#define EXIT_NO_COMMAND 1
#define EXIT_UNKNOWN_COMMAND 3

/* The commands that can work on an unmounted device (--device). */
static bool takes_device(const char *name)
{
	static const char *const names[] = { "mkdir", "creat",	 "cp",
					     "verify", "getmap", "flush",
					     "logplay" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs [--device DEV] [--dryrun] [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"famfs shares memory (CXL, or any devdax device) between hosts as\n"
		"files. 'mkfs.famfs DEVICE' makes one, 'famfs mount' mounts it, and\n"
		"these commands work on it.\n"
		"\n"
		"Global options:\n"
		"  -D, --device=DEV  work on the famfs on DEV (a /dev/daxX.Y device or\n"
		"                    an image file) instead of a mounted famfs; paths\n"
		"                    are then relative to the famfs root. For recovery\n"
		"                    and tests; mkdir, creat, cp, verify, getmap, flush\n"
		"                    and logplay take it.\n"
		"  -n, --dryrun      same as 'logplay -n'; no other command has a dry run\n"
		"  -V, --version     print the version\n"
		"  -h, --help        show this help\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"'famfs COMMAND --help' explains a command, its options and its\n"
		"exit status. See also famfs(8) and mkfs.famfs(8).\n"
		"\n"
		"Exit status of famfs itself: 1 when no command is given, 3 for an\n"
		"unknown command; otherwise that of the command.\n");
}

static void say(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0) {
		/* nowhere else to say it */
	}
}

/*
 * The memory we map went away: the daemon serving a mount died (its
 * mapped .meta files fault), the device was removed or its memory
 * failed. Say so and stop, rather than die of the signal. Only
 * async-signal-safe calls here.
 */
static void device_lost(int sig)
{
	(void)sig;
	say("famfs");
	if (cli_cmd) {
		say(" ");
		say(cli_cmd);
	}
	say(": lost the device");
	if (cli_open_dev[0]) {
		say(" (");
		say(cli_open_dev);
		say(")");
	}
	say(": a bus error reading its memory (the daemon of the mount died, the device went away or its memory failed); stopped\n");
	_exit(1);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = device_lost };
	const struct tool_opt opts[] = {
		OPT_STRING('D', "device", &cli_device),
		OPT_FLAG('n', "dryrun", &cli_dryrun),
		OPT_CALL('V', "version", "famfs", tool_opt_version),
		OPT_HELP_ALL,
		OPT_END,
	};
	int rc;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	/* in order: stop at the command; what follows belongs to it */
	rc = tool_opts_exit(tool_opts_parse(argc, argv, opts, true), "famfs",
			    usage, 0, EXIT_NO_COMMAND);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		fprintf(stderr, "famfs: no command given\n");
		return cli_usage_error(EXIT_NO_COMMAND);
	}
	if (!strcmp(argv[optind], "help")) {
		/* "famfs help CMD" as upstream: the command's own help. */
		if (optind + 1 < argc) {
			char *hargv[] = { argv[optind + 1], "--help", NULL };

			for (size_t i = 0; i < NCOMMANDS; i++)
				if (!strcmp(argv[optind + 1], commands[i].name))
					return commands[i].run(2, hargv);
		}
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[optind], commands[i].name))
			continue;
		cli_cmd = commands[i].name;
		if (cli_device && !takes_device(commands[i].name)) {
			fprintf(stderr, "famfs: --device does not apply to '%s'%s\n",
				commands[i].name,
				!strcmp(commands[i].name, "fsck") ?
					"; give the device as its argument" : "");
			return cli_usage_error(2);
		}
		if (cli_dryrun && strcmp(commands[i].name, "logplay")) {
			fprintf(stderr, "famfs: --dryrun applies only to logplay; '%s' has no dry run\n",
				commands[i].name);
			return cli_usage_error(2);
		}
		return commands[i].run(argc - optind, argv + optind);
	}
	fprintf(stderr, "famfs: '%s' is not a famfs command; see 'famfs --help'\n",
		argv[optind]);
	return EXIT_UNKNOWN_COMMAND;
}
