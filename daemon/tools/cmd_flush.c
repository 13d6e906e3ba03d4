// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs flush: push a file's bytes out of this host's CPU caches. Shared
 * memory between hosts need not be cache coherent; a writer flushes after
 * writing, and a reader before reading what another host wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs flush [-v] [-D DEVICE] FILE...\n"
		"\n"
		"Write back and drop this host's CPU cache lines for the whole of each\n"
		"FILE, so other hosts see what was written here and this host then reads\n"
		"what others wrote. Needed only where the shared memory is not cache\n"
		"coherent between hosts; harmless elsewhere. In a mounted famfs the file\n"
		"is also synced (fsync and msync), which in the daemon's fallback mode\n"
		"is what moves written data to the device. The daemon's own files under\n"
		".meta/ are not file memory: they are skipped (-v says so), so that\n"
		"'famfs flush $(find MOUNTPOINT -type f)' works.\n"
		"\n"
		"Options:\n"
		"  -D, --device=DEV  flush the file's memory in the famfs on DEV (FILE is\n"
		"                    relative to its root)\n"
		"  -v, --verbose     say what was flushed\n"
		"  -h, -?, --help    show this help\n"
		"\n"
		"Exit status:\n"
		"  0  every file was flushed\n"
		"  1  a file could not be flushed (missing, not a famfs file...)\n"
		"  2  usage error\n");
}

static void flush_range(uint64_t devindex, uint64_t off, uint64_t len,
			void *arg)
{
	const struct famfs_dev *dev = arg;

	/* Only device 0 is mapped; fmaps are checked to name no other. */
	if (devindex == 0 && off < dev->size && len <= dev->size - off)
		famfs_dev_flush(dev, dev->base + off, len);
}

static int flush_mounted(const char *name, int verbose)
{
	struct cli_file f;
	struct cli_fs fs;
	char rel[FAMFS_PATH_LEN];
	void *p;
	int rc = -1;

	if (cli_mount_open(&fs, name))
		return -1;
	if (cli_relpath(&fs, name, rel) == 0 && cli_reserved(rel)) {
		/* what 'find MNT -type f' lists includes .meta/ */
		if (verbose)
			printf("famfs flush: %s: skipped: a metadata file the daemon serves, not file memory\n",
			       name);
		cli_fs_close(&fs);
		return 0;
	}
	if (cli_relpath(&fs, name, rel) ||
	    cli_file_open(&f, &fs, NULL, rel, false)) {
		cli_fs_close(&fs);
		return -1;
	}
	if (fsync(f.fd) < 0 && errno != EINVAL && errno != ENOSYS &&
	    errno != EBADF) {
		fprintf(stderr, "famfs flush: %s: fsync: %s\n", name,
			strerror(errno));
		goto out;
	}
	if (f.size) {
		p = mmap(NULL, f.size, PROT_READ, MAP_SHARED, f.fd, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "famfs flush: cannot map %s: %s\n", name,
				strerror(errno));
			goto out;
		}
		/* Written back and dropped: both of what flush(8) promises. */
		famfs_cache_invalidate(p, f.size);
		msync(p, f.size, MS_SYNC | MS_INVALIDATE);
		munmap(p, f.size);
	}
	if (verbose)
		printf("famfs flush: %s: %llu bytes flushed\n", name,
		       (unsigned long long)f.size);
	rc = 0;
out:
	cli_file_close(&f);
	cli_fs_close(&fs);
	return rc;
}

static int flush_device(const char *device, const char *name, int verbose)
{
	const struct famfs_node *n;
	struct famfs_ns ns;
	struct cli_fs fs;
	char rel[FAMFS_PATH_LEN];
	int rc = -1;

	if (cli_fs_open(&fs, device, name, false))
		return -1;
	if (cli_relpath(&fs, name, rel) || cli_ns_load(&fs, &ns, "flush"))
		goto out;
	n = famfs_ns_resolve(&ns, rel);
	if (!n || n->is_dir) {
		fprintf(stderr, "famfs flush: %s: %s\n", name,
			n ? "is a directory" : "no such file in the log");
	} else if (fs.mounted) {
		/* --device named a mount point: flush through the mount. */
		char path[PATH_MAX + 96];

		cli_mount_path(&fs, rel, path, sizeof(path));
		rc = flush_mounted(path, verbose);
	} else {
		famfs_fmap_for_each_range(&n->fmap, flush_range, &fs.dev);
		if (verbose)
			printf("famfs flush: %s: %llu bytes flushed\n", name,
			       (unsigned long long)n->size);
		rc = 0;
	}
	famfs_ns_free(&ns);
out:
	cli_fs_close(&fs);
	return rc;
}

int cmd_flush(int argc, char **argv)
{
	const char *device;
	int verbose = 0, c, errs = 0;

	c = cli_parse_device_verbose(argc, argv, usage, &device, &verbose);
	if (c >= 0)
		return c;
	if (optind == argc) {
		fprintf(stderr, "famfs flush: no file given\n");
		return cli_usage_error(CLI_USAGE);
	}
	for (int i = optind; i < argc; i++)
		if (device ? flush_device(device, argv[i], verbose) :
			     flush_mounted(argv[i], verbose))
			errs++;
	if (errs)
		fprintf(stderr, "famfs flush: %d of %d files not flushed\n", errs,
			argc - optind);
	return errs ? CLI_FAIL : CLI_OK;
}
