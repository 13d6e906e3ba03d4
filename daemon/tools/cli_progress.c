// SPDX-License-Identifier: GPL-2.0-or-later
/* Progress of long operations, on a terminal; see cli.h. */
#include <pthread.h>
#include <unistd.h>

#include "cli.h"
#include "tool_util.h"

struct cli_progress {
	pthread_mutex_t lock;
	const char *verb;
	uint64_t total, done;
	double start, last;
	bool shown;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct cli_progress *cli_progress_start(const char *verb, uint64_t total)
{
	struct cli_progress *p;

	if (!isatty(STDERR_FILENO) || !total)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->verb = verb;
	p->total = total;
	p->start = p->last = now();
	return p;
}

static void show(struct cli_progress *p, double t)
{
	char a[32], b[32], r[32];
	double secs = t - p->start;

	fprintf(stderr, "\r%s %s of %s (%3.0f%%), %s/s   ", p->verb,
		human_size(p->done, a, sizeof(a)),
		human_size(p->total, b, sizeof(b)),
		100.0 * (double)p->done / (double)p->total,
		human_size(secs > 0 ? (uint64_t)((double)p->done / secs) : 0,
			   r, sizeof(r)));
	p->shown = true;
	p->last = t;
}

void cli_progress_add(struct cli_progress *p, uint64_t bytes)
{
	double t;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->done += bytes;
	t = now();
	/* Quick operations stay quiet; long ones update 4 times a second. */
	if (t - p->start >= 1.0 && t - p->last >= 0.25)
		show(p, t);
	pthread_mutex_unlock(&p->lock);
}

void cli_progress_end(struct cli_progress *p)
{
	if (!p)
		return;
	if (p->shown) {
		show(p, now());
		fputc('\n', stderr);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}
