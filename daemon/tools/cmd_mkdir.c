// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs mkdir: log new directories. */
#include <errno.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs mkdir [-p] [-m MODE] [-u UID] [-g GID] [-v] [-D DEVICE] DIR...\n"
		"\n"
		"Create directories in a famfs. Only the master host can do this; the new\n"
		"directory is in the log, and so visible in the mount, when mkdir returns.\n"
		"Directories can never be removed again.\n"
		"\n"
		"DIR is a path inside a mounted famfs, or with --device a path relative to\n"
		"the root of the famfs on DEVICE (an unmounted device or image file).\n"
		"\n"
		"Options:\n"
		"  -p, --parents     make missing parent directories too, and do not fail\n"
		"                    when a directory exists already (-m applies only to\n"
		"                    the directories actually made)\n"
		"  -m, --mode=MODE   octal permissions (default 0755)\n"
		"  -u, --uid=UID     owner (default: your effective uid)\n"
		"  -g, --gid=GID     group (default: your effective gid)\n"
		"  -D, --device=DEV  work on the famfs on DEV instead of a mounted one\n"
		"  -v, --verbose     say what is made\n"
		"  -h, -?, --help    show this help\n"
		"\n"
		"Exit status:\n"
		"  0  every directory was made (or, with -p, exists)\n"
		"  1  something failed: exists, missing parent, client host, log full...\n"
		"  2  usage error\n");
}

static int make(struct famfs_writer *w, struct cli_fs *fs, const char *rel,
		const struct cli_owner *own, int verbose)
{
	char show[PATH_MAX + 96];

	if (famfs_writer_mkdir(w, rel, own->mode, own->uid, own->gid)) {
		fprintf(stderr, "famfs mkdir: %s: %s\n",
			cli_show(fs, rel, show, sizeof(show)), famfs_errmsg());
		return -1;
	}
	if (verbose)
		printf("famfs mkdir: created %s\n",
		       cli_show(fs, rel, show, sizeof(show)));
	return 0;
}

/* mkdir -p: make each missing directory from the top down. */
static int make_parents(struct famfs_writer *w, struct cli_fs *fs,
			const char *rel, const struct cli_owner *own,
			int verbose)
{
	char part[FAMFS_PATH_LEN], show[PATH_MAX + 96];
	size_t len = strlen(rel), i = 0;

	while (i < len) {
		const char *slash = strchr(rel + i, '/');
		const struct famfs_node *n;

		i = slash ? (size_t)(slash - rel) : len;
		memcpy(part, rel, i);
		part[i] = '\0';
		i++;
		n = famfs_ns_resolve(w->ns, part);
		if (n && n->is_dir)
			continue;
		if (n) {
			fprintf(stderr, "famfs mkdir: %s exists and is not a directory\n",
				cli_show(fs, part, show, sizeof(show)));
			return -1;
		}
		if (make(w, fs, part, own, verbose))
			return -1;
	}
	return 0;
}

bool mkdir_parse(int argc, char **argv, struct mkdir_args *a, int *code)
{
	const struct tool_opt opts[] = {
		OPT_FLAG('p', "parents", &a->parents),
		CLI_OWNER_OPTS(&a->own),
		OPT_STRING('D', "device", &a->device),
		OPT_COUNT('v', "verbose", &a->verbose),
		OPT_HELP_ALL,
		OPT_END,
	};

	*a = (struct mkdir_args){ .device = cli_device,
				  .own = { .mode = 0755, .uid = geteuid(),
					   .gid = getegid() } };
	*code = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (*code >= 0)
		return false;
	if (optind == argc) {
		fprintf(stderr, "famfs mkdir: no directory given\n");
		*code = cli_usage_error(CLI_USAGE);
		return false;
	}
	a->dirs = argv + optind;
	a->ndirs = argc - optind;
	return true;
}

/*
 * mkdir(2) of @path through the mount: the daemon logs it at once, from a
 * log it keeps replayed, and a file a user keeps open for writing there
 * does not hold it up. 0 made (or, with -p, a directory already), 1 when
 * the log path must do it: it waits for the lock or says exactly why.
 */
static int make_by_mount(const char *path, mode_t mode, bool parents,
			 int verbose)
{
	char parent[PATH_MAX];
	struct stat st;

	/* The daemon gives a set-group-ID directory's group; -g says ours. */
	snprintf(parent, sizeof(parent), "%s", path);
	if (stat(dirname(parent), &st) == 0 && (st.st_mode & S_ISGID))
		return 1;
	if (mkdir(path, mode) == 0) {
		if (verbose)
			printf("famfs mkdir: created %s\n", path);
		return 0;
	}
	return errno == EEXIST && parents && stat(path, &st) == 0 &&
		       S_ISDIR(st.st_mode) ?
		       0 :
		       1;
}

/* mkdir -p of @path through the mount: each missing one from the top. */
static int make_parents_by_mount(const char *path, mode_t mode, int verbose)
{
	char part[PATH_MAX];
	size_t len = strlen(path);
	int r = 0;

	if (len >= sizeof(part))
		return 1;
	for (size_t i = 1; i <= len && !r; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		memcpy(part, path, i);
		part[i] = '\0';
		r = make_by_mount(part, mode, true, verbose);
	}
	return r;
}

/*
 * The directories a mounted master makes itself: how many were handled
 * (made, or refused as outside that famfs: *@failed counts those).
 * Owner and mode must be the caller's and plain: mkdir(2) gives the new
 * directory the caller's ids, and the log keeps what it was made with.
 */
static int mkdir_all_by_mount(const struct mkdir_args *a, int *failed)
{
	char rel[FAMFS_PATH_LEN];
	struct cli_fs fs;
	int i = 0, r = 0;
	mode_t mask;

	*failed = 0;
	if (a->device || a->own.uid != geteuid() || a->own.gid != getegid() ||
	    (a->own.mode & ~0777u) || cli_master_mount(&fs, a->dirs[0]))
		return 0;
	mask = umask(0); /* -m is the mode, as the log path makes it */
	for (; i < a->ndirs && r <= 0; i++) {
		/* only inside this famfs; says why not, as the log path would */
		r = cli_relpath_new(&fs, a->dirs[i], rel) ? -1 :
		    a->parents ? make_parents_by_mount(a->dirs[i], a->own.mode,
						       a->verbose) :
				 make_by_mount(a->dirs[i], a->own.mode, false,
					       a->verbose);
		*failed += r < 0;
	}
	umask(mask);
	cli_fs_close(&fs);
	return r > 0 ? i - 1 : i;
}

int mkdir_run(const struct mkdir_args *a)
{
	int failed, done = mkdir_all_by_mount(a, &failed);
	int rc = failed ? CLI_FAIL : CLI_OK;
	struct famfs_writer w;
	struct cli_fs fs;

	if (done == a->ndirs)
		return rc;
	if (cli_writer_open(&fs, &w, a->device, a->dirs[done], "mkdir"))
		return CLI_FAIL;
	for (int i = done; i < a->ndirs; i++) {
		char rel[FAMFS_PATH_LEN];

		if (cli_relpath_new(&fs, a->dirs[i], rel))
			rc = CLI_FAIL;
		else if (a->parents ?
				 make_parents(&w, &fs, rel, &a->own, a->verbose) :
				 make(&w, &fs, rel, &a->own, a->verbose))
			rc = CLI_FAIL;
	}
	cli_writer_close(&fs, &w);
	return rc;
}

int cmd_mkdir(int argc, char **argv)
{
	struct mkdir_args a;
	int code;

	return mkdir_parse(argc, argv, &a, &code) ? mkdir_run(&a) : code;
}
