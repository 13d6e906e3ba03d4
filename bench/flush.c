// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs-bench-flush [MIB]: what famfs_mem_flush() costs per MiB of dirty
 * memory, with clflush and with the instruction this CPU gets by default
 * (clflushopt where CPUID has it), side by side in one run: ten rounds,
 * the two taking turns, each measured in a child of its own since the
 * choice is made once per process (FAMFS_FLUSH=clflush forces the old
 * one), best of three flushes; medians and the ratio's range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libfamfs.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One child: write the best ns per MiB of three flushes of @mib dirty MiB. */
static int measure(int fd, size_t mib, const char *force)
{
	size_t len = mib << 20;
	char *buf = aligned_alloc(4096, len);
	double best = 0;

	if (!buf)
		return 1;
	if (force)
		setenv("FAMFS_FLUSH", force, 1);
	for (int pass = 0; pass < 3; pass++) {
		double t;

		memset(buf, pass + 1, len); /* every line dirty */
		t = now();
		famfs_mem_flush(buf, len);
		t = now() - t;
		if (!pass || t < best)
			best = t;
	}
	best = best * 1e9 / (double)mib;
	free(buf);
	return write(fd, &best, sizeof(best)) == sizeof(best) ? 0 : 1;
}

/* ns per MiB with clflush (@force) or with this CPU's default (NULL). */
static int child(size_t mib, const char *force, double *ns)
{
	int pfd[2], st;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pfd[0]);
		_exit(measure(pfd[1], mib, force));
	}
	close(pfd[1]);
	st = read(pfd[0], ns, sizeof(*ns)) == sizeof(*ns) ? 0 : -1;
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define ROUNDS 10

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	double old[ROUNDS], cur[ROUNDS], ratio[ROUNDS];

	if (!mib) {
		fprintf(stderr, "usage: famfs-bench-flush [MIB]\n");
		return 2;
	}
	/* the two sides take turns, each first in every other round */
	for (int r = 0; r < ROUNDS; r++) {
		int bad = r % 2 ? child(mib, NULL, &cur[r]) ||
					  child(mib, "clflush", &old[r]) :
				  child(mib, "clflush", &old[r]) ||
					  child(mib, NULL, &cur[r]);

		if (bad) {
			fprintf(stderr, "famfs-bench-flush: a measurement failed\n");
			return 1;
		}
		ratio[r] = cur[r] / old[r];
	}
	qsort(old, ROUNDS, sizeof(double), cmp);
	qsort(cur, ROUNDS, sizeof(double), cmp);
	qsort(ratio, ROUNDS, sizeof(double), cmp);
	printf("flush of %zu dirty MiB, %d rounds: clflush %.0f ns/MiB, %s %.0f ns/MiB (medians); %s/clflush %.2f (min %.2f, max %.2f)\n",
	       mib, ROUNDS, old[ROUNDS / 2], famfs_mem_flush_insn(),
	       cur[ROUNDS / 2], famfs_mem_flush_insn(), ratio[ROUNDS / 2],
	       ratio[0], ratio[ROUNDS - 1]);
	return 0;
}
