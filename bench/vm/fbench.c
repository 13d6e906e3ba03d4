// SPDX-License-Identifier: GPL-2.0
/*
 * fbench: the guest half of the data-path benchmark (bench/vm.sh). Static,
 * no libraries; built on the host and put into the guest's /usr/bin.
 *
 *   fbench [-d STOCKDEV] FILE DEV|- DEVOFF SIZE PASSES SPEC...
 *
 * The first SIZE bytes of the famfs file FILE are one extent at byte
 * DEVOFF of the devdax device DEV, so three sides read the very same
 * memory:
 *   fmap   FILE mapped: famfs mmap (faults resolved in the kernel)
 *   rmap   DEV mapped at DEVOFF: the raw device node, the baseline (while
 *          famfs has the device, famfs_dax serves this node; it maps
 *          all of a mapping up front with 4 KiB pages)
 *   fread  pread(2) on FILE: famfs read (dax_iomap_rw in the kernel)
 * and with -d a fourth reads other memory of the same kind:
 *   dmap   STOCKDEV, a devdax device on the stock device_dax driver,
 *          mapped at 0 (2 MiB page faults): devdax as users know it
 * DEV "-" leaves rmap out (DEVOFF is then ignored): where the kernel's
 * driver of a famfs device has no mmap (fsdev_dax on 7.3), the file's
 * memory has no raw mapping to compare with, and only the ratios against
 * dmap are printed.
 * A raw /dev/dax device has no read(2) (it gives EINVAL), so the baseline
 * of fread is the same copy done from a raw mapping: memcpy into the
 * same user buffer.
 *
 * SPEC is NAME:PATTERN:ACCESS:BYTES: accesses of ACCESS bytes, at
 * consecutive offsets (PATTERN seq, wrapping at SIZE) or at random
 * ACCESS-aligned offsets (rand, the same sequence on every side), until
 * BYTES are read; every access copies into one buffer (memcpy from the
 * mapping, or pread). Sizes take k, m, g suffixes.
 *
 * Each pass runs every SPEC on every side, the sides in an order that
 * rotates from pass to pass so that none always goes first (caches, host
 * noise). Under TCG a single pass means little: ratios are taken within a
 * pass (side throughput / rmap throughput) and their median and range are
 * printed.
 *
 * Output, one line per figure, for bench/report.py:
 *   RESULT vm_setup size=... passes=... fmap_faults_per_gib=... ...
 *   RESULT vm_NAME pattern=... access=... bytes=... fmap_mibs=... ...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_PASSES 64
#define MAX_SPECS  32
#define NSIDES	   4

enum side { FMAP, RMAP, DMAP, FREAD };
static const char *const side_name[NSIDES] = {"fmap", "rmap", "dmap", "fread"};

struct spec {
	char name[32];
	int random;
	uint64_t access, bytes;
	double t[NSIDES][MAX_PASSES]; /* seconds per pass */
};

struct target {
	int fd;		       /* FILE, for fread */
	const uint8_t *map[3]; /* FMAP, RMAP, DMAP (NULL if left out) */
	int has[NSIDES];       /* the sides measured */
	uint64_t size;
	uint8_t *buf;
};

static void fail(const char *what, const char *arg)
{
	fprintf(stderr, "fbench: %s%s%s\n", what, arg ? ": " : "",
		arg ? arg : "");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end && *end != ':')
		fail("bad number", s);
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static const uint8_t *map(int fd, uint64_t len, uint64_t off)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);

	if (p == MAP_FAILED)
		fail("mmap", strerror(errno));
	return p;
}

/* Fault every page of a mapping in; returns the faults per GiB it took. */
static double first_touch(const uint8_t *p, uint64_t len)
{
	long f0 = minflt();
	volatile uint8_t x = 0;
	uint64_t o;

	for (o = 0; o < len; o += 4096)
		x += p[o];
	(void)x;
	return (minflt() - f0) * (double)(1ULL << 30) / len;
}

static void parse_spec(const char *s, struct spec *sp)
{
	char pattern[8];
	const char *c1 = strchr(s, ':'), *c2, *c3;

	if (!c1 || c1 - s >= (long)sizeof(sp->name) ||
	    !(c2 = strchr(c1 + 1, ':')) ||
	    c2 - c1 - 1 >= (long)sizeof(pattern) || !(c3 = strchr(c2 + 1, ':')))
		fail("bad SPEC (NAME:seq|rand:ACCESS:BYTES)", s);
	memset(sp, 0, sizeof(*sp));
	memcpy(sp->name, s, c1 - s);
	memcpy(pattern, c1 + 1, c2 - c1 - 1);
	pattern[c2 - c1 - 1] = 0;
	if (strcmp(pattern, "seq") && strcmp(pattern, "rand"))
		fail("pattern must be seq or rand", s);
	sp->random = !strcmp(pattern, "rand");
	sp->access = num(c2 + 1);
	sp->bytes = num(c3 + 1);
	if (!sp->access || sp->bytes < sp->access)
		fail("ACCESS must be > 0 and <= BYTES", s);
}

/* One side reads one spec's bytes; returns the seconds it took. */
static double run(const struct target *tg, const struct spec *sp, enum side sd)
{
	uint64_t n = sp->bytes / sp->access, slots = tg->size / sp->access;
	uint64_t x = 88172645463325252ULL, off = 0, i;
	double t = now();

	for (i = 0; i < n; i++) {
		if (sp->random) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			off = (x % slots) * sp->access;
		}
		if (sd == FREAD) {
			if (pread(tg->fd, tg->buf, sp->access, off) !=
			    (ssize_t)sp->access)
				fail("short pread", NULL);
		} else {
			memcpy(tg->buf, tg->map[sd] + off, sp->access);
		}
		if (!sp->random) {
			off += sp->access;
			if (off + sp->access > tg->size)
				off = 0;
		}
	}
	t = now() - t;
	/* Keep the copies from being optimised away. */
	__asm__ volatile("" : : "r"(tg->buf) : "memory");
	return t;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of @n values (sorted in place). */
static void stats(double *v, int n, double *med, double *lo, double *hi)
{
	qsort(v, n, sizeof(*v), cmpd);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

/*
 * " SIDE_KEY=median SIDE_KEY_min=... SIDE_KEY_max=..." of the throughput
 * ratio side/base within each pass (= base time / side time).
 */
static void ratio(const struct target *tg, const struct spec *sp, int passes,
		  enum side sd, enum side base, const char *key)
{
	double v[MAX_PASSES], m, lo, hi;
	int i;

	if (!tg->has[sd] || !tg->has[base])
		return;
	for (i = 0; i < passes; i++)
		v[i] = sp->t[base][i] / sp->t[sd][i];
	stats(v, passes, &m, &lo, &hi);
	printf(" %s_%s=%.3f %s_%s_min=%.3f %s_%s_max=%.3f", side_name[sd], key,
	       m, side_name[sd], key, lo, side_name[sd], key, hi);
}

static void report(const struct target *tg, const struct spec *sp, int passes)
{
	double mib = sp->bytes / (double)(1 << 20), v[MAX_PASSES], m, lo, hi;
	int s, i;

	printf("RESULT vm_%s pattern=%s access=%llu bytes=%llu passes=%d",
	       sp->name, sp->random ? "rand" : "seq",
	       (unsigned long long)sp->access, (unsigned long long)sp->bytes,
	       passes);
	for (s = 0; s < NSIDES; s++) {
		if (!tg->has[s])
			continue;
		for (i = 0; i < passes; i++)
			v[i] = mib / sp->t[s][i];
		stats(v, passes, &m, &lo, &hi);
		printf(" %s_mibs=%.1f", side_name[s], m);
	}
	/* against the raw node (same memory) and the stock driver */
	ratio(tg, sp, passes, FMAP, RMAP, "ratio");
	ratio(tg, sp, passes, FREAD, RMAP, "ratio");
	ratio(tg, sp, passes, FMAP, DMAP, "dratio");
	ratio(tg, sp, passes, FREAD, DMAP, "dratio");
	ratio(tg, sp, passes, RMAP, DMAP, "dratio");
	printf("\n");
}

int main(int argc, char **argv)
{
	static struct spec specs[MAX_SPECS];
	const enum side order[NSIDES] = {FMAP, RMAP, FREAD, DMAP};
	enum side act[NSIDES];
	const char *stock = NULL;
	struct target tg = {0};
	uint64_t devoff, maxacc = 0;
	int passes, nspecs, nsides = 0, dfd = -1, p, i, k;
	double ff, rf = -1, df = -1;
	struct stat st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "-d")) {
		stock = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 7 || argc - 6 > MAX_SPECS) {
		fprintf(stderr,
			"usage: fbench [-d STOCKDEV] FILE DEV|- DEVOFF SIZE PASSES SPEC... (see fbench.c)\n");
		return 2;
	}
	devoff = num(argv[3]);
	tg.size = num(argv[4]);
	passes = atoi(argv[5]);
	if (passes < 1 || passes > MAX_PASSES)
		fail("PASSES must be 1 to 64", argv[5]);
	nspecs = argc - 6;
	for (i = 0; i < nspecs; i++) {
		parse_spec(argv[6 + i], &specs[i]);
		if (specs[i].access > tg.size)
			fail("ACCESS larger than SIZE", argv[6 + i]);
		if (specs[i].access > maxacc)
			maxacc = specs[i].access;
	}
	tg.has[FMAP] = tg.has[FREAD] = 1;
	tg.has[RMAP] = strcmp(argv[2], "-") != 0;
	tg.has[DMAP] = stock != NULL;
	for (k = 0; k < NSIDES; k++)
		if (tg.has[order[k]])
			act[nsides++] = order[k];
	tg.fd = open(argv[1], O_RDONLY);
	if (tg.has[RMAP])
		dfd = open(argv[2], O_RDONLY);
	if (tg.fd < 0 || (tg.has[RMAP] && dfd < 0))
		fail("cannot open FILE or DEV", strerror(errno));
	if (fstat(tg.fd, &st) || (uint64_t)st.st_size < tg.size)
		fail("FILE is smaller than SIZE", argv[1]);
	tg.buf = aligned_alloc(4096, (maxacc + 4095) & ~4095ULL);
	if (!tg.buf)
		fail("out of memory", NULL);
	memset(tg.buf, 0, maxacc);
	tg.map[FMAP] = map(tg.fd, tg.size, 0);
	ff = first_touch(tg.map[FMAP], tg.size);
	if (tg.has[RMAP]) {
		tg.map[RMAP] = map(dfd, tg.size, devoff);
		rf = first_touch(tg.map[RMAP], tg.size);
		if (memcmp(tg.map[FMAP], tg.map[RMAP], tg.size))
			fail("FILE and DEV at DEVOFF differ: wrong DEVOFF?",
			     NULL);
	}
	if (stock) {
		int sfd = open(stock, O_RDONLY);

		if (sfd < 0)
			fail(stock, strerror(errno));
		tg.map[DMAP] = map(sfd, tg.size, 0);
		df = first_touch(tg.map[DMAP], tg.size);
	}
	printf("RESULT vm_setup size=%llu passes=%d fmap_faults_per_gib=%.0f",
	       (unsigned long long)tg.size, passes, ff);
	if (tg.has[RMAP])
		printf(" rmap_faults_per_gib=%.0f", rf);
	printf(" dmap_faults_per_gib=%.0f\n", df);

	/* The sides' order rotates from pass to pass. */
	for (p = 0; p < passes; p++)
		for (i = 0; i < nspecs; i++)
			for (k = 0; k < nsides; k++) {
				enum side sd = act[(p + k) % nsides];

				specs[i].t[sd][p] = run(&tg, &specs[i], sd);
			}
	for (i = 0; i < nspecs; i++)
		report(&tg, &specs[i], passes);
	return 0;
}
