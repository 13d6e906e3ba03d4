// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs-bench-replay: how long libfamfs takes to replay a log, i.e. to
 * walk every committed entry, check it and build the namespace from it.
 * The daemon does exactly this (walk + famfs_ns_apply) when it mounts a
 * famfs and the CLI when it opens one, so this is the log replay cost
 * without process start, FUSE or mount(2) around it (bench/meta.py
 * measures the whole mount as well).
 *
 *   famfs-bench-replay DEVICE [PASSES]
 *
 * DEVICE is an unmounted famfs image or device. Prints one line for
 * bench/report.py:
 *   RESULT meta_replay entries=N passes=N median_ms=... min_ms=...
 *          max_ms=... entries_per_s=...
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libfamfs.h"
#include "namespace.h"

#define MAX_PASSES 1000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static double t[MAX_PASSES];
	struct famfs_dev dev;
	struct famfs_walk walk;
	struct famfs_ns ns;
	uint64_t entries = 0;
	int passes = argc > 2 ? atoi(argv[2]) : 20, i;
	double med;

	if (argc < 2 || argc > 3 || passes < 1 || passes > MAX_PASSES) {
		fprintf(stderr,
			"usage: famfs-bench-replay DEVICE [PASSES (1..%d)]\n",
			MAX_PASSES);
		return 2;
	}
	if (famfs_dev_open_fs(argv[1], 0, &dev)) {
		fprintf(stderr, "famfs-bench-replay: %s: %s\n", argv[1],
			famfs_errmsg());
		return 1;
	}
	for (i = 0; i < passes; i++) {
		double t0 = now();
		int rc = famfs_ns_load(&dev, &ns, &walk, NULL);

		t[i] = now() - t0;
		entries = ns.nindex;
		famfs_ns_free(&ns);
		if (rc) {
			fprintf(stderr, "famfs-bench-replay: %s: %s\n", argv[1],
				famfs_errmsg());
			return 1;
		}
	}
	famfs_dev_close(&dev);
	qsort(t, passes, sizeof(t[0]), cmpd);
	med = passes % 2 ? t[passes / 2]
			 : (t[passes / 2 - 1] + t[passes / 2]) / 2;
	printf("RESULT meta_replay entries=%llu passes=%d median_ms=%.3f min_ms=%.3f max_ms=%.3f entries_per_s=%.0f\n",
	       (unsigned long long)entries, passes, med * 1e3, t[0] * 1e3,
	       t[passes - 1] * 1e3, entries / med);
	return 0;
}
