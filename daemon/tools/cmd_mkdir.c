// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs mkdir: log new directories. */
#include <errno.h>
#include <string.h>
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

int mkdir_run(const struct mkdir_args *a)
{
	struct famfs_writer w;
	struct cli_fs fs;
	int rc = CLI_OK;

	if (cli_writer_open(&fs, &w, a->device, a->dirs[0], "mkdir"))
		return CLI_FAIL;
	for (int i = 0; i < a->ndirs; i++) {
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
