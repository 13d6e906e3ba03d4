/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Encoding a file's map as a FUSE_GET_FMAP reply (famfs_fuse_abi.h). */
#ifndef FAMFS_FMAP_MSG_H
#define FAMFS_FMAP_MSG_H

#include <stddef.h>
#include <sys/types.h>

#include "format.h"

/*
 * Encode @fm, the checked map of a file of @size bytes, of @file_type (enum
 * fuse_famfs_file_type), into @buf. Returns the message length, -ENOSPC
 * when @buflen is too small, or -EINVAL for a map the wire cannot carry
 * (unknown extent type, too many extents or strips, a chunk size that does
 * not fit in 32 bits). Pure: no I/O, no globals.
 */
ssize_t famfs_fmap_msg_encode(unsigned int file_type,
			      const struct famfs_omf_fmap *fm, uint64_t size,
			      void *buf, size_t buflen);

#endif
