/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Scratch famfs images for the unit tests. */
#ifndef FAMFS_TEST_HELPERS_H
#define FAMFS_TEST_HELPERS_H

#include <stdint.h>

#include "libfamfs.h"

#define MiB (1024ULL * 1024)

struct scratch {
	char dir[64];
	char image[128];
	char uuid_file[128];
};

/* A temp dir with a sparse image of @size bytes; this process is master. */
void scratch_make(struct scratch *s, uint64_t size);
/* As scratch_make, then mkfs with the default log. */
void scratch_mkfs(struct scratch *s, uint64_t size);
void scratch_drop(struct scratch *s);
/* As scratch_mkfs, then the image opened read-write into @dev. */
void scratch_open(struct scratch *s, uint64_t size, struct famfs_dev *dev);
/* Close @dev, then scratch_drop. */
void scratch_close(struct scratch *s, struct famfs_dev *dev);
/* Play another host: a different system UUID file. */
void scratch_become_other_host(struct scratch *s);
/* Run a shell command made like printf(@fmt, ...); it must succeed. */
void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
