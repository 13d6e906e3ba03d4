// SPDX-License-Identifier: GPL-2.0-or-later
/* The producer/consumer queue's files and operations; see pcq_queue.h. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "famfs/cache.h"
#include "pcq_queue.h"

_Static_assert(offsetof(struct pcq_producer_page, producer_index) == 32,
	       "upstream's layout");
_Static_assert(offsetof(struct pcq_producer_page, next_seq) == 1064,
	       "upstream's layout");
_Static_assert(offsetof(struct pcq_consumer_page, consumer_index) == 8,
	       "upstream's layout");
_Static_assert(sizeof(struct pcq_consumer_page) <= PCQ_CONSUMER_SIZE,
	       "the consumer file holds its page");

/* A retried read that still fails means the memory is not coherent. */
#define GET_RETRIES 2

int pcq_consumer_name(const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s.consumer", name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static void flush(const struct pcq *q, const void *addr, size_t len)
{
	if (q->flush)
		famfs_cache_flush(addr, len);
}

static void invalidate(const struct pcq *q, const void *addr, size_t len)
{
	if (q->flush)
		famfs_cache_invalidate(addr, len);
}

/* Map all of @path; its size into *@size. NULL after saying why. */
static void *map_file(const char *path, bool writable, size_t *size)
{
	int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	struct stat st;
	void *p;

	if (fd < 0) {
		fprintf(stderr, "pcq: cannot open %s %s: %s\n", path,
			writable ? "for writing" : "for reading",
			strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		fprintf(stderr,
			"pcq: %s is not a queue file (not a regular file of some size)\n",
			path);
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size,
		 PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pcq: cannot map %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	*size = (size_t)st.st_size;
	return p;
}

/* Whether a queue of this shape fits a producer file of @size bytes. */
static bool shape_ok(uint64_t nbuckets, uint64_t bsize, uint64_t size)
{
	if (bsize < PCQ_MIN_BUCKET || (bsize & (bsize - 1)) || nbuckets < 2 ||
	    size <= PCQ_BUCKET_OFFSET)
		return false;
	return nbuckets <= (size - PCQ_BUCKET_OFFSET) / bsize;
}

int pcq_format(const char *name, uint64_t nbuckets, uint64_t bucket_size,
	       bool do_flush)
{
	struct pcq q = {.flush = do_flush};
	char cname[4096];

	if (pcq_consumer_name(name, cname, sizeof(cname)))
		return -1;
	q.c = map_file(cname, true, &q.csize);
	if (!q.c)
		return -1;
	q.p = map_file(name, true, &q.psize);
	if (!q.p) {
		pcq_close(&q);
		return -1;
	}
	if (q.csize < sizeof(*q.c) ||
	    !shape_ok(nbuckets, bucket_size, q.psize)) {
		fprintf(stderr,
			"pcq: %s: the files are too small for the queue\n",
			name);
		pcq_close(&q);
		return -1;
	}
	q.c->consumer_index = 0;
	q.c->next_seq = 0;
	q.c->size = q.csize;
	flush(&q, q.c, sizeof(*q.c));
	q.c->magic = PCQ_CONSUMER_MAGIC; /* last: the file is a queue now */
	flush(&q, &q.c->magic, sizeof(q.c->magic));
	q.p->nbuckets = nbuckets;
	q.p->bucket_size = bucket_size;
	q.p->bucket_offset = PCQ_BUCKET_OFFSET;
	q.p->producer_index = 0;
	q.p->next_seq = 0;
	q.p->size = q.psize;
	flush(&q, q.p, sizeof(*q.p));
	q.p->magic = PCQ_MAGIC;
	flush(&q, &q.p->magic, sizeof(q.p->magic));
	pcq_close(&q);
	return 0;
}

/* Check the shape the producer file declares before trusting it. */
static int check_shape(struct pcq *q, const char *name)
{
	struct pcq_producer_page *p = q->p;

	/* Sizes first: a short file must not be read (or flushed) past its end.
	 */
	if (q->psize < sizeof(*p) || q->csize < sizeof(*q->c)) {
		fprintf(stderr,
			"pcq: %s is not a queue (its files are too small)\n",
			name);
		return -1;
	}
	invalidate(q, p, sizeof(*p));
	invalidate(q, &q->c->magic, sizeof(q->c->magic));
	if (p->magic != PCQ_MAGIC || q->c->magic != PCQ_CONSUMER_MAGIC) {
		fprintf(stderr, "pcq: %s is not a queue (bad magic number)\n",
			name);
		return -1;
	}
	if (p->bucket_offset != PCQ_BUCKET_OFFSET ||
	    !shape_ok(p->nbuckets, p->bucket_size, q->psize)) {
		fprintf(stderr,
			"pcq: %s: the queue's header is corrupt (%llu buckets of %llu bytes at %llu in a file of %zu bytes)\n",
			name, (unsigned long long)p->nbuckets,
			(unsigned long long)p->bucket_size,
			(unsigned long long)p->bucket_offset, q->psize);
		return -1;
	}
	/* Kept: a peer that rewrites the header later cannot move us. */
	q->nbuckets = p->nbuckets;
	q->bucket_size = p->bucket_size;
	return 0;
}

int pcq_open(struct pcq *q, const char *name, enum pcq_role role, bool do_flush)
{
	char cname[4096];

	memset(q, 0, sizeof(*q));
	q->flush = do_flush;
	if (pcq_consumer_name(name, cname, sizeof(cname))) {
		fprintf(stderr, "pcq: %s: name too long\n", name);
		return -1;
	}
	q->p = map_file(name, role == PCQ_PRODUCER, &q->psize);
	if (q->p)
		q->c = map_file(cname, role == PCQ_CONSUMER, &q->csize);
	if (!q->p || !q->c || check_shape(q, name)) {
		pcq_close(q);
		return -1;
	}
	q->copy = malloc(q->bucket_size);
	if (!q->copy) {
		fprintf(stderr, "pcq: out of memory\n");
		pcq_close(q);
		return -1;
	}
	return 0;
}

void pcq_close(struct pcq *q)
{
	if (q->p)
		munmap(q->p, q->psize);
	if (q->c)
		munmap(q->c, q->csize);
	free(q->copy);
	q->p = NULL;
	q->c = NULL;
	q->copy = NULL;
}

static void *bucket(const struct pcq *q, uint64_t i)
{
	return (char *)q->p + PCQ_BUCKET_OFFSET + i * q->bucket_size;
}

/* The other side's index, fresh from memory. */
static uint64_t peer_index(const struct pcq *q, const uint64_t *idx)
{
	invalidate(q, idx, sizeof(*idx));
	return __atomic_load_n(idx, __ATOMIC_ACQUIRE);
}

/* The CRC upstream's pcq keeps: crc32 of the payload and the sequence. */
static uint64_t bucket_crc(const struct pcq *q, const void *b)
{
	return crc32(crc32(0L, Z_NULL, 0), b,
		     (uInt)(q->bucket_size - sizeof(uint64_t)));
}

/* Publish this side's index past bucket @i, after what it covers. */
static void advance(struct pcq *q, uint64_t *idx, uint64_t i)
{
	__atomic_store_n(idx, (i + 1) % q->nbuckets, __ATOMIC_RELEASE);
	flush(q, idx, sizeof(*idx));
}

/*
 * Wait until the peer's index lets this side use bucket @mine: a free
 * bucket for the producer, a message for the consumer. A wait counts once
 * in *@waits (as upstream counts full and empty), however long it lasts.
 */
static enum pcq_result wait_turn(struct pcq *q, uint64_t mine, bool producer,
				 bool wait, const atomic_bool *stop,
				 atomic_ullong *waits)
{
	const uint64_t *peer = producer ? &q->c->consumer_index :
					  &q->p->producer_index;
	bool counted = false;
	uint64_t other;

	if (mine >= q->nbuckets)
		return PCQ_CORRUPT;
	for (;;) {
		other = peer_index(q, peer);
		if (other >= q->nbuckets)
			return PCQ_CORRUPT;
		if (producer ? (mine + 1) % q->nbuckets != other : other != mine)
			return PCQ_OK;
		if (!counted)
			++*waits;
		counted = true;
		if (atomic_load(stop))
			return PCQ_STOPPED;
		if (!wait)
			return producer ? PCQ_FULL : PCQ_EMPTY;
		sched_yield();
	}
}

enum pcq_result pcq_put(struct pcq *q, const void *payload, bool wait,
			const atomic_bool *stop, struct pcq_counts *n)
{
	uint64_t put = q->p->producer_index;
	enum pcq_result r;
	char *b;

	r = wait_turn(q, put, true, wait, stop, &n->full);
	if (r != PCQ_OK)
		return r;
	b = bucket(q, put);
	memcpy(b, payload, pcq_payload(q));
	memcpy(b + pcq_payload(q), &q->p->next_seq, sizeof(uint64_t));
	{
		uint64_t crc = bucket_crc(q, b);

		memcpy(b + q->bucket_size - sizeof(crc), &crc, sizeof(crc));
	}
	/* The message reaches memory before the index that publishes it. */
	flush(q, b, q->bucket_size);
	q->p->next_seq++;
	advance(q, &q->p->producer_index, put);
	n->sent++;
	return PCQ_OK;
}

/* Copy bucket @i out and check it; the sequence into *@seq. */
static bool read_bucket(struct pcq *q, uint64_t i, char *copy, uint64_t *seq)
{
	const char *b = bucket(q, i);
	uint64_t crc;

	memcpy(copy, b, q->bucket_size);
	memcpy(&crc, copy + q->bucket_size - sizeof(crc), sizeof(crc));
	memcpy(seq, copy + pcq_payload(q), sizeof(*seq));
	return crc == bucket_crc(q, copy) && *seq == q->c->next_seq;
}

enum pcq_result pcq_get(struct pcq *q, void *payload, uint64_t *seq, bool wait,
			const atomic_bool *stop, struct pcq_counts *n)
{
	uint64_t get = q->c->consumer_index;
	enum pcq_result r;
	int tries = 0;

	r = wait_turn(q, get, false, wait, stop, &n->empty);
	if (r != PCQ_OK)
		return r;
	/*
	 * As upstream does, the first read trusts the cache; a bucket that
	 * fails its check is dropped from the cache and read again, and a
	 * retry is counted: a stale line is what non-coherent memory gives.
	 */
	while (!read_bucket(q, get, q->copy, seq)) {
		if (!tries)
			n->retries++;
		if (tries++ == GET_RETRIES) {
			fprintf(stderr,
				"pcq: bucket %llu: bad message (sequence %llu, expected %llu) after %d retries: the memory is not coherent, or the queue was written by another producer\n",
				(unsigned long long)get,
				(unsigned long long)*seq,
				(unsigned long long)q->c->next_seq,
				GET_RETRIES);
			n->errors++;
			return PCQ_BAD;
		}
		invalidate(q, bucket(q, get), q->bucket_size);
	}
	memcpy(payload, q->copy, pcq_payload(q));
	q->c->next_seq++;
	advance(q, &q->c->consumer_index, get);
	n->received++;
	return PCQ_OK;
}

int64_t pcq_count(struct pcq *q)
{
	uint64_t prod = peer_index(q, &q->p->producer_index);
	uint64_t cons = peer_index(q, &q->c->consumer_index);

	if (prod >= q->nbuckets || cons >= q->nbuckets)
		return -1;
	return (int64_t)((prod + q->nbuckets - cons) % q->nbuckets);
}
