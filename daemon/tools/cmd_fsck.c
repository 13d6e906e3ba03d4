// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs fsck: check a famfs and say what is wrong, in text or JSON. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "libfamfs.h"
#include "tool_util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs fsck [--json] [-v] [--repair] DEVICE|MOUNTPOINT\n"
		"\n"
		"Check a famfs: the superblock and log CRCs, every log entry (type,\n"
		"path, extents inside the device and aligned), the directory tree the\n"
		"log builds, and that no two files share memory. Then print a summary:\n"
		"files, directories, space used and free, and how full the log is.\n"
		"Without --repair, fsck only reads; it never changes the device.\n"
		"\n"
		"DEVICE is a devdax device (/dev/dax0.0) or a famfs image file;\n"
		"MOUNTPOINT is any path inside a mounted famfs.\n"
		"\n"
		"Options:\n"
		"  -j, --json      print the result as one JSON object\n"
		"  -v, --verbose   also list every log entry\n"
		"  -r, --repair    drop a damaged tail of the log, as a crash in the\n"
		"                  middle of an append leaves it (master host only).\n"
		"                  Damage followed by valid entries is not repaired:\n"
		"                  that would lose complete entries.\n"
		"  -h, --help      show this help\n"
		"\n"
		"Exit status (several may be added together, as with e2fsck):\n"
		"   0  the file system is clean\n"
		"   1  errors were found in the log or in the allocations (with\n"
		"      --repair: and repaired, if the summary says so)\n"
		"   2  no valid famfs: bad or missing superblock or log header\n"
		"   8  could not check: missing device, no permission...\n"
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
	char u[37];

	printf("{\"device\":");
	json_string(stdout, path);
	printf(",\"status\":\"%s\",\"exit_code\":%d", status_word(status),
	       exit_code);
	printf(",\"superblock\":{\"valid\":%s", r->sb_valid ? "true" : "false");
	if (r->sb_valid) {
		famfs_uuid_str(r->fs_uuid, u);
		printf(",\"uuid\":\"%s\"", u);
		famfs_uuid_str(r->system_uuid, u);
		printf(",\"master_uuid\":\"%s\",\"role\":\"%s\",\"alloc_unit\":%llu",
		       u, famfs_role_name(r->role),
		       (unsigned long long)r->alloc_unit);
	}
	printf("},\"log\":{\"valid\":%s,\"bytes\":%llu,\"slots\":%llu,\"used\":%llu}",
	       r->log_valid ? "true" : "false", (unsigned long long)r->log_len,
	       (unsigned long long)r->log_slots, (unsigned long long)r->log_used);
	printf(",\"files\":%llu,\"directories\":%llu,\"bytes_in_files\":%llu",
	       (unsigned long long)r->files, (unsigned long long)r->dirs,
	       (unsigned long long)r->bytes_in_files);
	printf(",\"space\":{\"device\":%llu,\"used\":%llu,\"free\":%llu}",
	       (unsigned long long)r->dev_size,
	       (unsigned long long)r->space_used,
	       (unsigned long long)r->space_free);
	printf(",\"problems\":[");
	for (unsigned int i = 0; i < r->nproblems; i++) {
		if (i)
			putchar(',');
		json_string(stdout, r->problems[i]);
	}
	printf("],\"problems_not_listed\":%u,\"voided_entries\":%llu",
	       r->problems_dropped, (unsigned long long)r->voided);
	printf(",\"names_with_control_characters\":%llu}\n",
	       (unsigned long long)r->control_names);
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
	printf("  result:      %s\n",
	       status == FAMFS_FSCK_CLEAN ? "clean" :
	       status == FAMFS_FSCK_ERRORS ? "ERRORS FOUND" :
					     "NOT A VALID FAMFS");
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
	if (rep.voided)
		fprintf(stderr, "famfs fsck: repaired: voided %llu damaged entr%s (index %llu%s) before intact ones; dropped %llu at the end of the log\n",
			(unsigned long long)rep.voided,
			rep.voided == 1 ? "y" : "ies",
			(unsigned long long)rep.first_voided,
			rep.voided == 1 ? "" : " and later",
			(unsigned long long)rep.dropped);
	else
		fprintf(stderr, "famfs fsck: repaired: dropped %llu damaged entr%s at the end of the log\n",
			(unsigned long long)rep.dropped,
			rep.dropped == 1 ? "y" : "ies");
	return famfs_fsck(dev, r) == 0;
}

int cmd_fsck(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "repair", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct famfs_fsck r;
	struct famfs_dev dev;
	bool json = false, repair = false;
	int verbose = 0, c, status;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jvrh?", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			repair = true;
			break;
		case 'j':
			json = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return FAMFS_FSCK_CLEAN;
		default:
			return cli_usage_error(FAMFS_FSCK_USAGE);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "famfs fsck: %s\n",
			optind == argc ? "no device or mount point given" :
					 "too many arguments");
		return cli_usage_error(FAMFS_FSCK_USAGE);
	}

	if (famfs_dev_open(argv[optind], repair ? FAMFS_OPEN_RW : 0, &dev)) {
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
	if (repair && status == FAMFS_FSCK_ERRORS)
		do_repair(&dev, &r);
	if (json) {
		print_json(argv[optind], &r, famfs_fsck_status(&r), status);
	} else {
		print_text(argv[optind], &r, famfs_fsck_status(&r));
		if (verbose && r.log_valid) {
			struct famfs_geometry g;
			struct famfs_walk w;

			printf("  entries:\n");
			famfs_sb_geometry(dev.sb, &g);
			famfs_log_walk(dev.log, dev.log_len, &g, 0, list_entry,
				       NULL, &w);
		}
	}
	famfs_dev_close(&dev);
	return status;
}
