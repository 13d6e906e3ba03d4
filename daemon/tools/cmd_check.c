// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs check: does every file in a mount have a valid map in the log?
 * fsck checks the log itself; check compares what the mount shows with
 * what the log says, which is what a FUSE famfs serves fmaps from.
 */
#include <errno.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

/* upstream's exit codes, or-ed together */
#define CHK_UNMAPPED 1
#define CHK_SUPERBLOCK 2
#define CHK_LOG 4
#define CHK_USAGE EINVAL

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs check [-v] MOUNTPOINT\n"
		"\n"
		"Check every file and directory a mounted famfs shows against the log:\n"
		"each regular file must be a file in the log with the same size and a\n"
		"valid map (aligned, inside the device, large enough), each directory a\n"
		"directory in the log, and nothing else may be there; a file whose memory\n"
		"an earlier file owns (a cross-link, see famfs clone) has no valid map.\n"
		"Upstream's check is for its standalone kernel module; this one is for\n"
		"the FUSE famfs, where the daemon serves every file's map from the log.\n"
		"'famfs fsck' checks the log itself; run both for the full picture.\n"
		"\n"
		"Options:\n"
		"  -v, --verbose   list every file checked (repeat for more)\n"
		"  -h, -?, --help  show this help\n"
		"\n"
		"Exit status (as upstream famfs; values are or-ed together):\n"
		"   0  every file is properly mapped\n"
		"   1  at least one file in the mount has no valid map in the log\n"
		"   2  the superblock is missing or corrupt\n"
		"   4  the log is missing or corrupt\n"
		"  22  usage error (EINVAL)\n");
}

static struct {
	const char *root;
	size_t rootlen;
	struct famfs_ns ns;
	struct famfs_geometry g;
	int verbose;
	uint64_t files, dirs, bad;
} ck;

static int bad(const char *path, const char *why)
{
	fprintf(stderr, "famfs check: %s: %s\n", path, why);
	ck.bad++;
	return 0;
}

static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	const struct famfs_node *n;
	const char *rel = path + ck.rootlen;

	(void)ftw;
	while (*rel == '/')
		rel++;
	if (!*rel)
		return FTW_CONTINUE;
	if (!strcmp(rel, ".meta"))
		return FTW_SKIP_SUBTREE; /* the daemon's own metadata files */
	if (type == FTW_NS || type == FTW_DNR)
		return bad(path, "cannot be read"), FTW_CONTINUE;
	n = famfs_ns_resolve(&ck.ns, rel);
	if (S_ISDIR(st->st_mode)) {
		ck.dirs++;
		if (!n || !n->is_dir)
			bad(path, n ? "a directory in the mount but a file in the log" :
				      "a directory the log does not have");
		else if (ck.verbose > 1)
			printf("famfs check: %s: directory, ok\n", path);
		return FTW_CONTINUE;
	}
	if (!S_ISREG(st->st_mode))
		return bad(path, "neither a file nor a directory (famfs has only those)"),
		       FTW_CONTINUE;
	ck.files++;
	if (!n || n->is_dir)
		return bad(path, n ? "a file in the mount but a directory in the log" :
				     "a file the log does not have (unmapped)"),
		       FTW_CONTINUE;
	if ((uint64_t)st->st_size != n->size) {
		char why[128];

		snprintf(why, sizeof(why), "size %llu in the mount, %llu in the log",
			 (unsigned long long)st->st_size,
			 (unsigned long long)n->size);
		return bad(path, why), FTW_CONTINUE;
	}
	if (famfs_fmap_check(&n->fmap, n->size, &ck.g)) {
		char why[320];

		snprintf(why, sizeof(why), "bad map in the log: %s", famfs_errmsg());
		return bad(path, why), FTW_CONTINUE;
	}
	if (n->overlaps)
		return bad(path, "its memory belongs to an earlier file or the log (cross-linked: the daemon refuses to open it; famfs fsck lists it)"),
		       FTW_CONTINUE;
	if (ck.verbose)
		printf("famfs check: %s: %llu bytes, mapped\n", path,
		       (unsigned long long)n->size);
	return FTW_CONTINUE;
}

int cmd_check(int argc, char **argv)
{
	const struct tool_opt opts[] = {
		OPT_COUNT('v', "verbose", &ck.verbose),
		OPT_HELP_ALL,
		OPT_END,
	};
	struct famfs_walk walk;
	struct famfs_dev dev;
	int rc;

	rc = cli_parse_opts(argc, argv, opts, usage, 0, CHK_USAGE);
	if (rc >= 0)
		return rc;
	rc = 0;
	if (optind != argc - 1) {
		fprintf(stderr, "famfs check: give one mount point\n");
		return cli_usage_error(CHK_USAGE);
	}
	if (famfs_dev_open(argv[optind], 0, &dev)) {
		fprintf(stderr, "famfs check: %s\n", famfs_errmsg());
		return CHK_SUPERBLOCK | CHK_LOG;
	}
	if (dev.kind != FAMFS_DEV_META) {
		fprintf(stderr, "famfs check: %s is not in a mounted famfs (use famfs fsck for a device)\n",
			argv[optind]);
		famfs_dev_close(&dev);
		return CHK_SUPERBLOCK | CHK_LOG;
	}
	if (famfs_sb_check(dev.sb, dev.size)) {
		fprintf(stderr, "famfs check: %s/.meta/.superblock: %s\n", dev.path,
			famfs_errmsg());
		famfs_dev_close(&dev);
		return CHK_SUPERBLOCK | CHK_LOG;
	}
	famfs_dev_geometry(&dev, &ck.g);
	if (famfs_ns_load(&dev, &ck.ns, &walk, NULL)) {
		fprintf(stderr, "famfs check: %s/.meta/.log: %s%s\n", dev.path,
			famfs_errmsg(),
			walk.bad ? " (checking against the entries before it)" : "");
		rc |= CHK_LOG;
	}
	ck.root = dev.path;
	ck.rootlen = strlen(dev.path);
	if (nftw(dev.path, visit, 32, FTW_PHYS | FTW_ACTIONRETVAL) < 0) {
		fprintf(stderr, "famfs check: cannot walk %s: %s\n", dev.path,
			strerror(errno));
		rc |= CHK_UNMAPPED;
	}
	if (ck.bad)
		rc |= CHK_UNMAPPED;
	printf("famfs check: %s: %llu files, %llu directories checked; %llu problems\n",
	       dev.path, (unsigned long long)ck.files,
	       (unsigned long long)ck.dirs, (unsigned long long)ck.bad);
	famfs_ns_free(&ck.ns);
	famfs_dev_close(&dev);
	return rc;
}
