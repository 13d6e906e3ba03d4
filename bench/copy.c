// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs-bench-copy: how the daemon best puts bytes into device memory.
 * bench/meta.py runs it on a file in /dev/shm (this host's memory, its
 * real CPU); bench/vm.sh builds it static as fcopy and runs it on a
 * devdax device in the guest (TCG).
 *
 *   famfs-bench-copy FILE|DEV MIB PASSES
 *
 * Maps the first MIB MiB of the device or file and fills them 1 MiB
 * at a time from one buffer, as the daemon writes a file's WRITE
 * requests, three ways:
 *   flush   memcpy, then famfs_cache_flush() of the range: what libfamfs
 *           did before famfs_cache_copy()
 *   stream  famfs_cache_copy(): non-temporal stores, nothing to flush
 *   plain   memcpy alone (not enough for other hosts; for reference)
 * The sides take turns in an order that rotates from pass to pass;
 * ratios are taken within a pass (stream / flush, plain / flush
 * throughput), and their median and range are printed:
 *   RESULT devcopy mib=... passes=... flush_mibs=... stream_mibs=...
 *          plain_mibs=... ratio=... ratio_min=... ratio_max=...
 *          plain_ratio=...
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "famfs/cache.h"

#define CHUNK (1u << 20)
#define MAX_PASSES 64

enum side { FLUSH, STREAM, PLAIN, NSIDES };
static const char *const side_name[NSIDES] = { "flush", "stream", "plain" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds to fill @len bytes at @dst from @src, one chunk at a time. */
static double fill(enum side s, uint8_t *dst, const uint8_t *src,
		   size_t len)
{
	double t0 = now();

	for (size_t off = 0; off < len; off += CHUNK) {
		if (s == STREAM) {
			famfs_cache_copy(dst + off, src, CHUNK);
			continue;
		}
		memcpy(dst + off, src, CHUNK);
		if (s == FLUSH)
			famfs_cache_flush(dst + off, CHUNK);
	}
	return now() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	double t[NSIDES][MAX_PASSES], ratio[MAX_PASSES], plain[MAX_PASSES];
	double mibs[NSIDES], lo, hi;
	uint8_t *map, *src;
	size_t len;
	int fd, passes;

	if (argc != 4 || atoi(argv[2]) <= 0 || atoi(argv[3]) <= 0 ||
	    atoi(argv[3]) > MAX_PASSES) {
		fprintf(stderr, "usage: %s DEV MIB PASSES (PASSES <= %d)\n",
			argv[0], MAX_PASSES);
		return 2;
	}
	len = (size_t)atoi(argv[2]) << 20;
	passes = atoi(argv[3]);
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	src = aligned_alloc(64, CHUNK);
	if (map == MAP_FAILED || !src) {
		perror("mmap");
		return 1;
	}
	for (size_t i = 0; i < CHUNK; i++)
		src[i] = (uint8_t)(i * 131 + 7);
	/* every page faulted in once, so no side pays for the faults */
	memset(map, 0, len);
	for (int p = 0; p < passes; p++) {
		for (int k = 0; k < NSIDES; k++) {
			enum side s = (enum side)((p + k) % NSIDES);

			t[s][p] = fill(s, map, src, len);
			if (memcmp(map + len - CHUNK, src, CHUNK)) {
				fprintf(stderr, "%s: %s left other bytes\n",
					argv[0], side_name[s]);
				return 1;
			}
		}
		ratio[p] = t[FLUSH][p] / t[STREAM][p];
		plain[p] = t[FLUSH][p] / t[PLAIN][p];
	}
	for (int s = 0; s < NSIDES; s++)
		mibs[s] = (double)(len >> 20) / median(t[s], passes);
	median(ratio, passes);
	lo = ratio[0];
	hi = ratio[passes - 1];
	printf("RESULT devcopy mib=%zu passes=%d flush_mibs=%.1f stream_mibs=%.1f plain_mibs=%.1f ratio=%.3f ratio_min=%.3f ratio_max=%.3f plain_ratio=%.3f\n",
	       len >> 20, passes, mibs[FLUSH], mibs[STREAM], mibs[PLAIN],
	       median(ratio, passes), lo, hi, median(plain, passes));
	return 0;
}
