// SPDX-License-Identifier: GPL-2.0-or-later
/* famfs creat: allocate and log files, optionally fill them with a pattern. */
#include <errno.h>
#include <getopt.h>
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

struct newfile {
	const char *arg; /* as the user gave it */
	char rel[FAMFS_PATH_LEN];
	uint64_t size;
	uint64_t seed;
	bool fill;
	bool ok;
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

	if (!nf->ok || !nf->fill)
		return 0;
	if (cli_file_open(&f, ctx->fs, ctx->ns, nf->rel, true))
		return -1;
	buf = malloc(FILL_BUF);
	if (!buf) {
		cli_file_close(&f);
		return -1;
	}
	cli_pattern_init(&pat, nf->seed);
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
		       (unsigned long long)nf->seed);
	free(buf);
	cli_file_close(&f);
	return rc;
}

static int parse_multi(const char *arg, struct newfile *nf)
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
	nf->arg = arg; /* the name is the start of arg, up to the comma */
	if (cli_parse_size("-M size", size, &nf->size))
		goto out;
	if (seed) {
		if (cli_parse_number("-M seed", seed, 0, UINT64_MAX, &nf->seed))
			goto out;
		nf->fill = nf->seed != 0;
	}
	rc = 0;
out:
	free(copy);
	return rc;
}

int cmd_creat(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "randomize", no_argument, NULL, 'r' },
		{ "multi", required_argument, NULL, 'M' },
		{ "threadct", required_argument, NULL, 't' },
		CLI_OWNER_OPTIONS,
		{ "nstrips", required_argument, NULL, 'N' },
		{ "nbuckets", required_argument, NULL, 'B' },
		{ "chunksize", required_argument, NULL, 'C' },
		{ "device", required_argument, NULL, 'D' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *device = cli_device;
	struct cli_owner own = { .mode = 0644, .uid = geteuid(),
				 .gid = getegid() };
	uint32_t threads = 0;
	uint64_t size = 0, seed = 0;
	bool randomize = false, have_seed = false;
	struct cli_interleave ilopt = { 0 };
	struct famfs_interleave ilbuf;
	const struct famfs_interleave *il;
	struct newfile *files;
	unsigned int nfiles = 0, nmulti = 0, failed = 0;
	int verbose = 0, c, rc = CLI_OK;
	struct famfs_writer w;
	struct cli_fs fs;
	mode_t mask;

	files = calloc((size_t)argc + 1, sizeof(*files));
	if (!files)
		return CLI_FAIL;
	optind = 0;
	while ((c = getopt_long(argc, argv, "s:S:rM:t:m:u:g:N:B:C:D:vh", opts,
				NULL)) != -1) {
		int r = cli_interleave_opt(&ilopt, c, optarg);

		if (!r)
			r = cli_owner_opt(&own, c, optarg);
		if (r < 0)
			goto usage_err;
		if (r > 0)
			continue;
		switch (c) {
		case 's':
			if (cli_parse_size("-s", optarg, &size))
				goto usage_err;
			break;
		case 'S':
			if (cli_parse_number("-S", optarg, 0, UINT64_MAX, &seed))
				goto usage_err;
			have_seed = true;
			break;
		case 'r':
			randomize = true;
			break;
		case 'M':
			if (parse_multi(optarg, &files[nmulti]))
				goto usage_err;
			nmulti++;
			break;
		case 't':
			if (cli_parse_u32("-t", optarg, &threads))
				goto usage_err;
			if (threads > CLI_MAX_THREADS) {
				fprintf(stderr, "famfs creat: -t %u: at most %u threads\n",
					threads, CLI_MAX_THREADS);
				goto usage_err;
			}
			break;
		case 'D':
			device = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
		default:
			if (cli_help_asked(c)) {
				usage(stdout);
				free(files);
				return CLI_OK;
			}
			goto usage_err;
		}
	}

	if (have_seed && !randomize) {
		fprintf(stderr, "famfs creat: -S (seed) needs -r (randomize)\n");
		goto usage_err;
	}
	if (nmulti) {
		if (size || randomize || optind < argc) {
			fprintf(stderr, "famfs creat: -M cannot be mixed with -s, -r, -S or a FILE argument\n");
			goto usage_err;
		}
		nfiles = nmulti;
	} else {
		if (optind == argc) {
			fprintf(stderr, "famfs creat: no file given\n");
			goto usage_err;
		}
		if (optind < argc - 1) {
			fprintf(stderr, "famfs creat: one FILE at a time (use -M for several)\n");
			goto usage_err;
		}
		files[0].arg = argv[optind];
		files[0].size = size;
		if (randomize) {
			if (!have_seed) {
				/* Upstream fills nothing here; say which seed we used. */
				seed = ((uint64_t)time(NULL) ^ (uint64_t)getpid()) &
				       0xffffffffu;
				if (!seed)
					seed = 1;
			}
			files[0].seed = seed;
			files[0].fill = true;
			if (!seed) {
				fprintf(stderr, "famfs creat: seed 0 is not allowed (it means 'no fill')\n");
				goto usage_err;
			}
		}
		nfiles = 1;
	}
	if (cli_interleave_finish(&ilopt, &ilbuf, &il))
		goto usage_err;

	mask = umask(0);
	umask(mask);
	own.mode &= ~(uint32_t)mask;

	{
		/* -M names end at their first comma */
		char first[PATH_MAX];

		snprintf(first, sizeof(first), "%.*s",
			 (int)strcspn(files[0].arg, nmulti ? "," : ""),
			 files[0].arg);
		if (cli_fs_open(&fs, device, first, true)) {
			free(files);
			return CLI_FAIL;
		}
	}
	if (cli_writer_begin(&fs, &w, "creat")) {
		cli_fs_close(&fs);
		free(files);
		return CLI_FAIL;
	}
	for (unsigned int i = 0; i < nfiles; i++) {
		struct newfile *nf = &files[i];
		char name[PATH_MAX], show[PATH_MAX + 96];
		const struct famfs_node *n;
		int r;

		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(nf->arg, nmulti ? "," : ""), nf->arg);
		if (cli_relpath_new(&fs, name, nf->rel))
			continue;
		cli_show(&fs, nf->rel, show, sizeof(show));
		n = famfs_ns_resolve(&w.ns, nf->rel);
		if (n && n->is_dir) {
			fprintf(stderr, "famfs creat: %s exists and is a directory\n",
				show);
			continue;
		}
		if (n) {
			if (nf->size && nf->size != n->size) {
				fprintf(stderr, "famfs creat: %s exists with size %llu, not %llu\n",
					show, (unsigned long long)n->size,
					(unsigned long long)nf->size);
				continue;
			}
			if (verbose)
				printf("famfs creat: %s exists with the right size; leaving it\n",
				       show);
			nf->size = n->size;
			nf->ok = true;
			continue;
		}
		if (!nf->size) {
			fprintf(stderr, "famfs creat: %s: give a size > 0 with -s (famfs files are allocated when created)\n",
				show);
			continue;
		}
		r = famfs_writer_creat(&w, nf->rel, nf->size, own.mode, own.uid,
				       own.gid, il, NULL);
		if (r) {
			fprintf(stderr, "famfs creat: %s: %s\n", show,
				famfs_errmsg());
			/* Out of space or log: the rest would fail too. */
			if (r == -ENOSPC)
				break;
			continue;
		}
		nf->ok = true;
		if (verbose)
			printf("famfs creat: created %s (%llu bytes%s)\n", show,
			       (unsigned long long)nf->size,
			       il ? ", interleaved" : "");
	}

	/*
	 * Fill after the log lock is dropped: writing gigabytes must not
	 * stall other creators. Device mode keeps the writer's namespace
	 * for the fmaps, so it fills before ending the writer.
	 */
	struct fillctx ctx = { .fs = &fs, .ns = &w.ns, .files = files };

	if (fs.mounted) {
		famfs_writer_end(&w);
		ctx.ns = NULL;
	}
	if (!threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		threads = n > 0 ? (uint32_t)n : 1;
	}
	failed = cli_parallel(threads, nfiles, fill_one, &ctx);
	if (!fs.mounted)
		famfs_writer_end(&w);

	for (unsigned int i = 0; i < nfiles; i++)
		if (!files[i].ok)
			failed++;
	if (nmulti)
		printf("famfs creat: %u of %u files created or present, %u failed\n",
		       nfiles - failed, nfiles, failed);
	if (failed)
		rc = CLI_FAIL;
	cli_fs_close(&fs);
	free(files);
	return rc;

usage_err:
	free(files);
	return cli_usage_error(CLI_USAGE);
}
