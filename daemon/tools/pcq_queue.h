/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A producer/consumer queue in two famfs files, as upstream famfs's pcq
 * lays it out (so that either pcq can be producer or consumer): NAME holds
 * the producer's state and the buckets, NAME.consumer the consumer's.
 * Each side maps its own file writable and the other read-only, and the
 * two may run on different hosts: every index read from the other side's
 * file is checked before it is used.
 */
#ifndef FAMFS_PCQ_QUEUE_H
#define FAMFS_PCQ_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCQ_MAGIC	   0xBEEBEE3ull
#define PCQ_CONSUMER_MAGIC 0xBEEBEE4u
/* The buckets start 2 MiB in, so the kernel can map them with PMDs. */
#define PCQ_BUCKET_OFFSET (2ull << 20)
#define PCQ_CONSUMER_SIZE (2ull << 20)
/* The sequence number and the CRC at the end of every bucket. */
#define PCQ_TRAILER 16u
/* A bucket fills at least one cache line, so no two share one. */
#define PCQ_MIN_BUCKET 64u

/* The start of NAME; the byte offsets are upstream's. */
struct pcq_producer_page {
	uint64_t magic;
	uint64_t nbuckets;
	uint64_t bucket_size; /* a power of two, trailer included */
	uint64_t bucket_offset;
	uint64_t producer_index; /* the next bucket to fill */
	char pad[1024]; /* next_seq is the producer's alone: other lines */
	uint64_t next_seq;
	uint64_t size;
};

/* The start of NAME.consumer. */
struct pcq_consumer_page {
	uint32_t magic;
	uint32_t pad;
	uint64_t consumer_index; /* the next bucket to read */
	char pad2[1 << 20];
	uint64_t next_seq;
	uint64_t size;
};

enum pcq_role { PCQ_PRODUCER, PCQ_CONSUMER, PCQ_READER };

struct pcq {
	struct pcq_producer_page *p;
	struct pcq_consumer_page *c;
	size_t psize, csize;
	uint64_t nbuckets, bucket_size; /* as checked at open */
	bool flush; /* false with --dontflush: no cache maintenance */
	char *copy; /* a bucket's worth: where pcq_get() checks a message */
};

/* What a producer or consumer loop counts; the status thread reads them. */
struct pcq_counts {
	atomic_ullong sent, received, errors, full, empty, retries;
};

enum pcq_result {
	PCQ_OK,
	PCQ_FULL,    /* put without waiting */
	PCQ_EMPTY,   /* get without waiting */
	PCQ_STOPPED, /* *stop was set while waiting */
	PCQ_BAD,     /* a message failed its CRC or sequence check */
	PCQ_CORRUPT, /* the other side's index is out of range */
};

/* "NAME.consumer" into @buf; -1 if it does not fit. */
int pcq_consumer_name(const char *name, char *buf, size_t len);
/*
 * Check and initialise freshly created, zeroed files of the right sizes
 * (@name holds PCQ_BUCKET_OFFSET + nbuckets * bucket_size bytes).
 */
int pcq_format(const char *name, uint64_t nbuckets, uint64_t bucket_size,
	       bool flush);
/* Map both files for @role; -1 after saying why on stderr. */
int pcq_open(struct pcq *q, const char *name, enum pcq_role role, bool flush);
void pcq_close(struct pcq *q);
/* The payload of a bucket: what a message carries. */
static inline size_t pcq_payload(const struct pcq *q)
{
	return q->bucket_size - PCQ_TRAILER;
}
/*
 * Put @payload (pcq_payload() bytes) in the next bucket. With @wait, a
 * full queue is waited out until *@stop is set; otherwise PCQ_FULL.
 * Only one producer may put at a time.
 */
enum pcq_result pcq_put(struct pcq *q, const void *payload, bool wait,
			const atomic_bool *stop, struct pcq_counts *n);
/*
 * Take the next message into @payload and its sequence number into
 * *@seq. Waits as pcq_put() does; PCQ_BAD after the bucket was read
 * again from memory and still failed its CRC or sequence check.
 */
enum pcq_result pcq_get(struct pcq *q, void *payload, uint64_t *seq, bool wait,
			const atomic_bool *stop, struct pcq_counts *n);
/* Messages in the queue now, or -1 if an index is out of range. */
int64_t pcq_count(struct pcq *q);

#endif
