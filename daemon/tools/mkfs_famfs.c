// SPDX-License-Identifier: GPL-2.0-or-later
/* mkfs.famfs: put a new famfs on a dax device or a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libfamfs.h"
#include "modeopt.h"
#include "tool_util.h"

/* exit codes, as in mkfs.famfs(8) */
enum { MKFS_OK = 0, MKFS_FAILED = 1, MKFS_USAGE = 2 };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: mkfs.famfs [-f] [-k] [-l LOGSIZE] [-M] [-v] DEVICE [DEVICE2...]\n"
		"\n"
		"Create a famfs file system on DEVICE: a devdax device such as\n"
		"/dev/dax0.0, or a regular file (for testing) whose size is a\n"
		"multiple of 2 MiB. The host that runs mkfs becomes the famfs\n"
		"master: only it may create files; other hosts mount as clients.\n"
		"\n"
		"DEVICE is the primary device: it holds the log, and it is the one\n"
		"to mount. Each DEVICE2 is added to the file system as a secondary\n"
		"device (as famfs devadd does): every host finds it by the uuid\n"
		"written on it, whatever its name there. Every device is checked\n"
		"before any is written.\n"
		"\n"
		"Options:\n"
		"  -f, --force         overwrite an existing famfs on DEVICE\n"
		"  -k, --kill          invalidate the superblock of an existing famfs\n"
		"                      so nothing mounts it (needs -f; data is left)\n"
		"  -l, --loglen SIZE   size of the metadata log: a power of two of at\n"
		"                      least 8m (the default); suffixes k, m, g\n"
		"  -M, --set-daxmode   move a devdax DEVICE to the famfs_dax driver of\n"
		"                      famfs_fuse.ko first (famfs mode); it stays there\n"
		"  -v, --verbose       say more about what is done\n"
		"  -h, -?, --help      show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Upstream's --fuse and -D/--nodax are accepted and change nothing: the\n"
		"device node is always mapped directly, in either dax mode. -F/--nofuse\n"
		"(upstream's standalone v1 kernel module) is refused.\n"
		"\n"
		"Exit status: 0 success, 1 the file system was not made (the message\n"
		"says why), 2 usage error.\n");
}

/* After the line that says what is wrong: where to read more. */
static int usage_error(void)
{
	return tool_usage_error("mkfs.famfs", MKFS_USAGE);
}

/* -k -f: invalidate the superblock on @path. */
static int kill_super(const char *path)
{
	int rc = famfs_kill_super(path);

	if (rc == -ENOENT && access(path, F_OK) == 0) {
		/* what -k asks for is already true */
		printf("no famfs superblock on %s; nothing to invalidate\n",
		       path);
		return MKFS_OK;
	}
	if (rc) {
		fprintf(stderr, "mkfs.famfs: %s\n", famfs_errmsg());
		return MKFS_FAILED;
	}
	printf("famfs superblock on %s invalidated\n", path);
	return MKFS_OK;
}

/*
 * The earlier name (@path, or one of @more[0..i)) of the device or file
 * @more[i] names, if any: a hard link or a second node is the same one.
 */
static const char *same_device(const char *path, char **more, int i)
{
	struct famfs_dev_id a, b;
	struct stat st;

	if (stat(more[i], &st) < 0)
		return NULL; /* famfs_devadd_check() says why */
	famfs_dev_id_of(&st, &a);
	for (int j = -1; j < i; j++) {
		const char *other = j < 0 ? path : more[j];

		if (stat(other, &st) < 0)
			continue;
		famfs_dev_id_of(&st, &b);
		if (famfs_dev_id_eq(&a, &b))
			return other;
	}
	return NULL;
}

/* Add the secondaries @more[0..n) to the famfs just made on @dev. */
static int add_secondaries(struct famfs_dev *dev, char **more, int n,
			   bool force, uint64_t *space)
{
	char a[32];

	for (int i = 0; i < n; i++) {
		uint32_t index;
		struct stat st;

		if (famfs_devadd(dev, more[i], force, &index)) {
			fprintf(stderr, "mkfs.famfs: %s: %s (the famfs on %s is made, with the devices before it)\n",
				more[i], famfs_errmsg(), dev->path);
			return MKFS_FAILED;
		}
		if (stat(more[i], &st) == 0) {
			uint64_t size = 0;
			int fd = open(more[i], O_RDONLY | O_CLOEXEC);

			if (fd >= 0 && !famfs_device_size(fd, more[i], &size))
				*space += size - FAMFS_SB_REGION;
			if (fd >= 0)
				close(fd);
			printf("  device %u:         %s, %s\n", index, more[i],
			       human_size(size, a, sizeof(a)));
		}
	}
	return MKFS_OK;
}

/* Make the famfs, then report what was made, read back from @path. */
static int make(const char *path, char **more, int n,
		const struct famfs_mkfs_opts *mo)
{
	struct famfs_dev dev;
	char a[32], uuid[37];
	uint64_t space;

	for (int i = 0; i < n; i++) {
		const char *twice = same_device(path, more, i);

		if (twice || famfs_devadd_check(more[i], mo->force)) {
			fprintf(stderr, "mkfs.famfs: %s: %s%s; nothing was written\n",
				more[i], twice ? "the same device as " : "",
				twice ? twice : famfs_errmsg());
			return MKFS_FAILED;
		}
	}
	if (famfs_mkfs(path, mo)) {
		fprintf(stderr, "mkfs.famfs: %s\n", famfs_errmsg());
		return MKFS_FAILED;
	}
	if (famfs_dev_open_fs(path, n ? FAMFS_OPEN_RW : 0, &dev)) {
		fprintf(stderr, "mkfs.famfs: made, but cannot read it back: %s\n",
			famfs_errmsg());
		return MKFS_FAILED;
	}
	famfs_uuid_str(dev.sb->fs_uuid, uuid);
	printf("famfs created on %s\n", path);
	printf("  device size:      %s\n", human_size(dev.size, a, sizeof(a)));
	printf("  log:              %s, room for %llu entries\n",
	       human_size(dev.log_len, a, sizeof(a)),
	       (unsigned long long)famfs_log_slots(dev.log_len));
	printf("  allocation unit:  %s\n",
	       human_size(dev.sb->alloc_unit, a, sizeof(a)));
	space = dev.size - FAMFS_LOG_OFFSET - dev.log_len;
	if (n && add_secondaries(&dev, more, n, mo->force, &space)) {
		famfs_dev_close(&dev);
		return MKFS_FAILED;
	}
	printf("  space for files:  %s\n", human_size(space, a, sizeof(a)));
	printf("  file system UUID: %s\n", uuid);
	famfs_uuid_str(dev.sb->system_uuid, uuid);
	printf("  master host UUID: %s (this host)\n", uuid);
	famfs_dev_close(&dev);
	return MKFS_OK;
}

/* -l SIZE: a power of two the log can be */
static int loglen_opt(const struct tool_opt *o, const char *arg)
{
	uint64_t *len = o->dest;

	if (famfs_parse_size(arg, len) || famfs_log_len_check(*len)) {
		fprintf(stderr, "mkfs.famfs: --loglen: %s\n", famfs_errmsg());
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct famfs_mkfs_opts mo = { 0 };
	struct modeopt mode = { .prog = "mkfs.famfs" };
	int verbose = 0;
	bool kill = false;
	const struct tool_opt opts[] = {
		OPT_FLAG('f', "force", &mo.force),
		OPT_FLAG('k', "kill", &kill),
		OPT_VALUE('l', "loglen", &mo.log_len, loglen_opt),
		OPT_HELP_ALL,
		OPT_CALL('V', "version", "mkfs.famfs", tool_opt_version),
		OPT_COUNT('v', "verbose", &verbose),
		MODEOPT_OPTS(&mode),
		OPT_END,
	};
	const char *path;
	int rc;

	rc = tool_opts_exit(tool_opts_parse(argc, argv, opts, false),
			    "mkfs.famfs", usage, MKFS_OK, MKFS_USAGE);
	if (rc >= 0)
		return rc;
	if (optind == argc) {
		fprintf(stderr, "mkfs.famfs: no device given\n");
		return usage_error();
	}
	if (argc - optind > FAMFS_MAX_DEVS) {
		fprintf(stderr, "mkfs.famfs: a famfs has at most %d devices\n",
			FAMFS_MAX_DEVS);
		return usage_error();
	}
	path = argv[optind];
	if (kill && argc - optind > 1) {
		fprintf(stderr, "mkfs.famfs: -k takes one device\n");
		return usage_error();
	}
	for (int i = optind; i < argc; i++)
		if (modeopt_apply(&mode, argv[i], verbose))
			return MKFS_FAILED;
	if (kill && !mo.force) {
		fprintf(stderr, "mkfs.famfs: -k destroys the famfs on %s; add -f to confirm\n",
			path);
		return usage_error();
	}
	return kill ? kill_super(path) :
		      make(path, argv + optind + 1, argc - optind - 1, &mo);
}
