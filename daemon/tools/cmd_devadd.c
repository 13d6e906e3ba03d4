// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs devadd: add a device to a famfs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs devadd [-f] [-v] TARGET DEVICE\n"
		"\n"
		"Add DEVICE (a devdax device, or a regular file for testing, of whole\n"
		"2 MiB units) to the famfs TARGET: a mount point of the master's mount,\n"
		"or the primary device of an unmounted famfs. DEVICE gets a secondary\n"
		"superblock (this file system's uuid and a new device uuid); an entry in\n"
		"the log then makes it the file system's next device. Every host finds it\n"
		"by that uuid, whatever its name there (famfs daxdev lists them). Only\n"
		"the master host can add a device; a famfs has at most 24.\n"
		"\n"
		"On a mounted famfs, devadd waits (up to 10 s) until the mount serves the\n"
		"new device, and says so.\n"
		"\n"
		"Options:\n"
		"  -f, --force     overwrite what DEVICE holds (another file system);\n"
		"                  never a device of this famfs, which is refused\n"
		"  -v, --verbose   say more\n"
		"  -h, -?, --help  show this help\n"
		"\n"
		"Exit status:\n"
		"  0  the device was added\n"
		"  1  it was not (the message says why), or the mount did not take it\n"
		"  2  usage error\n");
}

bool devadd_parse(int argc, char **argv, struct devadd_args *a, int *code)
{
	const struct tool_opt opts[] = {
		OPT_FLAG('f', "force", &a->force),
		OPT_COUNT('v', "verbose", &a->verbose),
		OPT_HELP_ALL,
		OPT_END,
	};

	*a = (struct devadd_args){ 0 };
	*code = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (*code >= 0)
		return false;
	if (argc - optind != 2) {
		fprintf(stderr, "famfs devadd: %s\n",
			argc - optind < 2 ? "give the famfs and the device to add" :
					    "too many arguments");
		*code = cli_usage_error(CLI_USAGE);
		return false;
	}
	a->target = argv[optind];
	a->device = argv[optind + 1];
	return true;
}

/*
 * The mount serves a device from its next replay of the log: ask for one
 * (a lookup of a name that is not there) and read its status until it
 * counts the device, or says it is missing.
 */
static int wait_for_mount(const char *root, uint32_t index)
{
	char val[32], probe[PATH_MAX + 64];
	struct stat st;

	snprintf(probe, sizeof(probe), "%s/.famfs-devadd-%ld", root,
		 (long)getpid());
	for (int i = 0; i < 100; i++) {
		uint32_t devs = 0, missing = 0;

		stat(probe, &st);
		if (!cli_mount_status(root, "devices", val, sizeof(val)))
			devs = (uint32_t)strtoul(val, NULL, 10);
		if (!cli_mount_status(root, "devices_missing", val, sizeof(val)))
			missing = (uint32_t)strtoul(val, NULL, 10);
		if (devs > index)
			return missing ? -ENODEV : 0;
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
	return -ETIMEDOUT;
}

int devadd_run(const struct devadd_args *a)
{
	struct cli_fs fs;
	struct stat st;
	uint32_t index;
	int rc;

	rc = stat(a->target, &st) == 0 && S_ISDIR(st.st_mode) ?
		     cli_fs_open(&fs, NULL, a->target, true) :
		     cli_fs_open(&fs, a->target, "", true);
	if (rc)
		return CLI_FAIL;
	if (famfs_devadd(&fs.dev, a->device, a->force, &index)) {
		fprintf(stderr, "famfs devadd: %s: %s\n", a->device,
			famfs_errmsg());
		cli_fs_close(&fs);
		return CLI_FAIL;
	}
	printf("famfs devadd: %s is device %u of %s\n", a->device, index,
	       a->target);
	rc = fs.mounted ? wait_for_mount(fs.root, index) : 0;
	if (rc == -ENODEV)
		fprintf(stderr, "famfs devadd: the mount on %s cannot open %s (its log says why): its files there fail with EIO\n",
			fs.root, a->device);
	else if (rc)
		fprintf(stderr, "famfs devadd: the mount on %s did not take the device within 10 s (is its daemon running?)\n",
			fs.root);
	else if (fs.mounted && a->verbose)
		printf("famfs devadd: the mount on %s serves it\n", fs.root);
	cli_fs_close(&fs);
	return rc ? CLI_FAIL : CLI_OK;
}

int cmd_devadd(int argc, char **argv)
{
	struct devadd_args a;
	int code;

	if (!devadd_parse(argc, argv, &a, &code))
		return code;
	return devadd_run(&a);
}
