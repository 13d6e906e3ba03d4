// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs fsck: check a famfs and say what is wrong, in text or JSON. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "libfamfs.h"
#include "modeopt.h"
#include "tool_util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs fsck [--json] [-v] [-h] [-B N] [--repair] DEVICE|MOUNTPOINT\n"
		"\n"
		"Check a famfs: the superblock and log CRCs, every log entry (type,\n"
		"path, extents inside the device and aligned), the directory tree the\n"
		"log builds, and that no two files share memory. Then print a summary:\n"
		"files, directories, space used and free, and how full the log is,\n"
		"followed by the lines upstream's fsck prints that scripts read\n"
		"(Device capacity, Free space; with -v, log_len).\n"
		"Without --repair, fsck only reads; it never changes the device.\n"
		"\n"
		"DEVICE is a devdax device (/dev/dax0.0) or a famfs image file, and\n"
		"must not be mounted (check the mount instead); MOUNTPOINT is any path\n"
		"inside a mounted famfs.\n"
		"\n"
		"Options:\n"
		"  -j, --json         print the result as one JSON object\n"
		"  -v, --verbose      also print log_len and list every log entry\n"
		"  -h, --human        Device capacity and Free space in GiB (\"8.00G\")\n"
		"  -B, --nbuckets=N   also show how files use N equal buckets of the\n"
		"                     device (upstream's stripe bucket info)\n"
		"      --repair       drop a damaged tail of the log, as a crash in the\n"
		"                     middle of an append leaves it, and void a damaged\n"
		"                     entry that intact ones follow (master host only).\n"
		"                     An intact entry (valid CRC) that only the\n"
		"                     superblock's geometry does not fit is kept: fix\n"
		"                     the superblock. Long option only: upstream's -r\n"
		"                     means --read.\n"
		"  -M, --set-daxmode  move a devdax DEVICE to famfs_dax first (famfs mode)\n"
		"  -?, --help         show this help\n"
		"\n"
		"Accepted for upstream's scripts and changing nothing: -m/--mmap and\n"
		"-r/--read (how the log is read; not both), -f/--force, --fuse and\n"
		"-D/--nodax. Refused: -F/--nofuse (upstream's standalone kernel module)\n"
		"and -L/--load-module (fsck loads no kernel modules).\n"
		"\n"
		"Warnings (\"warning:\" lines; JSON setid_files and warnings) name\n"
		"set-user-ID and set-group-ID files: valid, but whoever can write the\n"
		"log made them, and a mount honours them only with -o suid. They do not\n"
		"change the exit status.\n"
		"\n"
		"Exit status (several may be added together, as with e2fsck):\n"
		"   0  the file system is clean\n"
		"   1  errors were found in the log or in the allocations (with\n"
		"      --repair: and repaired, if the summary says so)\n"
		"   2  no valid famfs: bad or missing superblock or log header\n"
		"   8  could not check: missing device, no permission, DEVICE mounted\n"
		"  16  usage error\n");
}

static int list_entry(const struct famfs_omf_entry *e, uint64_t index,
		      void *arg)
{
	char sz[32], name[FAMFS_ESCAPED_LEN(FAMFS_PATH_LEN)];

	(void)arg;
	switch (e->type) {
	case FAMFS_ENTRY_FILE:
		printf("  %6llu  file   %-40s %10s  mode %04o  uid %u gid %u  %s\n",
		       (unsigned long long)index,
		       famfs_escape(e->file.relpath, name, sizeof(name)),
		       human_size(e->file.size, sz, sizeof(sz)), e->file.mode & 07777,
		       e->file.uid, e->file.gid,
		       e->file.fmap.ext_type == FAMFS_EXT_INTERLEAVE ?
			       "interleaved" : "simple");
		break;
	case FAMFS_ENTRY_MKDIR:
		printf("  %6llu  mkdir  %-40s %10s  mode %04o  uid %u gid %u\n",
		       (unsigned long long)index,
		       famfs_escape(e->mkdir.relpath, name, sizeof(name)), "",
		       e->mkdir.mode & 07777, e->mkdir.uid, e->mkdir.gid);
		break;
	case FAMFS_ENTRY_VOID:
		printf("  %6llu  void   (a damaged entry fsck --repair voided)\n",
		       (unsigned long long)index);
		break;
	default:
		printf("  %6llu  add-daxdev index %u\n", (unsigned long long)index,
		       e->daxdev.index);
	}
	return 0;
}

static const char *status_word(int status)
{
	return status == FAMFS_FSCK_CLEAN ? "clean" :
	       status == FAMFS_FSCK_ERRORS ? "errors" : "no-filesystem";
}

static void print_json(const char *path, const struct famfs_fsck *r,
		       int status, int exit_code)
{
	struct json_object *o = json_object_new_object(), *sb, *log, *p;
	char u[37];

	jadd_str(o, "device", path);
	jadd_str(o, "status", status_word(status));
	json_object_object_add(o, "exit_code", json_object_new_int(exit_code));
	sb = jadd_obj(o, "superblock");
	jadd_bool(sb, "valid", r->sb_valid);
	if (r->sb_valid) {
		famfs_uuid_str(r->fs_uuid, u);
		jadd_str(sb, "uuid", u);
		famfs_uuid_str(r->system_uuid, u);
		jadd_str(sb, "master_uuid", u);
		jadd_str(sb, "role", famfs_role_name(r->role));
		jadd_u64(sb, "alloc_unit", r->alloc_unit);
	}
	log = jadd_obj(o, "log");
	jadd_bool(log, "valid", r->log_valid);
	json_fs_log(log, r);
	json_fs_usage(o, r);
	p = jadd_array(o, "problems");
	for (unsigned int i = 0; i < r->nproblems; i++)
		jpush_str(p, r->problems[i]);
	jadd_u64(o, "problems_not_listed", r->problems_dropped);
	jadd_u64(o, "voided_entries", r->voided);
	jadd_u64(o, "names_with_control_characters", r->control_names);
	json_fs_warnings(o, r);
	json_print(o);
}

static void print_text(const char *path, const struct famfs_fsck *r,
		       int status)
{
	char u[37], esc[FAMFS_ESCAPED_LEN(sizeof(r->problems[0]))];

	printf("famfs fsck %s\n", path);
	if (r->sb_valid) {
		famfs_uuid_str(r->fs_uuid, u);
		printf("  superblock:  valid, uuid %s, this host is %s\n", u,
		       famfs_role_name(r->role));
	}
	if (r->log_valid) {
		print_fs_usage(r, 13);
	}
	if (r->voided)
		printf("  note:        %llu damaged entr%s voided by fsck --repair (what %s described is lost)\n",
		       (unsigned long long)r->voided,
		       r->voided == 1 ? "y" : "ies",
		       r->voided == 1 ? "it" : "they");
	if (r->control_names)
		printf("  warning:     %llu name%s control characters, first in log entry %llu: \"%s\"\n",
		       (unsigned long long)r->control_names,
		       r->control_names == 1 ? " contains" : "s contain",
		       (unsigned long long)r->control_first,
		       famfs_escape(r->control_example, esc, sizeof(esc)));
	/* problems quote names from the log: never raw on a terminal */
	for (unsigned int i = 0; i < r->nproblems; i++)
		printf("  problem:     %s\n",
		       famfs_escape(r->problems[i], esc, sizeof(esc)));
	if (r->problems_dropped)
		printf("  problem:     ... and %u more\n", r->problems_dropped);
	print_fs_warnings(r, 13, "");
	printf("  result:      %s\n",
	       status == FAMFS_FSCK_CLEAN ? "clean" :
	       status == FAMFS_FSCK_ERRORS ? "ERRORS FOUND" :
					     "NOT A VALID FAMFS");
}

/* Upstream fsck's lines that scripts grep, in its words and units. */
static void print_upstream(const struct famfs_fsck *r, bool human, int verbose)
{
	const double gib = 1024.0 * 1024 * 1024;

	if (r->log_valid) {
		printf("Capacity:\n");
		if (human) {
			printf("  Device capacity:        %.2fG\n",
			       (double)r->dev_size / gib);
			printf("  Free space:             %.2fG\n",
			       (double)r->space_free / gib);
		} else {
			printf("  Device capacity:        %llu\n",
			       (unsigned long long)r->dev_size);
			printf("  Free space:             %llu\n",
			       (unsigned long long)r->space_free);
		}
	}
	if (verbose && r->sb_valid) {
		printf("Verbose:\n");
		printf("  log_len:           %llu\n",
		       (unsigned long long)r->log_len);
	}
}

/*
 * Upstream's stripe bucket info (-B): how files use N equal buckets. 0,
 * or the exit status to add: more buckets than the device has allocation
 * units is a usage error, anything else stopped the check.
 */
static int print_buckets(struct famfs_dev *dev, unsigned int n, bool human)
{
	const double gib = 1024.0 * 1024 * 1024;
	struct famfs_bucket_stats *b;
	uint64_t overhang;
	int rc = famfs_bucket_stats(dev, n, &b, &overhang);

	if (rc) {
		fprintf(stderr, "famfs fsck: -B %u: %s\n", n, famfs_errmsg());
		return rc == -EINVAL ? FAMFS_FSCK_USAGE : FAMFS_FSCK_FAILED;
	}
	printf("Stripe bucket info:\n");
	printf("  Wasted overhang: %llu bytes (%llu au)\n",
	       (unsigned long long)overhang,
	       (unsigned long long)(overhang / dev->sb->alloc_unit));
	for (unsigned int i = 0; i < n; i++) {
		const uint64_t v[] = { b[i].size,	   b[i].used,
				       b[i].free,	   b[i].largest_free,
				       b[i].smallest_free };
		static const char *const label[] = { "Size:   ", "In use: ",
						     "Free:   ",
						     "Largest frag:   ",
						     "Smallest frag:  " };

		printf("  Bitmap range %u\n", i);
		for (unsigned int k = 0; k < 5; k++) {
			if (k == 3)
				printf("    Free fragments: %llu\n",
				       (unsigned long long)b[i].free_runs);
			if (human)
				printf("    %s%.2fG\n", label[k],
				       (double)v[k] / gib);
			else
				printf("    %s%llu\n", label[k],
				       (unsigned long long)v[k]);
		}
	}
	free(b);
	return 0;
}

/*
 * Repair, then check again so the summary shows the repaired state.
 * Reported on stderr so that --json output stays one object.
 */
static bool do_repair(struct famfs_dev *dev, struct famfs_fsck *r)
{
	struct famfs_repair rep;

	if (famfs_fsck_repair(dev, &rep)) {
		fprintf(stderr, "famfs fsck: not repaired: %s\n", famfs_errmsg());
		return false;
	}
	if (rep.kept)
		fprintf(stderr, "famfs fsck: kept %llu intact entr%s (index %llu%s) that the superblock does not fit: fix the superblock, not the log\n",
			(unsigned long long)rep.kept,
			rep.kept == 1 ? "y" : "ies",
			(unsigned long long)rep.first_kept,
			rep.kept == 1 ? "" : " and later");
	if (rep.voided)
		fprintf(stderr, "famfs fsck: repaired: voided %llu damaged entr%s (index %llu%s) before intact ones; dropped %llu at the end of the log\n",
			(unsigned long long)rep.voided,
			rep.voided == 1 ? "y" : "ies",
			(unsigned long long)rep.first_voided,
			rep.voided == 1 ? "" : " and later",
			(unsigned long long)rep.dropped);
	else if (rep.dropped || !rep.kept)
		fprintf(stderr, "famfs fsck: repaired: dropped %llu damaged entr%s at the end of the log\n",
			(unsigned long long)rep.dropped,
			rep.dropped == 1 ? "y" : "ies");
	return famfs_fsck(dev, r) == 0;
}

static int fsck_nbuckets(const struct tool_opt *o, const char *arg)
{
	uint64_t v;

	if (cli_parse_number("-B", arg, 1, UINT32_MAX, &v))
		return -1;
	*(uint32_t *)o->dest = (uint32_t)v;
	return 0;
}

static int fsck_load_module(const struct tool_opt *o, const char *arg)
{
	(void)o;
	(void)arg;
	fprintf(stderr, "famfs fsck: -L/--load-module is refused: fsck does not load kernel modules\n");
	return -1;
}

bool fsck_parse(int argc, char **argv, struct fsck_args *a, int *code)
{
	int how = 0; /* upstream's -m or -r, which change nothing */
	const struct tool_opt opts[] = {
		OPT_FLAG('j', "json", &a->json),
		OPT_COUNT('v', "verbose", &a->verbose),
		OPT_FLAG('h', "human", &a->human), /* upstream's -h */
		OPT_VALUE('B', "nbuckets", &a->nbuckets, fsck_nbuckets),
		OPT_FLAG(0, "repair", &a->repair),
		/* upstream's -r is --read: never a repair */
		OPT_CALL('m', "mmap", &how, cli_opt_how),
		OPT_CALL('r', "read", &how, cli_opt_how),
		/* upstream accepts and ignores it too */
		OPT_CALL('f', "force", NULL, tool_opt_ignored),
		OPT_CALL('L', "load-module", NULL, fsck_load_module),
		MODEOPT_OPTS(&a->mode),
		OPT_HELP(0, "help"),
		OPT_HELP('?', NULL),
		OPT_END,
	};

	*a = (struct fsck_args){ .mode.prog = "famfs fsck" };
	*code = cli_parse_opts(argc, argv, opts, usage, FAMFS_FSCK_CLEAN,
			       FAMFS_FSCK_USAGE);
	if (*code >= 0)
		return false;
	if (optind != argc - 1) {
		fprintf(stderr, "famfs fsck: %s\n",
			optind == argc ? "no device or mount point given" :
					 "too many arguments");
		*code = cli_usage_error(FAMFS_FSCK_USAGE);
		return false;
	}
	a->path = argv[optind];
	return true;
}

/* The report on stdout, in the form asked; 2 if the buckets failed. */
static int report(const struct fsck_args *a, struct famfs_dev *dev,
		  const struct famfs_fsck *r, int found)
{
	struct famfs_geometry g;
	struct famfs_walk w;
	int rc = 0;

	if (a->json) {
		print_json(a->path, r, famfs_fsck_status(r), found);
		return 0;
	}
	print_text(a->path, r, famfs_fsck_status(r));
	print_upstream(r, a->human, a->verbose);
	if (a->nbuckets && r->log_valid)
		rc = print_buckets(dev, a->nbuckets, a->human);
	if (a->verbose && r->log_valid) {
		printf("  entries:\n");
		famfs_sb_geometry(dev->sb, &g);
		famfs_log_walk(dev->log, dev->log_len, &g, 0, list_entry, NULL,
			       &w);
	}
	return rc;
}

int fsck_run(const struct fsck_args *a)
{
	struct modeopt mode = { .prog = "famfs fsck",
				.set_daxmode = a->mode.set_daxmode };
	struct famfs_fsck r;
	struct famfs_dev dev;
	char where[PATH_MAX];
	struct stat st;
	int status;

	if (stat(a->path, &st) == 0 && !S_ISDIR(st.st_mode) &&
	    famfs_dev_mounted(a->path, where, sizeof(where))) {
		/* its log is live: check it through the mount */
		fprintf(stderr, "famfs fsck: error: cannot fsck by device (%s) when mounted (EBUSY); run famfs fsck %s\n",
			a->path, where);
		return FAMFS_FSCK_FAILED;
	}
	if (modeopt_apply(&mode, a->path, a->verbose))
		return FAMFS_FSCK_FAILED;

	if (famfs_dev_open(a->path, a->repair ? FAMFS_OPEN_RW : 0, &dev)) {
		fprintf(stderr, "famfs fsck: %s\n", famfs_errmsg());
		return FAMFS_FSCK_FAILED;
	}
	if (famfs_fsck(&dev, &r)) {
		fprintf(stderr, "famfs fsck: %s\n", famfs_errmsg());
		famfs_dev_close(&dev);
		return FAMFS_FSCK_FAILED;
	}
	/*
	 * The summary shows the file system as it is now (repaired, if it
	 * was); as with e2fsck, exit 1 still says errors were found.
	 */
	status = famfs_fsck_status(&r);
	if (a->repair && status == FAMFS_FSCK_ERRORS)
		do_repair(&dev, &r);
	status |= report(a, &dev, &r, status);
	famfs_dev_close(&dev);
	return status;
}

int cmd_fsck(int argc, char **argv)
{
	struct fsck_args a;
	int code;

	return fsck_parse(argc, argv, &a, &code) ? fsck_run(&a) : code;
}
