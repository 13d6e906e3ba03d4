// SPDX-License-Identifier: GPL-2.0-or-later
/* Worker threads of the commands that take -t; see cli.h. */
#include <pthread.h>

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
