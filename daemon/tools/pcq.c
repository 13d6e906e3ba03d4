// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pcq(1): a producer/consumer queue in two famfs files, the way famfs
 * users check that hosts sharing memory see each other's writes. The
 * options, output lines and status file are upstream famfs's pcq's; the
 * queue is pcq_queue.c, the files are made as famfs creat makes them.
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "pcq_queue.h"

struct pcq_args {
	const char *name;
	bool create, producer, consumer, info, drain;
	bool dontflush; /* no cache flushes or invalidates */
	char perm;  /* --setperm p, c, b or n; 0: not asked */
	uint64_t bsize, nbuckets, nmessages, seed, runtime, interval;
	const char *statusfile;
	bool owner_set;
	uid_t uid;
	gid_t gid;
	int verbose;
};

/* One producer or consumer thread. */
struct worker {
	const struct pcq_args *a;
	enum pcq_role role;
	atomic_bool *stop; /* shared: a failing side stops the other */
	struct pcq_counts n;
	bool failed; /* could not run at all */
	pthread_t thread;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pcq --create -b SIZE -n COUNT [-u USER] [-g GROUP] QUEUE\n"
		"       pcq (-p | -c | -pc) (-N COUNT | -t SECONDS) [-S SEED] [-s SECONDS] QUEUE\n"
		"       pcq --drain QUEUE\n"
		"       pcq --info QUEUE\n"
		"       pcq --setperm p|c|b|n QUEUE\n"
		"\n"
		"A producer/consumer queue in two files of a mounted famfs: QUEUE holds\n"
		"the producer's index and the buckets, QUEUE.consumer the consumer's index.\n"
		"Run the producer on one host and the consumer on another to check that\n"
		"they see each other's writes: every message carries a sequence number\n"
		"and a CRC, and a message that fails them is counted as an error.\n"
		"\n"
		"  -C, --create           make the queue's two files (as root, on the master)\n"
		"  -b, --bsize SIZE       bucket size, a power of two of at least %u bytes;\n"
		"                         each message carries SIZE-%u bytes\n"
		"  -n, --nbuckets COUNT   number of buckets (the queue holds COUNT-1 messages)\n"
		"  -u, --uid USER         owner of both files (default: the caller)\n"
		"  -g, --gid GROUP        group of both files (default: the caller's)\n"
		"  -p, --producer         put messages in the queue\n"
		"  -c, --consumer         take messages from the queue\n"
		"  -N, --nmessages COUNT  stop after COUNT messages (each side)\n"
		"  -t, --time SECONDS     stop after SECONDS\n"
		"  -S, --seed SEED        fill payloads from SEED; the consumer checks them\n"
		"  -s, --status SECONDS   print the counts every SECONDS\n"
		"  -d, --drain            take messages until the queue is empty\n"
		"  -i, --info             print how many messages the queue holds\n"
		"  -P, --setperm p|c|b|n  let this host write as (p)roducer, (c)onsumer,\n"
		"                         (b)oth or (n)either (chmod of the two files)\n"
		"  -D, --dontflush        no cache flushes or invalidates (shows what\n"
		"                         non-coherent memory does without them)\n"
		"  -f, --statusfile FILE  write the result for scripts: messages sent plus\n"
		"                         received (minus the errors, if any), drained, or\n"
		"                         held (--info; -1 on failure)\n"
		"  -v, --verbose          more output (twice: every message)\n"
		"  -h, -?, --help         this help\n"
		"\n"
		"Exit status: 0 success; 1 failure; 2 a bad command line; after a run\n"
		"with message errors, their number (at most 127).\n"
		"See pcq(1).\n",
		PCQ_MIN_BUCKET, PCQ_TRAILER);
}

static void vsay_bad(const char *fmt, va_list ap)
{
	fprintf(stderr, "pcq: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Say what is wrong with the command line: an option's value. */
__attribute__((format(printf, 1, 2))) static void say_bad(const char *fmt,
							  ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay_bad(fmt, ap);
	va_end(ap);
}

/* The same, and the line that points to --help; the exit code for it. */
__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt,
							   ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay_bad(fmt, ap);
	va_end(ap);
	return tool_usage_error("pcq", CLI_USAGE);
}

/* -u/-g: a name or a number */
static int pcq_owner(const struct tool_opt *o, const char *arg)
{
	struct pcq_args *a = o->dest;
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	bool numeric = *arg && !*end;

	a->owner_set = true;
	if (o->key == 'u') {
		struct passwd *pw = numeric ? NULL : getpwnam(arg);

		if (!numeric && !pw) {
			say_bad("-u: no user \"%s\"", arg);
			return -1;
		}
		a->uid = pw ? pw->pw_uid : (uid_t)v;
	} else {
		struct group *gr = numeric ? NULL : getgrnam(arg);

		if (!numeric && !gr) {
			say_bad("-g: no group \"%s\"", arg);
			return -1;
		}
		a->gid = gr ? gr->gr_gid : (gid_t)v;
	}
	return 0;
}

/* A number with an optional k, m, g suffix, as upstream takes them. */
static int pcq_value(const struct tool_opt *o, const char *arg)
{
	if (!famfs_parse_size(arg, o->dest))
		return 0;
	say_bad("-%c: %s", o->key, famfs_errmsg());
	return -1;
}

static int setperm_opt(const struct tool_opt *o, const char *arg)
{
	if (strlen(arg) != 1 || !strchr("pcbn", arg[0])) {
		say_bad("--setperm takes p, c, b or n, not \"%s\"", arg);
		return -1;
	}
	*(char *)o->dest = arg[0];
	return 0;
}


/* The combinations upstream's pcq refuses, and a queue name. */
static int pcq_check(struct pcq_args *a)
{
	bool run = a->producer || a->consumer;

	if (a->info && (a->create || run || a->drain))
		return bad_usage(
			"--info cannot be combined with --create, --producer, --consumer or --drain");
	if (a->perm && (a->create || run || a->drain || a->info))
		return bad_usage(
			"--setperm runs alone: not with --create, --drain, --producer, --consumer or --info");
	if (a->create && (!a->bsize || !a->nbuckets))
		return bad_usage("--create needs --bsize and --nbuckets");
	if (a->create && (run || a->drain || a->info))
		return bad_usage(
			"--create runs alone: create the queue, then run on it");
	if (a->owner_set && !a->create)
		return bad_usage("--uid and --gid only apply with --create");
	if (a->drain && (a->producer || a->nmessages || a->runtime))
		return bad_usage(
			"--drain cannot be combined with --producer, --nmessages or --time");
	if (a->runtime && a->nmessages)
		return bad_usage(
			"--nmessages and --time cannot be used together");
	if (run && !a->runtime && !a->nmessages)
		return bad_usage(
			"--producer and --consumer need --nmessages or --time");
	if (!a->create && !run && !a->drain && !a->info && !a->perm)
		return bad_usage(
			"say what to do: --create, --producer, --consumer, --drain, --info or --setperm");
	return 0;
}

static bool pcq_parse(int argc, char **argv, struct pcq_args *a, int *code)
{
	const struct tool_opt opts[] = {
		OPT_VALUE('b', "bsize", &a->bsize, pcq_value),
		OPT_VALUE('n', "nbuckets", &a->nbuckets, pcq_value),
		OPT_VALUE('S', "seed", &a->seed, pcq_value),
		OPT_VALUE('N', "nmessages", &a->nmessages, pcq_value),
		OPT_STRING('f', "statusfile", &a->statusfile),
		OPT_VALUE('t', "time", &a->runtime, pcq_value),
		OPT_VALUE('s', "status", &a->interval, pcq_value),
		OPT_VALUE('P', "setperm", &a->perm, setperm_opt),
		OPT_VALUE('u', "uid", a, pcq_owner),
		OPT_VALUE('g', "gid", a, pcq_owner),
		OPT_FLAG('C', "create", &a->create),
		OPT_FLAG('p', "producer", &a->producer),
		OPT_FLAG('c', "consumer", &a->consumer),
		OPT_FLAG('i', "info", &a->info),
		OPT_FLAG('d', "drain", &a->drain),
		OPT_FLAG('D', "dontflush", &a->dontflush),
		OPT_COUNT('v', "verbose", &a->verbose),
		OPT_HELP_ALL,
		OPT_END,
	};

	memset(a, 0, sizeof(*a));
	*code = tool_opts_exit(tool_opts_parse(argc, argv, opts, false), "pcq",
			       usage, CLI_OK, CLI_USAGE);
	if (*code >= 0)
		return false;
	*code = pcq_check(a);
	if (*code)
		return false;
	if (optind != argc - 1) {
		*code = bad_usage("%s", optind < argc
						? "give one queue name only"
						: "give the queue's name");
		return false;
	}
	a->name = argv[optind];
	return true;
}

/* Both files through famfs creat: allocated, logged, owned as asked. */
static int pcq_create(const struct pcq_args *a)
{
	uint64_t size = a->nbuckets * a->bsize;
	struct creat_file files[2] = {0};
	struct creat_args ca = {0};
	struct stat st;

	if (a->bsize < PCQ_MIN_BUCKET || (a->bsize & (a->bsize - 1)) ||
	    a->nbuckets < 2 || size / a->bsize != a->nbuckets ||
	    size > UINT64_MAX - PCQ_BUCKET_OFFSET) {
		fprintf(stderr,
			"pcq: a queue needs a bucket size that is a power of two of at least %u bytes and 2 buckets or more (%llu of %llu bytes asked)\n",
			PCQ_MIN_BUCKET, (unsigned long long)a->nbuckets,
			(unsigned long long)a->bsize);
		return CLI_FAIL;
	}
	/*
	 * One at a time, the producer file first: it is the large one, so a
	 * queue the device has no room for fails before anything is logged
	 * (famfs files cannot be removed).
	 */
	if (snprintf(files[0].name, sizeof(files[0].name), "%s", a->name) >=
		    (int)sizeof(files[0].name) ||
	    pcq_consumer_name(a->name, files[1].name, sizeof(files[1].name))) {
		fprintf(stderr, "pcq: %s: name too long\n", a->name);
		return CLI_FAIL;
	}
	for (int i = 0; i < 2; i++)
		if (!lstat(files[i].name, &st)) {
			fprintf(stderr,
				"pcq: cannot create queue %s: %s exists already\n",
				a->name, files[i].name);
			return CLI_FAIL;
		}
	files[0].size = PCQ_BUCKET_OFFSET + size;
	files[1].size = PCQ_CONSUMER_SIZE;
	ca.own.mode = 0644;
	ca.own.uid = a->owner_set ? a->uid : geteuid();
	ca.own.gid = a->owner_set ? a->gid : getegid();
	ca.threads = 1;
	ca.verbose = a->verbose;
	ca.nfiles = 1;
	for (int i = 0; i < 2; i++) {
		ca.files = &files[i];
		if (creat_run(&ca) != CLI_OK)
			return CLI_FAIL;
	}
	if (pcq_format(a->name, a->nbuckets, a->bsize, !a->dontflush))
		return CLI_FAIL;
	printf("pcq: created queue %s: %llu buckets of %llu bytes (%llu-byte payloads)\n",
	       a->name, (unsigned long long)a->nbuckets,
	       (unsigned long long)a->bsize,
	       (unsigned long long)(a->bsize - PCQ_TRAILER));
	return CLI_OK;
}

/* --statusfile, opened before any work so a bad path costs nothing. */
static FILE *status_out;

/* The result for scripts (upstream's format: a bare number). */
static void write_status(long long v)
{
	if (status_out && fprintf(status_out, "%lld", v) < 0)
		fprintf(stderr, "pcq: cannot write the status file: %s\n",
			strerror(errno));
}

static int pcq_info(const struct pcq_args *a)
{
	struct pcq q;
	int64_t n;

	if (pcq_open(&q, a->name, PCQ_READER, !a->dontflush)) {
		write_status(-1);
		return CLI_FAIL;
	}
	n = pcq_count(&q);
	if (n < 0)
		fprintf(stderr,
			"pcq: %s: an index is out of range: the queue is corrupt\n",
			a->name);
	else
		printf("get_queue_info: queue %s contains %lld messages p next_seq %llu c next_seq %llu\n",
		       a->name, (long long)n, (unsigned long long)q.p->next_seq,
		       (unsigned long long)q.c->next_seq);
	if (n >= 0 && a->verbose)
		printf("pcq: %s: %llu buckets of %llu bytes, producer index %llu, consumer index %llu\n",
		       a->name, (unsigned long long)q.nbuckets,
		       (unsigned long long)q.bucket_size,
		       (unsigned long long)q.p->producer_index,
		       (unsigned long long)q.c->consumer_index);
	pcq_close(&q);
	write_status(n);
	return n < 0 ? CLI_FAIL : CLI_OK;
}

/* Which side may write: a mode for the producer file and the consumer's. */
static int pcq_setperm(const struct pcq_args *a)
{
	mode_t pmode = strchr("pb", a->perm) ? 0644 : 0444;
	mode_t cmode = strchr("cb", a->perm) ? 0644 : 0444;
	char cname[PATH_MAX];

	if (pcq_consumer_name(a->name, cname, sizeof(cname)))
		return CLI_FAIL;
	if (chmod(a->name, pmode) || chmod(cname, cmode)) {
		fprintf(stderr,
			"pcq: cannot change the modes of %s and %s: %s\n",
			a->name, cname, strerror(errno));
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* Whether a side has done its work. */
static bool done(const struct worker *w, unsigned long long count)
{
	return w->a->nmessages && count >= w->a->nmessages;
}

static void run_producer(struct worker *w, struct pcq *q, char *payload)
{
	for (;;) {
		enum pcq_result r = pcq_put(q, payload, true, w->stop, &w->n);

		if (r == PCQ_CORRUPT) {
			fprintf(stderr,
				"pcq: %s: the consumer's index is out of range: the queue is corrupt\n",
				w->a->name);
			w->n.errors++;
		}
		if (r != PCQ_OK || done(w, w->n.sent) || atomic_load(w->stop))
			return;
		if (w->a->verbose > 1)
			printf("pcq: put seq %llu\n",
			       (unsigned long long)q->p->next_seq - 1);
	}
}

/* Where @got differs from @want, or -1. */
static long long miscompare(const char *got, const char *want, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (got[i] != want[i])
			return (long long)i;
	return -1;
}

static void run_consumer(struct worker *w, struct pcq *q, const char *want)
{
	char *got = malloc(pcq_payload(q));
	bool drain = w->a->drain;
	uint64_t seq;

	if (!got) {
		w->failed = true;
		return;
	}
	for (;;) {
		enum pcq_result r =
			pcq_get(q, got, &seq, !drain, w->stop, &w->n);
		long long ofs;

		if (r == PCQ_CORRUPT) {
			fprintf(stderr,
				"pcq: %s: the producer's index is out of range: the queue is corrupt\n",
				w->a->name);
			w->n.errors++;
		}
		if (r != PCQ_OK)
			break;
		ofs = w->a->seed ? miscompare(got, want, pcq_payload(q)) : -1;
		if (ofs >= 0) {
			fprintf(stderr, "pcq: miscompare seq=%llu ofs=%lld\n",
				(unsigned long long)seq, ofs);
			w->n.errors++;
		}
		if (w->a->verbose > 1)
			printf("pcq: got seq %llu\n", (unsigned long long)seq);
		if (done(w, w->n.received) || atomic_load(w->stop))
			break;
	}
	free(got);
}

/* The payload a seed gives: the bytes famfs creat -S writes. */
static char *make_payload(const struct pcq_args *a, size_t len)
{
	char *p = calloc(1, len);
	struct cli_pattern pat;

	if (p && a->seed) {
		cli_pattern_init(&pat, a->seed);
		cli_pattern_fill(&pat, p, len);
	}
	return p;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pcq q;
	char *payload;

	if (pcq_open(&q, w->a->name, w->role, !w->a->dontflush)) {
		w->failed = true;
		atomic_store(w->stop, true);
		return NULL;
	}
	payload = make_payload(w->a, pcq_payload(&q));
	if (!payload)
		w->failed = true;
	else if (w->role == PCQ_PRODUCER)
		run_producer(w, &q, payload);
	else
		run_consumer(w, &q, payload);
	/* A side that stops on an error must not leave the other waiting. */
	if (w->failed || w->n.errors)
		atomic_store(w->stop, true);
	free(payload);
	pcq_close(&q);
	return NULL;
}

struct status {
	const struct pcq_args *a;
	struct worker *prod, *cons;
	atomic_bool finished;
};

/* Sleep up to @s seconds; true when *@until was set meanwhile. */
static bool nap(double s, atomic_bool *until)
{
	for (int i = 0; i < (int)(s * 10); i++) {
		if (atomic_load(until))
			return true;
		usleep(100 * 1000);
	}
	return atomic_load(until);
}

static void *status_main(void *arg)
{
	struct status *st = arg;
	char when[32];

	while (!nap((double)st->a->interval, &st->finished)) {
		time_t now = time(NULL);
		struct tm tm;

		strftime(when, sizeof(when), "%m-%d %H:%M:%S",
			 localtime_r(&now, &tm));
		printf("%s pcq=%s prod(nsent=%llu nfull=%llu) cons(nrcvd=%llu nempty=%llu nretries=%llu nerrors=%llu)\n",
		       when, st->a->name, atomic_load(&st->prod->n.sent),
		       atomic_load(&st->prod->n.full),
		       atomic_load(&st->cons->n.received),
		       atomic_load(&st->cons->n.empty),
		       atomic_load(&st->cons->n.retries),
		       atomic_load(&st->cons->n.errors));
		fflush(stdout);
	}
	return NULL;
}

static int start(struct worker *w, const struct pcq_args *a, enum pcq_role role,
		 atomic_bool *stop)
{
	w->a = a;
	w->role = role;
	w->stop = stop;
	if (pthread_create(&w->thread, NULL, worker_main, w)) {
		fprintf(stderr, "pcq: cannot start a thread\n");
		w->failed = true;
		return -1;
	}
	return 0;
}

/* The exit code of a run: upstream's, the number of message errors. */
static int run_result(const struct worker *p, const struct worker *c)
{
	unsigned long long errors = p->n.errors + c->n.errors;

	if (errors)
		return errors < 127 ? (int)errors : 127;
	return p->failed || c->failed ? CLI_FAIL : CLI_OK;
}

/* --producer and/or --consumer (or --drain): threads, for -N or -t. */
static int pcq_run_queue(const struct pcq_args *a)
{
	struct worker prod = {.a = a}, cons = {.a = a};
	struct status st = {.a = a, .prod = &prod, .cons = &cons};
	bool pstarted = false, cstarted = false, sstarted = false;
	atomic_bool stop = false;
	pthread_t status_thread;

	if (a->producer)
		pstarted = !start(&prod, a, PCQ_PRODUCER, &stop);
	if (a->consumer || a->drain)
		cstarted = !start(&cons, a, PCQ_CONSUMER, &stop);
	if (a->interval)
		sstarted =
			!pthread_create(&status_thread, NULL, status_main, &st);
	if (a->runtime && !nap((double)a->runtime, &stop))
		atomic_store(&stop, true);
	if (pstarted)
		pthread_join(prod.thread, NULL);
	if (cstarted)
		pthread_join(cons.thread, NULL);
	atomic_store(&st.finished, true);
	if (sstarted)
		pthread_join(status_thread, NULL);
	printf("pcq:    %s\n", a->name);
	if (a->drain) {
		printf("pcq drain: nreceived=%llu nerrors=%llu nempty=%llu retries=%llu\n",
		       atomic_load(&cons.n.received),
		       atomic_load(&cons.n.errors), atomic_load(&cons.n.empty),
		       atomic_load(&cons.n.retries));
	} else {
		printf("pcq producer: nsent=%llu nerrors=%llu nfull=%llu\n",
		       atomic_load(&prod.n.sent), atomic_load(&prod.n.errors),
		       atomic_load(&prod.n.full));
		printf("pcq consumer: nreceived=%llu nerrors=%llu nempty=%llu retries=%llu\n",
		       atomic_load(&cons.n.received),
		       atomic_load(&cons.n.errors), atomic_load(&cons.n.empty),
		       atomic_load(&cons.n.retries));
	}
	if (prod.n.errors || cons.n.errors)
		write_status(-(long long)(prod.n.errors + cons.n.errors));
	else if (!prod.failed && !cons.failed)
		write_status((long long)(prod.n.sent + cons.n.received));
	return run_result(&prod, &cons);
}

static int pcq_run(const struct pcq_args *a)
{
	if (a->statusfile) {
		status_out = fopen(a->statusfile, "we");
		if (!status_out) {
			fprintf(stderr,
				"pcq: cannot open the status file %s: %s\n",
				a->statusfile, strerror(errno));
			return CLI_FAIL;
		}
	}
	if (a->perm)
		return pcq_setperm(a);
	if (a->create)
		return pcq_create(a);
	if (a->info)
		return pcq_info(a);
	return pcq_run_queue(a);
}

int main(int argc, char **argv)
{
	struct pcq_args a;
	int code;

	if (!pcq_parse(argc, argv, &a, &code))
		return code;
	code = pcq_run(&a);
	if (status_out && fclose(status_out)) {
		fprintf(stderr, "pcq: cannot write the status file %s: %s\n",
			a.statusfile, strerror(errno));
		return code ? code : CLI_FAIL;
	}
	return code;
}
