// SPDX-License-Identifier: GPL-2.0-or-later
/* Worker threads of the commands that take -t; see cli.h. */
#include <pthread.h>
#include <unistd.h>

#include "cli.h"

struct par {
	int (*fn)(unsigned int i, void *arg);
	void *arg;
	unsigned int n, next, failed;
};

static void *par_worker(void *arg)
{
	struct par *p = arg;
	unsigned int i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n)
		if (p->fn(i, p->arg))
			__atomic_fetch_add(&p->failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

unsigned int cli_parallel(unsigned int threads, unsigned int n,
			  int (*fn)(unsigned int i, void *arg), void *arg)
{
	struct par p = { .fn = fn, .arg = arg, .n = n };
	pthread_t tid[64];
	unsigned int started = 0;

	if (threads > 64)
		threads = 64;
	if (threads > n)
		threads = n;
	for (; started + 1 < threads; started++)
		if (pthread_create(&tid[started], NULL, par_worker, &p))
			break;
	par_worker(&p); /* this thread works too */
	for (unsigned int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	return p.failed;
}

int cli_opt_threads(const struct tool_opt *o, const char *arg)
{
	uint32_t *out = o->dest;

	if (cli_parse_u32("-t", arg, out))
		return -1;
	if (*out > CLI_MAX_THREADS) {
		fprintf(stderr, "%s: -t %u: at most %u threads\n", cli_prog(),
			*out, CLI_MAX_THREADS);
		return -1;
	}
	return 0;
}

uint32_t cli_threads_or_cpus(uint32_t threads)
{
	long n;

	if (threads)
		return threads;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint32_t)n : 1;
}
