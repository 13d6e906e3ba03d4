// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs mkdir: log new directories. */
#include <errno.h>
#include <getopt.h>
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
		n = famfs_ns_resolve(&w->ns, part);
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

int cmd_mkdir(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "parents", no_argument, NULL, 'p' },
		CLI_OWNER_OPTIONS,
		{ "device", required_argument, NULL, 'D' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *device = cli_device;
	struct cli_owner own = { .mode = 0755, .uid = geteuid(),
				 .gid = getegid() };
	bool parents = false;
	int verbose = 0, c, rc = CLI_OK;
	struct famfs_writer w;
	struct cli_fs fs;

	optind = 0;
	while ((c = getopt_long(argc, argv, "pm:u:g:D:vh", opts, NULL)) != -1) {
		int r = cli_owner_opt(&own, c, optarg);

		if (r < 0)
			return CLI_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'p':
			parents = true;
			break;
		case 'D':
			device = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
		default:
			return cli_usage(usage, c, CLI_OK, CLI_USAGE);
		}
	}
	if (optind == argc) {
		fprintf(stderr, "famfs mkdir: no directory given\n");
		return cli_usage_error(CLI_USAGE);
	}

	if (cli_fs_open(&fs, device, argv[optind], true))
		return CLI_FAIL;
	if (cli_writer_begin(&fs, &w, "mkdir")) {
		cli_fs_close(&fs);
		return CLI_FAIL;
	}
	for (int i = optind; i < argc; i++) {
		char rel[FAMFS_PATH_LEN];

		if (cli_relpath_new(&fs, argv[i], rel))
			rc = CLI_FAIL;
		else if (parents ? make_parents(&w, &fs, rel, &own, verbose) :
				   make(&w, &fs, rel, &own, verbose))
			rc = CLI_FAIL;
	}
	famfs_writer_end(&w);
	cli_fs_close(&fs);
	return rc;
}
