// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs creat: allocate and log files, optionally fill them with a pattern. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs creat -s SIZE [-r [-S SEED]] [OPTIONS] FILE\n"
		"       famfs creat -M FILE,SIZE[,SEED] [-M ...] [-t N] [OPTIONS]\n"
		"\n"
		"Create famfs files. A famfs file gets all its memory when it is created\n"
		"and never grows or shrinks, so the size is required. Only the master host\n"
		"can create files; a new file is visible in the mount when creat returns.\n"
		"If FILE exists already and is a famfs file of the same size (or -s is not\n"
		"given), creat does nothing to it but still fills it when asked, so a\n"
		"script that creates its files can be run again.\n"
		"\n"
		"FILE is a path inside a mounted famfs, or with --device a path relative to\n"
		"the root of the famfs on DEVICE (an unmounted device or image file).\n"
		"\n"
		"Options:\n"
		"  -s, --size=SIZE       file size in bytes; k, m, g, t suffixes allowed\n"
		"  -r, --randomize       fill the file with a pattern made from the seed\n"
		"  -S, --seed=SEED       the seed (with -r); 'famfs verify -S SEED' checks\n"
		"                        it later. Without -S, -r picks a seed and prints it.\n"
		"                        Seeds are taken modulo 2^32, as upstream famfs does.\n"
		"  -M, --multi=FILE,SIZE[,SEED]\n"
		"                        create several files (repeat -M); a non-zero SEED\n"
		"                        fills that file. Cannot be mixed with -s/-S/FILE.\n"
		"  -t, --threadct=N      threads filling files in --multi mode (default:\n"
		"                        the number of CPUs; at most 256)\n"
		"  -m, --mode=MODE       octal permissions (default 0644, less the umask)\n"
		"  -u, --uid=UID         owner (default: your effective uid)\n"
		"  -g, --gid=GID         group (default: your effective gid)\n"
		"  -D, --device=DEV      work on the famfs on DEV instead of a mounted one\n"
		"  -v, --verbose         say more about what is done\n"
		"  -h, -?, --help        show this help\n"
		"\n"
		"Interleaved allocation (strips taken from equal buckets of the device):\n"
		"  -N, --nstrips=N       number of strips (1 to %d)\n"
		"  -B, --nbuckets=N      buckets the device is divided into (default: N)\n"
		"  -C, --chunksize=SIZE  bytes written to a strip before moving to the\n"
		"                        next; a power of two, multiple of 2 MiB (default 2m)\n"
		"\n"
		"Exit status:\n"
		"  0  every file was created (or existed with the right size) and filled\n"
		"  1  something failed: exists with another size, no parent directory,\n"
		"     client host, no space, log full...\n"
		"  2  usage error\n",
		FAMFS_MAX_STRIPS);
}

/* A file of the command line, as creat works on it. */
struct newfile {
	const struct creat_file *f;
	char rel[FAMFS_PATH_LEN];
	bool ok; /* made, or there with the right size: fill it if asked */
};

struct fillctx {
	struct cli_fs *fs;
	struct famfs_ns *ns; /* device mode: where the fmaps are */
	struct newfile *files;
};

#define FILL_BUF (4u << 20)

static int fill_one(unsigned int i, void *arg)
{
	struct fillctx *ctx = arg;
	struct newfile *nf = &ctx->files[i];
	struct cli_pattern pat;
	struct cli_file f;
	uint64_t off = 0;
	uint8_t *buf;
	int rc = 0;

	if (!nf->ok || !nf->f->fill)
		return 0;
	if (cli_file_open(&f, ctx->fs, ctx->ns, nf->rel, true))
		return -1;
	buf = malloc(FILL_BUF);
	if (!buf) {
		cli_file_close(&f);
		return -1;
	}
	cli_pattern_init(&pat, nf->f->seed);
	while (off < f.size) {
		size_t n = f.size - off < FILL_BUF ? (size_t)(f.size - off) :
						     FILL_BUF;

		cli_pattern_fill(&pat, buf, n);
		if (cli_file_pwrite(&f, buf, n, off) != (ssize_t)n) {
			rc = -1;
			break;
		}
		off += n;
	}
	/* Data written through a mount must reach the memory, not a cache. */
	if (!rc && f.fd >= 0 && fsync(f.fd) < 0 && errno != EINVAL &&
	    errno != ENOSYS) {
		fprintf(stderr, "famfs creat: %s: %s\n", f.name, strerror(errno));
		rc = -1;
	}
	if (!rc)
		printf("famfs creat: filled %llu bytes of %s from seed %llu\n",
		       (unsigned long long)f.size, f.name,
		       (unsigned long long)nf->f->seed);
	free(buf);
	cli_file_close(&f);
	return rc;
}

/* -M FILE,SIZE[,SEED]: the name ends at the first comma. */
static int parse_multi(const char *arg, struct creat_file *cf)
{
	char *copy = strdup(arg), *size, *seed;
	int rc = -1;

	if (!copy)
		return -1;
	size = strchr(copy, ',');
	if (!size || size == copy) {
		fprintf(stderr, "famfs creat: -M %s: expected FILE,SIZE[,SEED]\n",
			arg);
		goto out;
	}
	*size++ = '\0';
	seed = strchr(size, ',');
	if (seed)
		*seed++ = '\0';
	if (snprintf(cf->name, sizeof(cf->name), "%s", copy) >=
	    (int)sizeof(cf->name)) {
		fprintf(stderr, "famfs creat: -M %s: path too long\n", arg);
		goto out;
	}
	if (cli_parse_size("-M size", size, &cf->size))
		goto out;
	if (seed) {
		if (cli_parse_number("-M seed", seed, 0, UINT64_MAX, &cf->seed))
			goto out;
		cf->fill = cf->seed != 0;
	}
	rc = 0;
out:
	free(copy);
	return rc;
}

/* The single FILE of "creat -s SIZE [-r [-S SEED]] FILE". */
static int parse_single(const char *name, uint64_t size, bool randomize,
			bool have_seed, uint64_t seed, struct creat_file *cf)
{
	if (snprintf(cf->name, sizeof(cf->name), "%s", name) >=
	    (int)sizeof(cf->name)) {
		fprintf(stderr, "famfs creat: %s: path too long\n", name);
		return -1;
	}
	cf->size = size;
	if (!randomize)
		return 0;
	if (!have_seed) {
		/* Upstream fills nothing here; say which seed we used. */
		seed = ((uint64_t)time(NULL) ^ (uint64_t)getpid()) & 0xffffffffu;
		if (!seed)
			seed = 1;
	}
	if (!seed) {
		fprintf(stderr, "famfs creat: seed 0 is not allowed (it means 'no fill')\n");
		return -1;
	}
	cf->seed = seed;
	cf->fill = true;
	return 0;
}

/* What the options say beyond the -M files; checked once all are read. */
struct creat_opts {
	uint64_t size, seed;
	bool randomize, have_seed;
	struct cli_interleave il;
};

static int creat_seed(const struct tool_opt *o, const char *arg)
{
	struct creat_opts *co = o->dest;

	co->have_seed = true;
	return cli_parse_number("-S", arg, 0, UINT64_MAX, &co->seed);
}

/* -M NAME,SIZE[,SEED]: one more file */
static int creat_multi(const struct tool_opt *o, const char *arg)
{
	struct creat_args *a = o->dest;

	if (parse_multi(arg, &a->files[a->nfiles]))
		return -1;
	a->nfiles++;
	a->multi = true;
	return 0;
}

/* The FILE operand and the options that go with it. */
static int creat_operands(struct creat_args *a, struct creat_opts *o,
			  int nargs, char **args)
{
	if (o->have_seed && !o->randomize) {
		fprintf(stderr, "famfs creat: -S (seed) needs -r (randomize)\n");
		return -1;
	}
	if (a->multi) {
		if (o->size || o->randomize || nargs) {
			fprintf(stderr, "famfs creat: -M cannot be mixed with -s, -r, -S or a FILE argument\n");
			return -1;
		}
	} else {
		if (!nargs) {
			fprintf(stderr, "famfs creat: no file given\n");
			return -1;
		}
		if (nargs > 1) {
			fprintf(stderr, "famfs creat: one FILE at a time (use -M for several)\n");
			return -1;
		}
		if (parse_single(args[0], o->size, o->randomize, o->have_seed,
				 o->seed, &a->files[0]))
			return -1;
		a->nfiles = 1;
	}
	return cli_interleave_finish(&o->il, &a->il_buf, &a->il);
}

bool creat_parse(int argc, char **argv, struct creat_args *a, int *code)
{
	struct creat_opts o = { 0 };
	const struct tool_opt opts[] = {
		OPT_VALUE('s', "size", &o.size, cli_opt_size),
		OPT_VALUE('S', "seed", &o, creat_seed),
		OPT_FLAG('r', "randomize", &o.randomize),
		OPT_VALUE('M', "multi", a, creat_multi),
		OPT_VALUE('t', "threadct", &a->threads, cli_opt_threads),
		CLI_OWNER_OPTS(&a->own),
		CLI_INTERLEAVE_OPTS(&o.il),
		OPT_STRING('D', "device", &a->device),
		OPT_COUNT('v', "verbose", &a->verbose),
		OPT_HELP_ALL,
		OPT_END,
	};
	mode_t mask;

	*a = (struct creat_args){ .device = cli_device,
				  .own = { .mode = 0644, .uid = geteuid(),
					   .gid = getegid() } };
	a->files = calloc((size_t)argc + 1, sizeof(*a->files));
	*code = CLI_FAIL;
	if (!a->files)
		return false;
	*code = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (*code >= 0)
		goto out;
	if (creat_operands(a, &o, argc - optind, argv + optind)) {
		*code = cli_usage_error(CLI_USAGE);
		goto out;
	}
	mask = umask(0);
	umask(mask);
	a->own.mode &= ~(uint32_t)mask;
	return true;
out:
	creat_args_free(a);
	return false;
}

void creat_args_free(struct creat_args *a)
{
	free(a->files);
	a->files = NULL;
	a->nfiles = 0;
}

/*
 * @nf is there already (a directory when @is_dir, else of @size bytes):
 * a file of the size asked is left alone, so creating scripts can be
 * rerun. 0 to fill it, -1 after saying why not.
 */
static int creat_existing(const struct creat_args *a, const char *show,
			  const struct newfile *nf, bool is_dir, uint64_t size)
{
	if (is_dir) {
		fprintf(stderr, "famfs creat: %s exists and is a directory\n",
			show);
		return -1;
	}
	if (nf->f->size && nf->f->size != size) {
		fprintf(stderr, "famfs creat: %s exists with size %llu, not %llu\n",
			show, (unsigned long long)size,
			(unsigned long long)nf->f->size);
		return -1;
	}
	if (a->verbose)
		printf("famfs creat: %s exists with the right size; leaving it\n",
		       show);
	return 0;
}

static int creat_needs_size(const char *show)
{
	fprintf(stderr, "famfs creat: %s: give a size > 0 with -s (famfs files are allocated when created)\n",
		show);
	return -1;
}

static void creat_said(const struct creat_args *a, const char *show,
		       const struct newfile *nf)
{
	if (a->verbose)
		printf("famfs creat: created %s (%llu bytes%s)\n", show,
		       (unsigned long long)nf->f->size,
		       a->il ? ", interleaved" : "");
}

/*
 * Log one file, or accept the one that is there with the right size.
 * Returns 0 when @nf is ready to be filled, -ENOSPC when no later file
 * can be made either, -1 for any other failure (said on stderr).
 */
static int creat_one(const struct creat_args *a, struct cli_fs *fs,
		     struct famfs_writer *w, struct newfile *nf)
{
	char show[PATH_MAX + 96];
	const struct famfs_node *n;
	int r;

	if (cli_relpath_new(fs, nf->f->name, nf->rel))
		return -1;
	cli_show(fs, nf->rel, show, sizeof(show));
	n = famfs_ns_resolve(w->ns, nf->rel);
	if (n)
		return creat_existing(a, show, nf, n->is_dir, n->size);
	if (!nf->f->size)
		return creat_needs_size(show);
	r = famfs_writer_creat(w, nf->rel, nf->f->size, a->own.mode,
			       a->own.uid, a->own.gid, a->il, NULL);
	if (r) {
		fprintf(stderr, "famfs creat: %s: %s\n", show, famfs_errmsg());
		return r == -ENOSPC ? -ENOSPC : -1;
	}
	creat_said(a, show, nf);
	return 0;
}

/*
 * The daemon logs a file made through the mount at its release, which the
 * kernel sends just after close(2) returns: wait (10 s at most) until the
 * name leads to the logged file, so that, as on the log path, the file is
 * in the log when famfs creat returns. -1 when it did not get there (the
 * daemon refused it, or was restarted and lost it).
 */
static int wait_logged(const char *path)
{
	struct stat st;

	for (int i = 0; i < 10000; i++) {
		if (stat(path, &st) < 0)
			return -1;
		if (st.st_ino < FAMFS_PENDING_INO_BASE)
			return 0;
		usleep(1000);
	}
	return -1;
}

/*
 * Make @nf through the mount: create it, reserve its memory (fallocate),
 * set its owner and mode, close it; the daemon logs it then, with the log
 * already replayed, so no file costs a replay. Returns as creat_one(), or
 * 1 to make it through the log instead: the mount could not (another
 * writer holds the log lock, a kernel where only it reaches the device,
 * no room), and the log path waits for the lock or says exactly why.
 */
static int creat_by_mount(const struct creat_args *a, struct cli_fs *fs,
			  struct newfile *nf)
{
	const char *path = nf->f->name;
	char show[PATH_MAX + 96];
	struct stat st;
	int fd, err;

	if (cli_relpath_new(fs, path, nf->rel))
		return -1;
	cli_show(fs, nf->rel, show, sizeof(show));
	if (!nf->f->size)
		return stat(path, &st) == 0 ?
			       creat_existing(a, show, nf, S_ISDIR(st.st_mode),
					      (uint64_t)st.st_size) :
			       creat_needs_size(show);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		  a->own.mode & 0777);
	if (fd < 0 && errno == EEXIST && stat(path, &st) == 0)
		return creat_existing(a, show, nf, S_ISDIR(st.st_mode),
				      (uint64_t)st.st_size);
	if (fd < 0)
		return 1;
	err = posix_fallocate(fd, 0, (off_t)nf->f->size);
	/* fsync: logged at the close even on a mount with commit_delay= */
	if (!err && (fchown(fd, a->own.uid, a->own.gid) < 0 ||
		     fchmod(fd, a->own.mode) < 0 || fsync(fd) < 0))
		err = errno;
	/* A file whose memory could not be reserved is discarded here. */
	if (close(fd) < 0 && !err)
		err = errno;
	/* not logged: the log path makes it, or finds it, or says why */
	if (err || wait_logged(path))
		return 1;
	creat_said(a, show, nf);
	return 0;
}

/*
 * Fill after the log lock is dropped: writing gigabytes must not stall
 * other creators. Device mode keeps the writer's namespace for the
 * fmaps, so it fills before ending the writer. Returns the failures.
 */
static unsigned int fill_and_end(const struct creat_args *a,
				 struct cli_fs *fs, struct famfs_writer *w,
				 struct newfile *files)
{
	struct fillctx ctx = { .fs = fs, .ns = w->ns, .files = files };
	unsigned int failed;

	if (fs->mounted) {
		famfs_writer_end(w);
		ctx.ns = NULL;
	}
	failed = cli_parallel(cli_threads_or_cpus(a->threads), a->nfiles,
			      fill_one, &ctx);
	if (!fs->mounted)
		famfs_writer_end(w);
	return failed;
}

/*
 * The files a mounted master can make itself (contiguous ones), through
 * the mount; *@done counts those handled. Returns the failures, or -1
 * when none could be tried there.
 */
static int creat_all_by_mount(const struct creat_args *a, struct cli_fs *fs,
			      struct newfile *files, unsigned int *done)
{
	unsigned int failed = 0, i;
	int r = 1;

	*done = 0;
	if (a->device || a->il || cli_master_mount(fs, a->files[0].name))
		return -1;
	for (i = 0; i < a->nfiles; i++) {
		r = creat_by_mount(a, fs, &files[i]);
		if (r > 0)
			break; /* the rest go through the log */
		files[i].ok = r == 0;
		failed += r != 0;
	}
	*done = i;
	return (int)failed;
}

int creat_run(const struct creat_args *a)
{
	struct newfile *files = calloc(a->nfiles, sizeof(*files));
	struct fillctx ctx = { .files = files };
	unsigned int failed = 0, done = 0;
	struct famfs_writer w;
	struct cli_fs fs;
	int r;

	if (!files)
		return CLI_FAIL;
	for (unsigned int i = 0; i < a->nfiles; i++)
		files[i].f = &a->files[i];
	r = creat_all_by_mount(a, &fs, files, &done);
	if (r >= 0 && done == a->nfiles) {
		ctx.fs = &fs;
		failed = (unsigned int)r +
			 cli_parallel(cli_threads_or_cpus(a->threads),
				      a->nfiles, fill_one, &ctx);
		goto out;
	}
	if (r >= 0)
		cli_fs_close(&fs);
	if (cli_writer_open(&fs, &w, a->device, a->files[done].name,
			    "creat")) {
		free(files);
		return CLI_FAIL;
	}
	for (unsigned int i = done; i < a->nfiles; i++) {
		r = creat_one(a, &fs, &w, &files[i]);

		files[i].ok = r == 0;
		/* Out of space or log: the rest would fail too. */
		if (r == -ENOSPC)
			break;
	}
	failed = fill_and_end(a, &fs, &w, files);
	for (unsigned int i = 0; i < a->nfiles; i++)
		if (!files[i].ok)
			failed++;
out:
	if (a->multi)
		printf("famfs creat: %u of %u files created or present, %u failed\n",
		       a->nfiles - failed, a->nfiles, failed);
	cli_fs_close(&fs);
	free(files);
	return failed ? CLI_FAIL : CLI_OK;
}

int cmd_creat(int argc, char **argv)
{
	struct creat_args a;
	int code;

	if (creat_parse(argc, argv, &a, &code)) {
		code = creat_run(&a);
		creat_args_free(&a);
	}
	return code;
}
