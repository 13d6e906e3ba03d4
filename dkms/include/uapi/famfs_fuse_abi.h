/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The famfs extension of the FUSE protocol, as the kernel module and the
 * famfs daemon both see it. Numbers follow the upstream famfs-fuse series
 * (FUSE 7.46) so either side interoperates with upstream's other side.
 *
 * Flow: LOOKUP of a regular file -> FUSE_GET_FMAP (the whole map, cached by
 * the kernel) -> FUSE_GET_DAXDEV for each device index not seen before.
 * After that, read, write and mmap faults need no request at all.
 *
 * This header has no kernel or libfuse dependencies so both sides, and the
 * tests, include it as is.
 */
#ifndef FAMFS_FUSE_ABI_H
#define FAMFS_FUSE_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#define FAMFS_ABI_STATIC_ASSERT(c, m) static_assert(c, m)
typedef __u8 famfs_abi_u8;
typedef __u16 famfs_abi_u16;
typedef __u32 famfs_abi_u32;
typedef __u64 famfs_abi_u64;
#else
#include <stdint.h>
#define FAMFS_ABI_STATIC_ASSERT(c, m) _Static_assert(c, m)
typedef uint8_t famfs_abi_u8;
typedef uint16_t famfs_abi_u16;
typedef uint32_t famfs_abi_u32;
typedef uint64_t famfs_abi_u64;
#endif

/*
 * INIT: offered by the kernel, accepted by the server to enable famfs mode.
 * Its bit depends on the protocol the kernel speaks (the minor of its INIT
 * request), one entry per famfs_fuse series: 7.41 (the 6.12 series) uses
 * bit 43, the bit upstream's famfs series uses; in 7.46 (the 7.3 series)
 * bit 43 is FUSE_HAS_IO_URING_BUFPOOL and famfs takes bit 44. Any other
 * minor has no famfs mode (0): a bit a later protocol gives another
 * feature is never read as famfs. This is the one place the choice is
 * written down.
 */
#define FUSE_DAX_FMAP_7_41 (1ULL << 43) /* bit 11 of init flags2 */
#define FUSE_DAX_FMAP_7_46 (1ULL << 44) /* bit 12 of init flags2 */
#define FUSE_DAX_FMAP_FOR_MINOR(minor)                    \
	((minor) == 41 ? FUSE_DAX_FMAP_7_41 :              \
	 (minor) == 46 ? FUSE_DAX_FMAP_7_46 : 0ULL)

#define FUSE_GET_FMAP 54   /* in: nodeid (header); out: an fmap message */
#define FUSE_GET_DAXDEV 55 /* in: fuse_get_daxdev_in; out: fuse_daxdev_out */

#define FAMFS_FMAP_VERSION 1
#define FAMFS_FMAP_MAX 4096	    /* largest GET_FMAP reply we accept */
#define FUSE_FAMFS_MAX_EXTENTS 32 /* simple extents, or interleaved ones */
#define FUSE_FAMFS_MAX_STRIPS 32  /* strips in one interleaved extent */
#define FAMFS_DAXDEV_TABLE_MIN 24 /* device indices a mount can use */
#define DAXDEV_NAME_MAX 256

enum fuse_famfs_file_type {
	FUSE_FAMFS_FILE_REG = 0,
	FUSE_FAMFS_FILE_SUPERBLOCK = 1,
	FUSE_FAMFS_FILE_LOG = 2,
};

enum fuse_famfs_ext_type {
	FUSE_FAMFS_EXT_SIMPLE = 0,
	FUSE_FAMFS_EXT_INTERLEAVE = 1,
};

/*
 * A GET_FMAP reply is a header, then either nextents simple extents, or
 * nextents interleaved extents each followed by its ie_nstrips strips
 * (which are simple extents). Offsets and lengths are 2 MiB aligned.
 */
struct fuse_famfs_fmap_header {
	famfs_abi_u8 file_type; /* enum fuse_famfs_file_type */
	famfs_abi_u8 reserved;
	famfs_abi_u16 fmap_version;
	famfs_abi_u32 ext_type; /* enum fuse_famfs_ext_type */
	famfs_abi_u32 nextents;
	famfs_abi_u32 reserved0;
	famfs_abi_u64 file_size;
	famfs_abi_u64 reserved1;
};

struct fuse_famfs_simple_ext {
	famfs_abi_u32 se_devindex;
	famfs_abi_u32 reserved;
	famfs_abi_u64 se_offset;
	famfs_abi_u64 se_len;
};

struct fuse_famfs_iext {
	famfs_abi_u32 ie_nstrips;
	famfs_abi_u32 ie_chunk_size;
	famfs_abi_u64 ie_nbytes; /* file bytes this extent maps */
	famfs_abi_u64 reserved;
};

struct fuse_get_daxdev_in {
	famfs_abi_u32 daxdev_num;
};

struct fuse_daxdev_out {
	famfs_abi_u16 index;
	famfs_abi_u16 reserved;
	famfs_abi_u32 reserved2;
	famfs_abi_u64 reserved3;
	famfs_abi_u64 reserved4;
	char name[DAXDEV_NAME_MAX];
};

FAMFS_ABI_STATIC_ASSERT(sizeof(struct fuse_famfs_fmap_header) == 32,
			"fmap header is 32 bytes");
FAMFS_ABI_STATIC_ASSERT(sizeof(struct fuse_famfs_simple_ext) == 24,
			"simple extent is 24 bytes");
FAMFS_ABI_STATIC_ASSERT(sizeof(struct fuse_famfs_iext) == 24,
			"interleaved extent is 24 bytes");
FAMFS_ABI_STATIC_ASSERT(sizeof(struct fuse_get_daxdev_in) == 4,
			"daxdev request is 4 bytes");
FAMFS_ABI_STATIC_ASSERT(sizeof(struct fuse_daxdev_out) == 280,
			"daxdev reply is 280 bytes");

#endif /* FAMFS_FUSE_ABI_H */
