/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers private to libfamfs. */
#ifndef FAMFS_INTERNAL_H
#define FAMFS_INTERNAL_H

#include "libfamfs.h"

/* Record the message for famfs_errmsg() and return -@err (err > 0). */
int famfs_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * famfs_dev_lock(), then the log header read afresh and checked; on
 * failure nothing is left locked.
 */
int famfs_dev_lock_log(struct famfs_dev *dev);

/*
 * The superblock at the start of the file @path (a .meta/.superblock or
 * .superblock.N of a mount), read, not checked; -errno saying why not.
 */
int famfs_sb_read_file(const char *path, struct famfs_omf_superblock *sb);

/* A relative famfs path: no empty, "." or ".." components. */
int famfs_relpath_check(const char *p);

static inline bool famfs_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* a + b > limit, without overflowing */
static inline bool famfs_range_exceeds(uint64_t a, uint64_t b, uint64_t limit)
{
	return a > limit || b > limit - a;
}

#endif
