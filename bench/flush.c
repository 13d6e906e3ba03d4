// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs-bench-flush [MIB]: what famfs_cache_flush() costs per MiB of
 * dirty memory with each instruction this CPU has (clflush always,
 * clflushopt and clwb where CPUID has them), side by side in one run: ten
 * rounds, the instructions taking turns in a rotating order, each
 * measured in a child of its own since the choice is made once per
 * process (FAMFS_FLUSH), best of three flushes; medians, and each one's
 * ratio to clflush with its range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "famfs/cache.h"

static const char *const insns[] = {"clflush", "clflushopt", "clwb"};
#define NINSN  3
#define ROUNDS 10

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One child: the best ns per MiB of three flushes of @mib dirty MiB with
 * @insn, or -1 when the CPU lacks it (the library fell back to another).
 */
static int measure(int fd, size_t mib, const char *insn)
{
	size_t len = mib << 20;
	char *buf = aligned_alloc(4096, len);
	double best = -1;

	if (!buf)
		return 1;
	setenv("FAMFS_FLUSH", insn, 1);
	for (int pass = 0; pass < 3 && !strcmp(famfs_cache_flush_insn(), insn);
	     pass++) {
		double t;

		memset(buf, pass + 1, len); /* every line dirty */
		t = now();
		famfs_cache_flush(buf, len);
		t = (now() - t) * 1e9 / (double)mib;
		if (best < 0 || t < best)
			best = t;
	}
	free(buf);
	return write(fd, &best, sizeof(best)) == sizeof(best) ? 0 : 1;
}

static int child(size_t mib, const char *insn, double *ns)
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
		_exit(measure(pfd[1], mib, insn));
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

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	double ns[NINSN][ROUNDS], ratio[NINSN][ROUNDS];

	if (!mib) {
		fprintf(stderr, "usage: famfs-bench-flush [MIB]\n");
		return 2;
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < NINSN; k++) {
			int i = (r + k) % NINSN;

			if (child(mib, insns[i], &ns[i][r])) {
				fprintf(stderr,
					"famfs-bench-flush: a measurement failed\n");
				return 1;
			}
		}
	for (int i = 0; i < NINSN; i++)
		for (int r = 0; r < ROUNDS; r++)
			ratio[i][r] = ns[i][r] / ns[0][r];
	printf("flush of %zu dirty MiB, %d rounds (medians; ratio to clflush, min-max):\n",
	       mib, ROUNDS);
	for (int i = 0; i < NINSN; i++) {
		if (ns[i][0] < 0) {
			printf("  %-10s not on this CPU\n", insns[i]);
			continue;
		}
		qsort(ns[i], ROUNDS, sizeof(double), cmp);
		qsort(ratio[i], ROUNDS, sizeof(double), cmp);
		printf("  %-10s %8.0f ns/MiB  %.2f (%.2f-%.2f)\n", insns[i],
		       ns[i][ROUNDS / 2], ratio[i][ROUNDS / 2], ratio[i][0],
		       ratio[i][ROUNDS - 1]);
	}
	printf("this CPU's default: flush %s, invalidate %s\n",
	       famfs_cache_flush_insn(), famfs_cache_invalidate_insn());
	return 0;
}
