// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Cache maintenance for memory that other hosts share without hardware
 * coherence (x86-64 only: meson refuses other architectures).
 *
 * Flush prefers clwb, which writes a line back and may keep it: a writer
 * that reads its own data again keeps the hit. Invalidate needs the line
 * gone, which only clflushopt and clflush do; clflushopt's flushes of
 * different lines overlap, clflush's do not. clwb and clflushopt are
 * weakly ordered, so both loops end in an mfence, which also orders the
 * caller's later loads and stores after the write-backs.
 */
#include <cpuid.h>
#include <emmintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "famfs/cache.h"

#define CACHE_LINE 64u

enum insn { INSN_CLFLUSH, INSN_CLFLUSHOPT, INSN_CLWB };

static const char *const insn_name[] = {
	[INSN_CLFLUSH] = "clflush",
	[INSN_CLFLUSHOPT] = "clflushopt",
	[INSN_CLWB] = "clwb",
};

/* What the CPU has, by CPUID.(EAX=7,ECX=0):EBX bits 23 and 24. */
static bool cpu_has(enum insn i)
{
	unsigned int a, b, c, d;

	if (i == INSN_CLFLUSH)
		return true;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return b & (1u << (i == INSN_CLFLUSHOPT ? 23 : 24));
}

/* FAMFS_FLUSH's choice if the CPU has it, else the best it has of @best. */
static enum insn choose(enum insn best)
{
	const char *force = getenv("FAMFS_FLUSH");

	if (force)
		for (int i = INSN_CLWB; i >= INSN_CLFLUSH; i--)
			if (i <= (int)best && !strcmp(force, insn_name[i]) &&
			    cpu_has(i))
				return i;
	for (int i = best; i > INSN_CLFLUSH; i--)
		if (cpu_has(i))
			return i;
	return INSN_CLFLUSH;
}

/* choose(@best), once per process: threads that race store the same. */
static enum insn chosen(int *slot, enum insn best)
{
	int c = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (c < 0) {
		c = (int)choose(best);
		__atomic_store_n(slot, c, __ATOMIC_RELAXED);
	}
	return (enum insn)c;
}

static enum insn flush_insn(void)
{
	static int slot = -1;

	return chosen(&slot, INSN_CLWB);
}

static enum insn invalidate_insn(void)
{
	static int slot = -1;

	return chosen(&slot, INSN_CLFLUSHOPT);
}

static void each_line(enum insn i, const void *addr, size_t len)
{
	uintptr_t p = (uintptr_t)addr & ~(uintptr_t)(CACHE_LINE - 1);
	uintptr_t end = (uintptr_t)addr + len;

	switch (i) {
	case INSN_CLWB:
		for (; p < end; p += CACHE_LINE)
			__asm__ volatile(
				"clwb %0" ::"m"(*(const volatile char *)p));
		break;
	case INSN_CLFLUSHOPT:
		for (; p < end; p += CACHE_LINE)
			__asm__ volatile("clflushopt %0" ::"m"(
				*(const volatile char *)p));
		break;
	case INSN_CLFLUSH:
		for (; p < end; p += CACHE_LINE)
			__asm__ volatile(
				"clflush %0" ::"m"(*(const volatile char *)p));
		break;
	}
	famfs_cache_barrier();
}

void famfs_cache_flush(const void *addr, size_t len)
{
	each_line(flush_insn(), addr, len);
}

void famfs_cache_invalidate(const void *addr, size_t len)
{
	each_line(invalidate_insn(), addr, len);
}

/*
 * The whole lines of [d, d + len) written from @s (zeros if NULL) with
 * non-temporal stores, which go to memory around the cache (and drop the
 * line from it) as the kernel's memcpy_flushcache() does for dax: no
 * flush after them, and no line read in first. @d is line-aligned.
 */
static void stream_lines(uint8_t *d, const uint8_t *s, size_t len)
{
	__m128i a = _mm_setzero_si128(), b = a, c = a, e = a;

	for (; len >= CACHE_LINE; len -= CACHE_LINE, d += CACHE_LINE) {
		if (s) {
			a = _mm_loadu_si128((const __m128i *)s);
			b = _mm_loadu_si128((const __m128i *)(s + 16));
			c = _mm_loadu_si128((const __m128i *)(s + 32));
			e = _mm_loadu_si128((const __m128i *)(s + 48));
			s += CACHE_LINE;
		}
		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
}

/* Stored and written back: the partial lines at either end, with memcpy. */
static void store_flushed(uint8_t *d, const uint8_t *s, size_t len)
{
	if (!len)
		return;
	if (s)
		memcpy(d, s, len);
	else
		memset(d, 0, len);
	each_line(flush_insn(), d, len);
}

static void write_through(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t head = (size_t)(-(uintptr_t)d & (CACHE_LINE - 1));
	size_t body;

	if (head > len)
		head = len;
	store_flushed(d, s, head);
	d += head;
	s = s ? s + head : NULL;
	len -= head;
	body = len & ~(size_t)(CACHE_LINE - 1);
	stream_lines(d, s, body);
	store_flushed(d + body, s ? s + body : NULL, len - body);
	/* mfence: the streamed lines are in memory before what follows */
	famfs_cache_barrier();
}

void famfs_cache_copy(void *dst, const void *src, size_t len)
{
	write_through(dst, src, len);
}

void famfs_cache_zero(void *dst, size_t len)
{
	write_through(dst, NULL, len);
}

void famfs_cache_barrier(void)
{
	__asm__ volatile("mfence" ::: "memory");
}

const char *famfs_cache_flush_insn(void)
{
	return insn_name[flush_insn()];
}

const char *famfs_cache_invalidate_insn(void)
{
	return insn_name[invalidate_insn()];
}
