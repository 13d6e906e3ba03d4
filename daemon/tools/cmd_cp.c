// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs cp: copy files and trees into a famfs. Everything is created in
 * the log first, under one log lock and one replay, then the bytes are
 * copied with the lock released, so a long copy never stalls other
 * creators and a tree of many files costs one replay of the log.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs cp [OPTIONS] SOURCE DEST\n"
		"       famfs cp [OPTIONS] SOURCE... DIRECTORY\n"
		"       famfs cp -r [OPTIONS] SOURCE... DIRECTORY\n"
		"\n"
		"Copy files into a famfs (to copy out of one, the ordinary cp works).\n"
		"Each destination file is allocated with the size of its source, logged,\n"
		"and then filled; it is visible in the mount as soon as cp returns. Only\n"
		"the master host can copy into a famfs.\n"
		"\n"
		"  SOURCE DEST       DEST is a new file, or an existing directory that\n"
		"                    gets DEST/basename(SOURCE)\n"
		"  SOURCE... DIR     DIR must be an existing directory\n"
		"  -r SOURCE... DIR  source files go into DIR; the contents of source\n"
		"                    directories are copied into DIR (as upstream famfs\n"
		"                    does: 'cp -r a b' makes b a copy of a, also when b\n"
		"                    exists); DIR is made if it does not exist\n"
		"\n"
		"An existing destination file of the same size is copied over again, so an\n"
		"interrupted cp can simply be rerun; one of another size is an error.\n"
		"Empty source files cannot be copied (famfs files have a size > 0).\n"
		"\n"
		"Options:\n"
		"  -r, --recursive       copy directories and their contents. famfs has\n"
		"                        no symbolic links: a symlink met with -r (also\n"
		"                        one named as SOURCE) is skipped with a warning\n"
		"  -L, --dereference     follow symbolic links and copy what they point\n"
		"                        to; a directory loop is refused\n"
		"  -m, --mode=MODE       octal permissions of new files (default: the\n"
		"                        source's; -m is reduced by the umask)\n"
		"  -u, --uid=UID         owner (default: your uid)\n"
		"  -g, --gid=GID         group (default: your gid)\n"
		"  -t, --threadct=N      copy N files at a time (default 1)\n"
		"  -c, --compare         copy nothing: check that each destination exists\n"
		"                        and holds the same bytes as its source\n"
		"  -D, --device=DEV      copy into the famfs on DEV instead of a mounted one;\n"
		"                        DEST is then relative to the famfs root\n"
		"  -v, --verbose         list each file\n"
		"  -h, -?, --help        show this help\n"
		"\n"
		"Interleaved allocation (strips taken from equal buckets of the device):\n"
		"  -N, --nstrips=N       number of strips (1 to %d)\n"
		"  -B, --nbuckets=N      buckets the device is divided into (default: N)\n"
		"  -C, --chunksize=SIZE  bytes per chunk; power of two, multiple of 2 MiB\n"
		"                        (default 2m)\n"
		"\n"
		"On a terminal, copies that take more than a second show their progress.\n"
		"\n"
		"Exit status:\n"
		"  0  everything was copied (or, with -c, compared equal)\n"
		"  1  something was not: missing or empty source, destination of another\n"
		"     size, no space, log full, client host, a difference with -c...\n"
		"  2  usage error\n",
		FAMFS_MAX_STRIPS);
}

struct item {
	char *src;
	size_t root_len; /* src[0, root_len) is the SOURCE the user named */
	dev_t dev;	 /* what was listed: a different file is not copied */
	ino_t ino;
	char rel[FAMFS_PATH_LEN];
	uint64_t size;
};

/* The directories on the path being copied, for loop detection. */
struct dirchain {
	dev_t dev;
	ino_t ino;
	const char *path;
	const struct dirchain *up;
};

struct cp {
	struct cli_fs fs;
	struct famfs_writer w; /* copying */
	struct famfs_ns cmp_ns; /* comparing: no writer */
	struct famfs_ns *ns; /* the one in use */
	const struct famfs_interleave *il;
	struct cli_owner own; /* mode 0: the source's */
	bool compare;
	bool follow; /* follow symlinks: -L, or a SOURCE named without -r */
	int verbose;
	bool fatal; /* out of space or log: stop planning */
	unsigned int errors;
	struct item *items;
	unsigned int nitems, cap;
	uint64_t total;
	struct cli_progress *progress;
};

static const char *show(struct cp *cp, const char *rel)
{
	static __thread char buf[PATH_MAX + 96];

	return cli_show(&cp->fs, rel, buf, sizeof(buf));
}

static int join(struct cp *cp, const char *dir, const char *name,
		char out[FAMFS_PATH_LEN])
{
	int n = snprintf(out, FAMFS_PATH_LEN, "%s%s%s", dir, dir[0] ? "/" : "",
			 name);

	if (n >= FAMFS_PATH_LEN) {
		fprintf(stderr, "famfs cp: %s/%s: longer than the %d bytes a famfs path may have\n",
			show(cp, dir), name, FAMFS_PATH_LEN - 1);
		cp->errors++;
		return -1;
	}
	if (!cp->compare && cli_reserved(out)) {
		fprintf(stderr, "famfs cp: %s: .meta is the daemon's metadata directory; not copied\n",
			show(cp, out));
		cp->errors++;
		return -1;
	}
	return 0;
}

/*
 * Open @path for @flags. Without @follow, every component below the first
 * @root_len bytes (the SOURCE the user named, itself included) is opened
 * with O_NOFOLLOW, one directory at a time: a symbolic link swapped into
 * the tree while we copy cannot lead anywhere else (ELOOP).
 */
static int open_below(const char *path, size_t root_len, int flags,
		      bool follow)
{
	char root[PATH_MAX], rest[PATH_MAX], *name = rest, *slash;
	int dir, fd, err;

	if (follow)
		return open(path, flags | O_CLOEXEC);
	if (!path[root_len])
		return open(path, flags | O_CLOEXEC | O_NOFOLLOW);
	snprintf(root, sizeof(root), "%.*s", (int)root_len, path);
	snprintf(rest, sizeof(rest), "%s", path + root_len + 1);
	dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	while (dir >= 0 && (slash = strchr(name, '/'))) {
		*slash = '\0';
		fd = openat(dir, name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		close(dir);
		dir = fd;
		name = slash + 1;
	}
	if (dir < 0)
		return -1;
	fd = openat(dir, name, flags | O_CLOEXEC | O_NOFOLLOW);
	err = errno;
	close(dir);
	errno = err;
	return fd;
}

static void skip_symlink(const char *path)
{
	fprintf(stderr, "famfs cp: warning: %s is a symbolic link; skipped (famfs has no symbolic links; -L copies what it points to)\n",
		path);
}

/* Log (or find) one destination file and remember to fill it. */
static void plan_file(struct cp *cp, const char *src, size_t root_len,
		      const struct stat *st, const char *rel)
{
	const struct famfs_node *n = famfs_ns_resolve(cp->ns, rel);
	uint64_t size = (uint64_t)st->st_size;
	struct item *it;

	if (!size) {
		fprintf(stderr, "famfs cp: %s: empty file not copied (famfs files have a size > 0)\n",
			src);
		cp->errors++;
		return;
	}
	if (n && n->is_dir) {
		fprintf(stderr, "famfs cp: %s is a directory; cannot copy %s over it\n",
			show(cp, rel), src);
		cp->errors++;
		return;
	}
	if (n && n->size != size) {
		fprintf(stderr, "famfs cp: %s exists with size %llu; %s has %llu bytes\n",
			show(cp, rel), (unsigned long long)n->size, src,
			(unsigned long long)size);
		cp->errors++;
		return;
	}
	if (!n && cp->compare) {
		fprintf(stderr, "famfs cp: compare: %s does not exist\n",
			show(cp, rel));
		cp->errors++;
		return;
	}
	if (!n) {
		uint32_t mode = cp->own.mode ? cp->own.mode :
					       (uint32_t)st->st_mode & 0777;
		int rc = famfs_writer_creat(&cp->w, rel, size, mode, cp->own.uid,
					    cp->own.gid, cp->il, NULL);

		if (rc) {
			fprintf(stderr, "famfs cp: %s: %s\n", show(cp, rel),
				famfs_errmsg());
			cp->errors++;
			if (rc == -ENOSPC)
				cp->fatal = true;
			return;
		}
	}
	if (cp->nitems == cp->cap) {
		unsigned int cap = cp->cap ? cp->cap * 2 : 64;
		struct item *p = realloc(cp->items, cap * sizeof(*p));

		if (!p) {
			fprintf(stderr, "famfs cp: out of memory\n");
			cp->errors++;
			cp->fatal = true;
			return;
		}
		cp->items = p;
		cp->cap = cap;
	}
	it = &cp->items[cp->nitems];
	it->src = strdup(src);
	if (!it->src) {
		cp->errors++;
		cp->fatal = true;
		return;
	}
	snprintf(it->rel, sizeof(it->rel), "%s", rel);
	it->root_len = root_len;
	it->dev = st->st_dev;
	it->ino = st->st_ino;
	it->size = size;
	cp->nitems++;
	cp->total += size;
}

/* Make directory @rel unless it exists; 0 when it is there afterwards. */
static int ensure_dir(struct cp *cp, const char *rel, uint32_t dirmode)
{
	const struct famfs_node *n = famfs_ns_resolve(cp->ns, rel);
	int rc;

	if (n && n->is_dir)
		return 0;
	cp->errors++;
	if (n) {
		fprintf(stderr, "famfs cp: %s exists and is not a directory\n",
			show(cp, rel));
		return -1;
	}
	if (cp->compare) {
		fprintf(stderr, "famfs cp: compare: directory %s does not exist\n",
			show(cp, rel));
		return -1;
	}
	rc = famfs_writer_mkdir(&cp->w, rel, dirmode, cp->own.uid,
				cp->own.gid);
	if (rc) {
		fprintf(stderr, "famfs cp: %s: %s\n", show(cp, rel),
			famfs_errmsg());
		if (rc == -ENOSPC)
			cp->fatal = true;
		return -1;
	}
	cp->errors--;
	if (cp->verbose)
		printf("famfs cp: created directory %s\n", show(cp, rel));
	return 0;
}

/*
 * Copy the contents of directory @src into @rel, making @rel if needed.
 * @up lists the directories above it on the path being copied.
 */
static void plan_dir(struct cp *cp, const char *src, size_t root_len,
		     const char *rel, uint32_t dirmode,
		     const struct dirchain *up)
{
	struct dirchain me = { .path = src, .up = up };
	struct dirent **ents;
	struct stat st;
	int dfd, nents;

	dfd = open_below(src, root_len, O_RDONLY | O_DIRECTORY, cp->follow);
	if (dfd < 0 || fstat(dfd, &st) < 0) {
		fprintf(stderr, "famfs cp: cannot read directory %s: %s\n", src,
			errno == ELOOP ? "it became a symbolic link" :
					 strerror(errno));
		cp->errors++;
		if (dfd >= 0)
			close(dfd);
		return;
	}
	me.dev = st.st_dev;
	me.ino = st.st_ino;
	for (const struct dirchain *c = up; c; c = c->up) {
		if (c->dev == me.dev && c->ino == me.ino) {
			fprintf(stderr, "famfs cp: %s: a directory loop (it is %s, on the path being copied); not copied\n",
				src, c->path);
			cp->errors++;
			close(dfd);
			return;
		}
	}
	if (ensure_dir(cp, rel, dirmode)) {
		close(dfd);
		return;
	}

	/* Sorted, so that allocation and output do not depend on readdir. */
	nents = scandirat(dfd, ".", &ents, NULL, alphasort);
	if (nents < 0) {
		fprintf(stderr, "famfs cp: cannot read directory %s: %s\n", src,
			strerror(errno));
		cp->errors++;
		close(dfd);
		return;
	}
	for (int i = 0; i < nents; i++) {
		const char *name = ents[i]->d_name;
		char path[PATH_MAX], sub[FAMFS_PATH_LEN];

		if (cp->fatal || !strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", src, name);
		if (fstatat(dfd, name, &st,
			    cp->follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
			fprintf(stderr, "famfs cp: cannot stat %s: %s\n", path,
				strerror(errno));
			cp->errors++;
		} else if (S_ISLNK(st.st_mode)) {
			skip_symlink(path);
		} else if (join(cp, rel, name, sub)) {
			/* counted */
		} else if (S_ISREG(st.st_mode)) {
			plan_file(cp, path, root_len, &st, sub);
		} else if (S_ISDIR(st.st_mode)) {
			plan_dir(cp, path, root_len, sub,
				 (uint32_t)st.st_mode & 0777, &me);
		} else {
			fprintf(stderr, "famfs cp: %s: not a regular file or directory; skipped\n",
				path);
			cp->errors++;
		}
	}
	for (int i = 0; i < nents; i++)
		free(ents[i]);
	free(ents);
	close(dfd);
}

#define CP_BUF (4u << 20)

static int copy_one(unsigned int i, void *arg)
{
	struct cp *cp = arg;
	struct item *it = &cp->items[i];
	const struct famfs_ns *ns = cp->fs.mounted ? NULL : cp->ns;
	uint8_t *buf = NULL, *dbuf = NULL;
	struct cli_file f;
	uint64_t off = 0;
	struct stat st;
	int src, rc = -1;

	src = open_below(it->src, it->root_len, O_RDONLY, cp->follow);
	if (src < 0) {
		fprintf(stderr, "famfs cp: cannot open %s: %s\n", it->src,
			errno == ELOOP ? "it became a symbolic link" :
					 strerror(errno));
		return -1;
	}
	if (fstat(src, &st) < 0 || st.st_dev != it->dev ||
	    st.st_ino != it->ino) {
		fprintf(stderr, "famfs cp: %s was replaced while being copied; not copied\n",
			it->src);
		close(src);
		return -1;
	}
	if (cli_file_open(&f, &cp->fs, ns, it->rel, !cp->compare)) {
		close(src);
		return -1;
	}
	buf = malloc(CP_BUF);
	if (cp->compare)
		dbuf = malloc(CP_BUF);
	if (!buf || (cp->compare && !dbuf))
		goto out;
	while (off < it->size) {
		size_t want = it->size - off < CP_BUF ? (size_t)(it->size - off) :
							CP_BUF;
		ssize_t n = pread(src, buf, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "famfs cp: %s: %s at byte %llu\n", it->src,
				n < 0 ? strerror(errno) :
					"the file shrank while being copied",
				(unsigned long long)off);
			goto out;
		}
		if (cp->compare) {
			if (cli_file_pread(&f, dbuf, (size_t)n, off) != n)
				goto out;
			if (memcmp(buf, dbuf, (size_t)n)) {
				fprintf(stderr, "famfs cp: compare: %s differs from %s near byte %llu\n",
					f.name, it->src, (unsigned long long)off);
				goto out;
			}
		} else if (cli_file_pwrite(&f, buf, (size_t)n, off) != n) {
			goto out;
		}
		off += (uint64_t)n;
		cli_progress_add(cp->progress, (uint64_t)n);
	}
	if (!cp->compare && f.fd >= 0 && fsync(f.fd) < 0 && errno != EINVAL &&
	    errno != ENOSYS) {
		fprintf(stderr, "famfs cp: %s: %s\n", f.name, strerror(errno));
		goto out;
	}
	if (cp->verbose)
		printf("famfs cp: %s %s -> %s\n",
		       cp->compare ? "compared" : "copied", it->src, f.name);
	rc = 0;
out:
	free(buf);
	free(dbuf);
	cli_file_close(&f);
	close(src);
	return rc;
}

static const char *base_name(const char *path, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%s", path);
	n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return basename(buf);
}

/* -t: upstream's -t0 means no thread pool, which is one thread here */
static int cp_threads(const struct tool_opt *o, const char *arg)
{
	uint32_t *threads = o->dest;

	if (cli_parse_u32("-t", arg, threads))
		return -1;
	if (!*threads)
		*threads = 1;
	return 0;
}

bool cp_parse(int argc, char **argv, struct cp_args *a, int *code)
{
	struct cli_interleave ilopt = { 0 };
	const struct tool_opt opts[] = {
		OPT_FLAG('r', "recursive", &a->recursive),
		OPT_FLAG('L', "dereference", &a->dereference),
		CLI_OWNER_OPTS(&a->own),
		OPT_VALUE('t', "threadct", &a->threads, cp_threads),
		OPT_FLAG('c', "compare", &a->compare),
		CLI_INTERLEAVE_OPTS(&ilopt),
		OPT_STRING('D', "device", &a->device),
		OPT_COUNT('v', "verbose", &a->verbose),
		OPT_HELP_ALL,
		OPT_END,
	};
	mode_t mask;

	*a = (struct cp_args){ .device = cli_device, .threads = 1,
			       .own = { .uid = getuid(), .gid = getgid() } };
	*code = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (*code >= 0)
		return false;
	if (argc - optind < 2) {
		fprintf(stderr, "famfs cp: give at least one SOURCE and a DEST\n");
		goto usage_err;
	}
	if (cli_interleave_finish(&ilopt, &a->il_buf, &a->il))
		goto usage_err;
	mask = umask(0);
	umask(mask);
	a->own.mode &= ~(uint32_t)mask;
	a->sources = argv + optind;
	a->nsources = argc - optind - 1;
	a->dest = argv[argc - 1];
	return true;

usage_err:
	*code = cli_usage_error(CLI_USAGE);
	return false;
}

/*
 * Plan the copy of one SOURCE into @destrel: log its files (and, with -r,
 * its directories). *@dest_is_dir becomes true once DEST is a directory.
 */
static void plan_source(struct cp *cp, const char *arg, bool recursive,
			const char *destrel, bool *dest_is_dir)
{
	char rel[FAMFS_PATH_LEN], bn[PATH_MAX], src[PATH_MAX];
	struct stat st;
	size_t n;

	/* "dir/" is "dir": paths below it are joined with one '/' */
	n = (size_t)snprintf(src, sizeof(src), "%s", arg);
	if (n >= sizeof(src)) {
		fprintf(stderr, "famfs cp: %s: path too long\n", arg);
		cp->errors++;
		return;
	}
	while (n > 1 && src[n - 1] == '/')
		src[--n] = '\0';
	if ((cp->follow ? stat(src, &st) : lstat(src, &st)) < 0) {
		fprintf(stderr, "famfs cp: cannot stat %s: %s\n", src,
			strerror(errno));
		cp->errors++;
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		skip_symlink(src);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!recursive) {
			fprintf(stderr, "famfs cp: %s is a directory; not copied without -r\n",
				src);
			cp->errors++;
			return;
		}
		plan_dir(cp, src, n, destrel, (uint32_t)st.st_mode & 0777,
			 NULL);
		*dest_is_dir = true;
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "famfs cp: %s: not a regular file or directory; skipped\n",
			src);
		cp->errors++;
		return;
	}
	if (!*dest_is_dir && recursive) {
		/* -r: DEST is a directory, made on first use. */
		if (ensure_dir(cp, destrel, 0755))
			return;
		*dest_is_dir = true;
	}
	if (*dest_is_dir) {
		if (join(cp, destrel, base_name(src, bn, sizeof(bn)), rel))
			return;
	} else {
		snprintf(rel, sizeof(rel), "%s", destrel);
	}
	plan_file(cp, src, n, &st, rel);
}

/*
 * Open the famfs that holds DEST with its namespace loaded: under the
 * writer's lock to copy, read only to compare (a client may compare).
 */
static int cp_open(struct cp *cp, const struct cp_args *a,
		   char destrel[FAMFS_PATH_LEN])
{
	if (cli_fs_open(&cp->fs, a->device, a->dest, !a->compare))
		return -1;
	if (a->compare ? cli_relpath(&cp->fs, a->dest, destrel) :
			 cli_relpath_new(&cp->fs, a->dest, destrel))
		goto close;
	if (!a->compare) {
		if (!cli_writer_begin(&cp->fs, &cp->w, "cp")) {
			cp->ns = cp->w.ns;
			return 0;
		}
	} else if (!cli_ns_load(&cp->fs, &cp->cmp_ns, "cp")) {
		cp->ns = &cp->cmp_ns;
		return 0;
	} else {
		famfs_ns_free(&cp->cmp_ns);
	}
close:
	cli_fs_close(&cp->fs);
	return -1;
}

/* Is DEST fit for what is copied into it? Says why not. */
static bool dest_fits(struct cp *cp, const struct cp_args *a,
		      const char *destrel, bool *dest_is_dir)
{
	const struct famfs_node *dn = famfs_ns_resolve(cp->ns, destrel);

	*dest_is_dir = dn && dn->is_dir;
	if (dn && !*dest_is_dir && (a->recursive || a->nsources > 1)) {
		fprintf(stderr, "famfs cp: %s exists and is not a directory\n",
			show(cp, destrel));
		return false;
	}
	if (!dn && a->nsources > 1 && !a->recursive) {
		fprintf(stderr, "famfs cp: %s: with several sources the destination must be an existing directory\n",
			show(cp, destrel));
		return false;
	}
	return true;
}

/* Copy (or compare) the planned files, then let go of everything. */
static unsigned int copy_and_end(struct cp *cp, uint32_t threads)
{
	unsigned int failed;

	if (cp->fs.mounted && !cp->compare) {
		/* The files are logged; copy without holding the log lock. */
		famfs_writer_end(&cp->w);
	}
	cp->progress = cli_progress_start(cp->compare ? "compared" : "copied",
					  cp->total);
	failed = cli_parallel(threads, cp->nitems, copy_one, cp);
	cli_progress_end(cp->progress);
	if (cp->compare)
		famfs_ns_free(&cp->cmp_ns);
	else if (!cp->fs.mounted)
		famfs_writer_end(&cp->w);
	for (unsigned int i = 0; i < cp->nitems; i++)
		free(cp->items[i].src);
	free(cp->items);
	cli_fs_close(&cp->fs);
	return failed;
}

int cp_run(const struct cp_args *a)
{
	struct cp cp = { .il = a->il, .own = a->own, .compare = a->compare,
			 .verbose = a->verbose,
			 /* As GNU cp: without -r a symlink SOURCE is followed. */
			 .follow = a->dereference || !a->recursive };
	char destrel[FAMFS_PATH_LEN];
	bool dest_is_dir;
	unsigned int failed;

	if (cp_open(&cp, a, destrel))
		return CLI_FAIL;
	if (!dest_fits(&cp, a, destrel, &dest_is_dir))
		cp.errors++;
	else
		for (int i = 0; i < a->nsources && !cp.fatal; i++)
			plan_source(&cp, a->sources[i], a->recursive, destrel,
				    &dest_is_dir);
	failed = copy_and_end(&cp, a->threads);
	if (cp.fatal)
		fprintf(stderr, "famfs cp: stopped early; files logged so far stay (rerun cp once there is room)\n");
	return cp.errors || failed ? CLI_FAIL : CLI_OK;
}

int cmd_cp(int argc, char **argv)
{
	struct cp_args a;
	int code;

	return cp_parse(argc, argv, &a, &code) ? cp_run(&a) : code;
}
