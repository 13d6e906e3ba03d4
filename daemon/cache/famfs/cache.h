/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfs cache maintenance for applications that share a famfs file with
 * other hosts. See famfs_cache(3).
 *
 * Memory that several hosts map (CXL memory behind a switch, say) is not
 * kept coherent between them by hardware: a store sits in this CPU's cache
 * until it is written back, and a load may be served from a line cached
 * before another host's store. An application that hands data to another
 * host writes it, then calls famfs_cache_flush() on it before it
 * publishes it (a flag, an index) and flushes that too; the other host
 * calls famfs_cache_invalidate() on the flag before each look at it, and
 * on the data before it reads it.
 */
#ifndef FAMFS_CACHE_H
#define FAMFS_CACHE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Write the cache lines holding [addr, addr + len) back to memory, so
 * that other hosts can see this host's stores to them, and wait until
 * that is done: stores after the call are ordered after it. Any memory
 * range works (it need not be aligned); lines not in the cache cost
 * little.
 */
void famfs_cache_flush(const void *addr, size_t len);

/*
 * Drop this host's cached copies of [addr, addr + len), so that the next
 * loads read what other hosts have written to memory. Dirty lines are
 * written back first: never call it on a range another host may be
 * writing at the same time as this one (x86-64 has no instruction that
 * drops a line without writing it back).
 */
void famfs_cache_invalidate(const void *addr, size_t len);

/*
 * Copy @len bytes from @src to @dst (they must not overlap), or write
 * zeros, so that they are in memory when the call returns, as if written
 * and then passed to famfs_cache_flush(), but without going through this
 * host's cache: whole cache lines are written with non-temporal stores
 * (no line is read first, none is left behind), the partial lines at
 * either end are written and flushed. For filling shared memory with
 * more than a few lines; stores after the call are ordered after it.
 */
void famfs_cache_copy(void *dst, const void *src, size_t len);
void famfs_cache_zero(void *dst, size_t len);

/* A full memory barrier: loads and stores before it complete first. */
void famfs_cache_barrier(void);

/*
 * The instruction famfs_cache_flush() and famfs_cache_invalidate() use on
 * this CPU: "clwb", "clflushopt" or "clflush". Chosen once per process
 * from CPUID; the environment variable FAMFS_FLUSH (one of those names)
 * asks for another one the CPU has, for measurements.
 */
const char *famfs_cache_flush_insn(void);
const char *famfs_cache_invalidate_insn(void);

#ifdef __cplusplus
}
#endif

#endif
