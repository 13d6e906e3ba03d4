// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs getmap: where a file's bytes live, according to the log. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

/* upstream's exit codes (its CLI reference) */
#define GM_MAPPED 0
#define GM_NOT_FAMFS 1
#define GM_NOT_MAPPED 2 /* also ENOENT (2): no such file */
#define GM_BADARGS EBADF
#define GM_NOT_REG EISDIR

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs getmap [-q] [-c] [-D DEVICE] FILE...\n"
		"\n"
		"Show where each file's bytes live on the device, as the log records it:\n"
		"its size and its extents (device index, offset, length), or for an\n"
		"interleaved file its chunk size and strips. The map is checked against\n"
		"the device (aligned, inside it, large enough for the file). A file of a\n"
		"mounted famfs must also have the size the log gives it.\n"
		"\n"
		"Options:\n"
		"  -q, --quiet            print nothing; the exit status tells\n"
		"  -c, --continue         go on to the next FILE after a failure\n"
		"  -D, --device=DEV       the famfs on DEV; FILE is relative to its root\n"
		"  -h, -?, --help         show this help\n"
		"\n"
		"Exit status (as upstream famfs; the last failing FILE decides):\n"
		"   0  a famfs file with a valid map\n"
		"   1  the file is not in a famfs\n"
		"   2  the file is in a famfs but has no valid map in the log; also\n"
		"      'no such file' (ENOENT, which is 2 on Linux)\n"
		"   9  bad command line (EBADF)\n"
		"  21  not a regular file (EISDIR)\n");
}

static void print_map(const char *name, const struct famfs_node *n)
{
	const struct famfs_omf_fmap *fm = &n->fmap;
	char esc[FAMFS_ESCAPED_LEN(PATH_MAX)];

	printf("File:     %s\n", famfs_escape(name, esc, sizeof(esc)));
	printf("\tsize:    %llu\n", (unsigned long long)n->size);
	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		printf("\textents: %u\n", fm->simple.nextents);
		for (uint32_t i = 0; i < fm->simple.nextents; i++)
			printf("\t\tdev %llu\toffset 0x%llx\tlength %llu\n",
			       (unsigned long long)fm->simple.se[i].devindex,
			       (unsigned long long)fm->simple.se[i].offset,
			       (unsigned long long)fm->simple.se[i].len);
		return;
	}
	for (uint32_t k = 0; k < fm->interleave.niext; k++) {
		const struct famfs_omf_iext *ie = &fm->interleave.ie[k];

		printf("\tinterleaved extent %u: %llu strips, chunk size %llu\n", k,
		       (unsigned long long)ie->nstrips,
		       (unsigned long long)ie->chunk_size);
		for (uint64_t s = 0; s < ie->nstrips; s++)
			printf("\t\tdev %llu\toffset 0x%llx\tlength %llu\n",
			       (unsigned long long)ie->strips[s].devindex,
			       (unsigned long long)ie->strips[s].offset,
			       (unsigned long long)ie->strips[s].len);
	}
}

static int hush(void)
{
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);

	fflush(stderr);
	if (null >= 0) {
		dup2(null, STDERR_FILENO);
		close(null);
	}
	return saved;
}

static void unhush(int saved)
{
	if (saved < 0)
		return;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
}

static int getmap_one(const char *device, const char *file, int quiet)
{
	struct famfs_ns ns;
	struct famfs_geometry g;
	const struct famfs_node *n;
	char rel[FAMFS_PATH_LEN];
	struct stat st;
	struct cli_fs fs;
	int rc;

	if (!device) {
		if (stat(file, &st) < 0) {
			if (!quiet)
				fprintf(stderr, "famfs getmap: %s: %s\n", file,
					strerror(errno));
			return errno == ENOENT ? ENOENT : GM_NOT_FAMFS;
		}
		if (!S_ISREG(st.st_mode)) {
			if (!quiet)
				fprintf(stderr, "famfs getmap: %s is not a regular file\n",
					file);
			return GM_NOT_REG;
		}
	}
	/* Quiet means quiet: the helpers' messages go too. */
	int saved = quiet ? hush() : -1;

	rc = cli_fs_open(&fs, device, file, false);
	if (rc) {
		unhush(saved);
		return GM_NOT_FAMFS;
	}
	rc = cli_relpath(&fs, file, rel);
	unhush(saved);
	if (rc) {
		cli_fs_close(&fs);
		return GM_NOT_FAMFS;
	}
	if (famfs_ns_load(&fs.dev, &ns, &(struct famfs_walk){ 0 }, NULL) &&
	    !quiet)
		fprintf(stderr, "famfs getmap: warning: %s (only the entries before the damage are known)\n",
			famfs_errmsg());
	n = famfs_ns_resolve(&ns, rel);
	rc = GM_MAPPED;
	if (!n) {
		if (!quiet)
			fprintf(stderr, "famfs getmap: %s: %s\n", file,
				device ? "no such file in the log" :
					 "in a famfs, but the log has no file by that name");
		rc = device ? ENOENT : GM_NOT_MAPPED;
	} else if (n->is_dir) {
		if (!quiet)
			fprintf(stderr, "famfs getmap: %s is a directory\n", file);
		rc = GM_NOT_REG;
	} else {
		famfs_dev_geometry(&fs.dev, &g);
		if (famfs_fmap_check(&n->fmap, n->size, &g)) {
			if (!quiet)
				fprintf(stderr, "famfs getmap: %s: bad map in the log: %s\n",
					file, famfs_errmsg());
			rc = GM_NOT_MAPPED;
		} else if (!device && (uint64_t)st.st_size != n->size) {
			if (!quiet)
				fprintf(stderr, "famfs getmap: %s: the mount says %llu bytes but the log %llu\n",
					file, (unsigned long long)st.st_size,
					(unsigned long long)n->size);
			rc = GM_NOT_MAPPED;
		} else if (!quiet) {
			print_map(file, n);
		}
	}
	famfs_ns_free(&ns);
	cli_fs_close(&fs);
	return rc;
}

int cmd_getmap(int argc, char **argv)
{
	const char *device = cli_device;
	int quiet = 0, rc;
	bool cont = false;
	const struct tool_opt opts[] = {
		OPT_COUNT('q', "quiet", &quiet),
		OPT_FLAG('c', "continue", &cont),
		OPT_STRING('D', "device", &device),
		OPT_HELP_ALL,
		OPT_END,
	};

	rc = cli_parse_opts(argc, argv, opts, usage, GM_MAPPED, GM_BADARGS);
	if (rc >= 0)
		return rc;
	rc = GM_MAPPED;
	if (optind == argc) {
		fprintf(stderr, "famfs getmap: no file given\n");
		return cli_usage_error(GM_BADARGS);
	}
	for (int i = optind; i < argc; i++) {
		int r = getmap_one(device, argv[i], quiet);

		if (r) {
			rc = r;
			if (!cont)
				break;
		}
	}
	return rc;
}
