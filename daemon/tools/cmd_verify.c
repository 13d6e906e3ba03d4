// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs verify: check that files hold the pattern creat -r wrote. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs verify -S SEED -f FILE [-q] [--read] [-D DEVICE]\n"
		"       famfs verify -m FILE,SEED [-m ...] [-t N] [-q] [--read] [-D DEVICE]\n"
		"\n"
		"Check that a file holds exactly the pattern 'famfs creat -r -S SEED' (or\n"
		"upstream famfs's creat) wrote into it, and report the first offset that\n"
		"differs. Any host can verify, so this is how to see that data written on\n"
		"one host reached another.\n"
		"\n"
		"In a mounted famfs the file is mapped with mmap, as upstream does, after\n"
		"its CPU cache lines are dropped; --read reads it with read(2) instead.\n"
		"With --device the bytes are read from the device by the file's map.\n"
		"\n"
		"Options:\n"
		"  -f, --filename=FILE     the file to check (may also be given as FILE)\n"
		"  -S, --seed=SEED         the seed it was filled from (required)\n"
		"  -m, --multi=FILE,SEED   check several files (repeat -m); cannot be\n"
		"                          mixed with -f and -S\n"
		"  -t, --threadct=N        files checked at a time with -m (default: CPUs,\n"
		"                          at most 256)\n"
		"  -q, --quiet             print nothing on success\n"
		"  -v, --verbose           print the result (the default; undoes -q)\n"
		"  -r, --read              use read(2), not mmap, in a mounted famfs\n"
		"  -D, --device=DEV        the famfs on DEV; FILE is relative to its root\n"
		"  -h, -?, --help          show this help\n"
		"\n"
		"Exit status:\n"
		"  0  every file matched\n"
		"  1  a file differs, is missing or cannot be read\n"
		"  2  usage error\n");
}

struct vfile {
	char name[PATH_MAX];
	uint64_t seed;
};

struct vctx {
	const char *device;
	struct vfile *files;
	bool quiet, use_read;
};

#define VBUF (4u << 20)

static int report(const struct vctx *v, const char *name, int64_t bad,
		  uint64_t size)
{
	if (bad >= 0) {
		fprintf(stderr, "famfs verify: %s: mismatch at offset %lld of %llu bytes\n",
			name, (long long)bad, (unsigned long long)size);
		return -1;
	}
	if (!v->quiet)
		printf("famfs verify: %s: all %llu bytes match\n", name,
		       (unsigned long long)size);
	return 0;
}

static int by_mmap(const struct vctx *v, struct cli_file *f, uint64_t seed)
{
	struct cli_pattern pat;
	int64_t bad;
	void *p;

	if (!f->size)
		return report(v, f->name, -1, 0);
	p = mmap(NULL, f->size, PROT_READ, MAP_SHARED, f->fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "famfs verify: cannot map %s: %s\n", f->name,
			strerror(errno));
		return -1;
	}
	/* Another host may have written it: read memory, not stale lines. */
	famfs_cache_invalidate(p, f->size);
	cli_pattern_init(&pat, seed);
	bad = cli_pattern_check(&pat, p, f->size);
	munmap(p, f->size);
	return report(v, f->name, bad, f->size);
}

static int by_read(const struct vctx *v, struct cli_file *f, uint64_t seed)
{
	struct cli_pattern pat;
	uint64_t off = 0;
	int64_t bad = -1;
	uint8_t *buf = malloc(VBUF);

	if (!buf)
		return -1;
	cli_pattern_init(&pat, seed);
	while (off < f->size && bad < 0) {
		size_t n = f->size - off < VBUF ? (size_t)(f->size - off) : VBUF;

		if (cli_file_pread(f, buf, n, off) != (ssize_t)n) {
			fprintf(stderr, "famfs verify: %s: short read at %llu\n",
				f->name, (unsigned long long)off);
			free(buf);
			return -1;
		}
		bad = cli_pattern_check(&pat, buf, n);
		if (bad >= 0)
			bad += (int64_t)off;
		off += n;
	}
	free(buf);
	return report(v, f->name, bad, f->size);
}

static int verify_one(unsigned int i, void *arg)
{
	struct vctx *v = arg;
	struct vfile *vf = &v->files[i];
	struct famfs_ns ns = { 0 };
	char rel[FAMFS_PATH_LEN];
	struct cli_file f;
	struct cli_fs fs;
	int rc = -1;

	/* Each file opens its own famfs: -m may name files in several. */
	if (v->device ? cli_fs_open(&fs, v->device, vf->name, false) :
			cli_mount_open(&fs, vf->name))
		return -1;
	if (cli_relpath(&fs, vf->name, rel))
		goto out;
	if (!fs.mounted && cli_ns_load(&fs, &ns, "verify"))
		goto out_ns;
	if (cli_file_open(&f, &fs, fs.mounted ? NULL : &ns, rel, false))
		goto out_ns;
	rc = f.fd >= 0 && !v->use_read ? by_mmap(v, &f, vf->seed) :
					 by_read(v, &f, vf->seed);
	cli_file_close(&f);
out_ns:
	if (!fs.mounted)
		famfs_ns_free(&ns);
out:
	cli_fs_close(&fs);
	return rc;
}

static int parse_seed(const char *s, uint64_t *out)
{
	return cli_parse_number("-S (seed, not 0)", s, 1, UINT64_MAX, out);
}

/* -m FILE,SEED: the name ends at the last comma. */
static int parse_multi(const char *arg, struct vfile *vf)
{
	const char *comma = strrchr(arg, ',');

	if (!comma || comma == arg) {
		fprintf(stderr, "famfs verify: -m %s: expected FILE,SEED\n",
			arg);
		return -1;
	}
	snprintf(vf->name, sizeof(vf->name), "%.*s", (int)(comma - arg), arg);
	return parse_seed(comma + 1, &vf->seed);
}

/* What the options say beyond the -m files. */
struct vopts {
	const char *file;
	uint64_t seed;
	struct vfile *multi; /* the -m files */
	unsigned int nmulti;
	uint32_t threads;
};

static int verify_seed(const struct tool_opt *o, const char *arg)
{
	return parse_seed(arg, o->dest);
}

static int verify_multi(const struct tool_opt *o, const char *arg)
{
	struct vopts *vo = o->dest;

	if (parse_multi(arg, &vo->multi[vo->nmulti]))
		return -1;
	vo->nmulti++;
	return 0;
}

/* -v: the result line is printed anyway; -v only undoes -q */
static int verify_verbose(const struct tool_opt *o, const char *arg)
{
	(void)arg;
	*(bool *)o->dest = false;
	return 0;
}

/* The files to verify: the -m list, or -f FILE (or FILE) with -S. */
static int verify_files(struct vctx *v, const struct vopts *o)
{
	if (o->nmulti) {
		if (o->file || o->seed) {
			fprintf(stderr, "famfs verify: -m cannot be mixed with -f and -S\n");
			return -1;
		}
		return (int)o->nmulti;
	}
	if (!o->file || !o->seed) {
		fprintf(stderr, "famfs verify: %s\n",
			!o->file ? "no file given (-f FILE)" :
				   "no seed given (-S SEED)");
		return -1;
	}
	snprintf(v->files[0].name, sizeof(v->files[0].name), "%s", o->file);
	v->files[0].seed = o->seed;
	return 1;
}

int cmd_verify(int argc, char **argv)
{
	struct vctx v = { .device = cli_device };
	struct vopts o = { 0 };
	const struct tool_opt opts[] = {
		OPT_STRING('f', "filename", &o.file),
		OPT_VALUE('S', "seed", &o.seed, verify_seed),
		OPT_VALUE('m', "multi", &o, verify_multi),
		OPT_VALUE('t', "threadct", &o.threads, cli_opt_threads),
		OPT_FLAG('q', "quiet", &v.quiet),
		OPT_FLAG('r', "read", &v.use_read),
		OPT_STRING('D', "device", &v.device),
		OPT_CALL('v', "verbose", &v.quiet, verify_verbose),
		OPT_HELP_ALL,
		OPT_END,
	};
	unsigned int failed;
	int n, rc;

	v.files = calloc((size_t)argc + 1, sizeof(*v.files));
	if (!v.files)
		return CLI_FAIL;
	o.multi = v.files;
	rc = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (rc >= 0)
		goto out;
	if (!o.file && optind == argc - 1)
		o.file = argv[optind++];
	if (optind < argc)
		fprintf(stderr, "famfs verify: unexpected argument %s\n",
			argv[optind]);
	n = optind < argc ? -1 : verify_files(&v, &o);
	if (n < 0) {
		rc = cli_usage_error(CLI_USAGE);
		goto out;
	}
	failed = cli_parallel(cli_threads_or_cpus(o.threads), (unsigned int)n,
			      verify_one, &v);
	if (o.nmulti && !v.quiet)
		printf("famfs verify: %u of %d files match\n", n - failed, n);
	rc = failed ? CLI_FAIL : CLI_OK;
out:
	free(v.files);
	return rc;
}
