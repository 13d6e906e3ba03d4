// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs logplay. Upstream's standalone famfs needs it to create in the
 * mount what other hosts logged; our daemon replays the log by itself (on
 * a lookup miss and by polling). So logplay here reads the log, says what
 * it holds, and looks every entry up in the mount, which both makes the
 * daemon catch up at once and checks that the mount shows the whole log.
 * --shadow writes upstream's shadow tree (libfamfs's shadow.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "modeopt.h"
#include "tool_util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs logplay [-n] [-v] MOUNTPOINT\n"
		"       famfs logplay [-v] -D DEVICE\n"
		"       famfs logplay --shadow DIR [--shadowtest] [-n] MOUNTPOINT|--daxdev DEVICE\n"
		"\n"
		"Read the log of a famfs and report what it holds. The famfs daemon plays\n"
		"the log into the mount by itself, also what other hosts append, so unlike\n"
		"upstream's standalone famfs nothing needs to be played by hand. In a\n"
		"mount, logplay looks up every logged file and directory, which makes the\n"
		"daemon catch up at once, and reports any that the mount does not show as\n"
		"logged (wrong type or size). MOUNTPOINT may be any path in the mount.\n"
		"\n"
		"Options:\n"
		"  -n, --dryrun     only read and report the log; touch nothing in the mount\n"
		"  -v, --verbose    list every entry\n"
		"  -D, --device=DEV read the log of the famfs on DEV (nothing is played)\n"
		"  -m, --mmap       accepted for compatibility: the log is always mapped\n"
		"  -r, --read       accepted for compatibility: the log is always mapped\n"
		"                   (-m and -r are mutually exclusive, as upstream)\n"
		"  -c, --client     accepted for compatibility: logplay only reads, and\n"
		"                   the daemon takes its role from the superblock\n"
		"  -h, -?, --help   show this help\n"
		"\n"
		"Upstream's shadow tree, for its FUSE daemon: --shadow DIR writes the log\n"
		"of MOUNTPOINT (or of --daxdev DEVICE) into DIR/root (DIR itself if it\n"
		"ends in /root, which must exist): a directory per directory and, per\n"
		"file, a YAML file in upstream's schema. Existing entries are kept.\n"
		"  -S, --shadow=DIR    write the shadow tree (short -S takes no value:\n"
		"                      DIR is then the first operand, as in upstream's\n"
		"                      'logplay -Ss DIR MOUNTPOINT')\n"
		"  -s, --shadowtest    also read every file's YAML back and compare it\n"
		"                      with its log entry (a difference is an error)\n"
		"  -d, --daxdev=DEV    read the log from DEV instead of a mount\n"
		"  -M, --set-daxmode   with --daxdev: move DEV to famfs_dax first\n"
		"\n"
		"Exit status:\n"
		"  0  the log is sound and (unless -n or -D) the mount shows every entry\n"
		"  1  the log is damaged, or entries are missing from the mount\n"
		"  2  usage error\n");
}

struct play {
	struct cli_fs *fs;
	bool check, verbose;
	struct famfs_ns ns;
	uint64_t files, dirs, others, skipped, missing, bytes;
};

static int play_entry(const struct famfs_omf_entry *e, uint64_t index,
		      void *arg)
{
	struct play *p = arg;
	const char *rel;
	bool dir;
	char path[PATH_MAX + 96], sz[32], esc[FAMFS_ESCAPED_LEN(512)];
	struct stat st;
	uint64_t changes = p->ns.dir_changes;
	int rc = famfs_ns_apply(&p->ns, e, index);
	/* a second MKDIR of a directory changes its mode and owner */
	bool change = p->ns.dir_changes != changes;

	if (rc == -ENOMEM)
		return rc;
	if (e->type != FAMFS_ENTRY_FILE && e->type != FAMFS_ENTRY_MKDIR) {
		p->others++;
		if (p->verbose)
			printf("  %6llu  %s\n", (unsigned long long)index,
			       e->type == FAMFS_ENTRY_ADD_DAXDEV ? "add-daxdev" :
			       e->type == FAMFS_ENTRY_VOID ?
						"void (a damaged entry fsck --repair voided)" :
						"other");
		return 0;
	}
	dir = e->type == FAMFS_ENTRY_MKDIR;
	rel = dir ? e->mkdir.relpath : e->file.relpath;
	if (rc) {
		/* The daemon skips it too, so the mount cannot show it. */
		p->skipped++;
		fprintf(stderr, "famfs logplay: %s (skipped, as every host skips it)\n",
			famfs_escape(famfs_errmsg(), esc, sizeof(esc)));
		return 0;
	}
	if (dir) {
		p->dirs += !change;
	} else {
		p->files++;
		p->bytes += e->file.size;
	}
	if (p->verbose)
		printf("  %6llu  %-5s  %-40s %10s  %04o %u:%u\n",
		       (unsigned long long)index,
		       change ? "chmod" : dir ? "mkdir" : "file",
		       famfs_escape(rel, esc, sizeof(esc)),
		       dir ? "" : human_size(e->file.size, sz, sizeof(sz)),
		       dir ? e->mkdir.mode : e->file.mode,
		       dir ? e->mkdir.uid : e->file.uid,
		       dir ? e->mkdir.gid : e->file.gid);
	if (!p->check)
		return 0;
	cli_mount_path(p->fs, rel, path, sizeof(path));
	if (stat(path, &st) < 0) {
		fprintf(stderr, "famfs logplay: %s: logged (entry %llu) but not in the mount: %s\n",
			famfs_escape(path, esc, sizeof(esc)), (unsigned long long)index, strerror(errno));
		p->missing++;
	} else if (dir ? !S_ISDIR(st.st_mode) :
			 !S_ISREG(st.st_mode) ||
				 (uint64_t)st.st_size != e->file.size) {
		fprintf(stderr, "famfs logplay: %s: the mount does not show it as logged (entry %llu: %s)\n",
			famfs_escape(path, esc, sizeof(esc)), (unsigned long long)index,
			dir ? "a directory" : "a file of that size");
		p->missing++;
	}
	return 0;
}

/* upstream's shadow-tree logplay: --shadow DIR [--shadowtest] */
struct shadow_args {
	const char *dir, *daxdev;
	bool dir_first; /* -S: DIR is the first operand */
	bool test;
	struct modeopt mode;
};

static int shadow_logplay(const struct shadow_args *sh, const char *device,
			  bool dryrun, bool verbose, int nargs, char **args)
{
	struct famfs_shadow_stats st;
	char esc[FAMFS_ESCAPED_LEN(1024)];
	const char *dir = sh->dir;
	struct cli_fs fs;
	int rc;

	if (sh->dir_first && nargs) {
		dir = args[0];
		args++;
		nargs--;
	}
	if (!dir) {
		fprintf(stderr, "famfs logplay: %s needs --shadow DIR\n",
			sh->test ? "--shadowtest" : "--daxdev");
		return CLI_USAGE;
	}
	if (sh->daxdev)
		device = sh->daxdev;
	if (nargs > 1 || (!nargs && !device)) {
		fprintf(stderr, "famfs logplay: --shadow reads the log of one mount point, or of --daxdev DEVICE\n");
		return CLI_USAGE;
	}
	if (device && modeopt_apply(&sh->mode, device, verbose))
		return CLI_FAIL;
	if (cli_fs_open(&fs, device, nargs ? args[0] : "", false))
		return CLI_FAIL;
	rc = famfs_shadow_play(&fs.dev, dir, dryrun, sh->test, &st);
	if (rc && rc != -EIO)
		fprintf(stderr, "famfs logplay: %s\n",
			famfs_escape(famfs_errmsg(), esc, sizeof(esc)));
	printf("famfs logplay: shadow tree of %s in %s: %llu files, %llu directories (%llu already there",
	       fs.mounted ? fs.root : fs.dev.path, dir,
	       (unsigned long long)st.files, (unsigned long long)st.dirs,
	       (unsigned long long)st.existed);
	if (st.changed)
		printf(", %llu of them given a later mode or owner",
		       (unsigned long long)st.changed);
	printf(")");
	if (st.dir_changes)
		printf(", %llu directory mode or owner changes",
		       (unsigned long long)st.dir_changes);
	if (dryrun)
		printf(", dry run");
	if (sh->test)
		printf(", %llu YAML files checked", (unsigned long long)st.tested);
	printf("%s\n", st.errors ? "; errors above" : "");
	cli_fs_close(&fs);
	return rc ? CLI_FAIL : CLI_OK;
}

/* Walk the log of @fs, tell what is in it, check the mount shows it. */
static int play_log(struct play *p, struct cli_fs *fs, bool dryrun)
{
	char sz[32], esc[FAMFS_ESCAPED_LEN(1024)], changes[64];
	struct famfs_geometry g;
	struct famfs_walk walk;
	int rc;

	p->fs = fs;
	p->check = fs->mounted && !dryrun;
	famfs_ns_init(&p->ns, 0755, 0, 0);
	famfs_sb_geometry(fs->dev.sb, &g);
	famfs_dev_invalidate(&fs->dev, fs->dev.log, fs->dev.log_len);
	if (p->verbose)
		printf("famfs logplay: entries of the log of %s:\n",
		       fs->mounted ? fs->root : fs->dev.path);
	rc = famfs_log_walk(fs->dev.log, fs->dev.log_len, &g, 0, play_entry, p,
			    &walk);
	snprintf(changes, sizeof(changes), ", %llu directory mode or owner changes",
		 (unsigned long long)p->ns.dir_changes);
	printf("famfs logplay: %s: %llu entries: %llu files (%s), %llu directories%s, %llu other%s\n",
	       fs->mounted ? fs->root : fs->dev.path,
	       (unsigned long long)walk.valid, (unsigned long long)p->files,
	       human_size(p->bytes, sz, sizeof(sz)), (unsigned long long)p->dirs,
	       p->ns.dir_changes ? changes : "", (unsigned long long)p->others,
	       p->skipped ? " (some skipped, see above)" : "");
	if (rc)
		fprintf(stderr, "famfs logplay: the log is damaged at entry %llu: %s; run famfs fsck\n",
			(unsigned long long)walk.valid,
			famfs_escape(walk.bad ? walk.why : famfs_errmsg(), esc,
				     sizeof(esc)));
	if (!fs->mounted)
		printf("famfs logplay: %s is not a mount; nothing to play (the daemon plays the log when it is mounted)\n",
		       fs->dev.path);
	else if (dryrun)
		printf("famfs logplay: dry run: the mount was not looked at\n");
	else if (p->missing)
		printf("famfs logplay: %llu logged entries are not shown by the mount\n",
		       (unsigned long long)p->missing);
	else
		printf("famfs logplay: the mount shows every entry\n");
	famfs_ns_free(&p->ns);
	return rc || p->missing ? CLI_FAIL : CLI_OK;
}

struct logplay_args {
	const char *device;
	bool dryrun, verbose;
	int how; /* 'm' or 'r', which change nothing */
	struct shadow_args sh;
};

/* -c: reading the log changes nothing on any host */
static int logplay_client(const struct tool_opt *o, const char *arg)
{
	(void)o;
	(void)arg;
	fprintf(stderr, "famfs logplay: note: -c has no effect: logplay only reads, and the daemon takes its role from the superblock\n");
	return 0;
}

/*
 * --shadow DIR, or upstream's short -S, which takes no argument: DIR comes
 * first among the operands then ("-Ss DIR MOUNTPOINT").
 */
static int logplay_shadow(const struct tool_opt *o, const char *arg)
{
	struct shadow_args *sh = o->dest;

	if (sh->dir || sh->dir_first) {
		fprintf(stderr, "famfs logplay: one --shadow at a time\n");
		return -1;
	}
	sh->dir = arg;
	sh->dir_first = !arg;
	return 0;
}

int cmd_logplay(int argc, char **argv)
{
	struct logplay_args a = { .device = cli_device,
				  .dryrun = cli_dryrun,
				  .sh.mode.prog = "famfs logplay" };
	const struct tool_opt opts[] = {
		OPT_FLAG('n', "dryrun", &a.dryrun),
		OPT_FLAG('v', "verbose", &a.verbose),
		OPT_STRING('D', "device", &a.device),
		OPT_CALL('m', "mmap", &a.how, cli_opt_how_noted),
		OPT_CALL('r', "read", &a.how, cli_opt_how_noted),
		OPT_CALL('c', "client", NULL, logplay_client),
		OPT_CALL('S', NULL, &a.sh, logplay_shadow),
		OPT_VALUE(0, "shadow", &a.sh, logplay_shadow),
		OPT_FLAG('s', "shadowtest", &a.sh.test),
		OPT_STRING('d', "daxdev", &a.sh.daxdev),
		OPT_FLAG('M', "set-daxmode", &a.sh.mode.set_daxmode),
		OPT_HELP_ALL,
		OPT_END,
	};
	const struct shadow_args *sh = &a.sh;
	struct play p = { 0 };
	struct cli_fs fs;
	int rc;

	rc = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (rc >= 0)
		return rc;
	if (sh->dir || sh->dir_first || sh->test || sh->daxdev)
		return shadow_logplay(sh, a.device, a.dryrun, a.verbose,
				      argc - optind, argv + optind);
	if (sh->mode.set_daxmode) {
		fprintf(stderr, "famfs logplay: -M applies only with --daxdev\n");
		return CLI_USAGE;
	}
	if (optind < argc - 1 || (optind == argc && !a.device)) {
		fprintf(stderr, "famfs logplay: %s\n",
			optind == argc ? "give a mount point (any path in a mounted famfs)" :
					 "one mount point at a time");
		return cli_usage_error(CLI_USAGE);
	}
	if (cli_fs_open(&fs, a.device, optind < argc ? argv[optind] : "",
			false))
		return CLI_FAIL;
	p.verbose = a.verbose;
	rc = play_log(&p, &fs, a.dryrun);
	cli_fs_close(&fs);
	return rc;
}
