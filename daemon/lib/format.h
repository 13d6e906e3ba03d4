/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * famfs on-media format.
 *
 * Everything a famfs device holds is described here, byte for byte. The
 * layout is the one upstream famfs user space writes (superblock version 48,
 * on-media format 2.2), so images move between the two tool families.
 * Upstream describes it with native C structs on x86_64; we spell out every
 * field and every padding hole with fixed-width types and check each size
 * and offset at compile time, so the layout no longer depends on the ABI
 * of the machine that compiles us.
 *
 * All multi-byte fields are little-endian. The hosts famfs runs on (x86_64,
 * aarch64, riscv64) are little-endian; we refuse to build elsewhere rather
 * than silently write a foreign layout.
 */
#ifndef FAMFS_FORMAT_H
#define FAMFS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "famfs on-media structures are little-endian; add byte swapping first"
#endif

/* Device layout */
#define FAMFS_SUPER_MAGIC 0x87b282ffULL
#define FAMFS_STATFS_MAGIC 0x87b282fdULL /* statfs f_type of a FUSE famfs */
#define FAMFS_SB_VERSION 48ULL		 /* superblock "ts_version" */
#define FAMFS_OMF_MAJOR 2u
#define FAMFS_OMF_MINOR 2u
#define FAMFS_SB_REGION 0x200000ULL /* superblock region: [0, 2 MiB) */
#define FAMFS_LOG_OFFSET 0x200000ULL
#define FAMFS_LOG_MIN_LEN 0x800000ULL /* 8 MiB; also the default */
#define FAMFS_ALLOC_UNIT 0x200000ULL  /* 2 MiB */
#define FAMFS_LOG_MAGIC 0xbadcafef00dULL

#define FAMFS_UUID_LEN 16
#define FAMFS_DEVNAME_LEN 64
#define FAMFS_PATH_LEN 80 /* relpath field, NUL included */
#define FAMFS_MAX_SIMPLE_EXT 16
#define FAMFS_MAX_STRIPS 16
#define FAMFS_MAX_IEXT 1

/* superblock flags */
#define FAMFS_SB_PRIMARY (1u << 0)
#define FAMFS_SB_SECONDARY (1u << 1)

struct famfs_omf_daxdev {
	uint64_t size;
	uint8_t uuid[FAMFS_UUID_LEN];
	char name[FAMFS_DEVNAME_LEN];
};

struct famfs_omf_superblock {
	uint64_t magic;
	uint64_t version;
	uint64_t log_offset;
	uint64_t log_len;
	uint64_t alloc_unit;
	uint32_t omf_major;
	uint32_t omf_minor;
	uint8_t fs_uuid[FAMFS_UUID_LEN];
	uint8_t dev_uuid[FAMFS_UUID_LEN];
	uint8_t system_uuid[FAMFS_UUID_LEN]; /* the master host */
	uint64_t crc;			     /* crc32 of bytes [0, crc) */
	uint32_t flags;
	uint32_t pad0;
	struct famfs_omf_daxdev daxdev;
};

/* Header of the log; entries follow at FAMFS_LOG_ENTRIES_OFFSET. */
struct famfs_omf_log {
	uint64_t magic;
	uint64_t len;	     /* bytes, header included */
	uint64_t last_index; /* index of the last slot that fits */
	uint64_t crc;	     /* crc32 of magic, len, last_index */
	uint64_t next_seqnum;
	uint64_t next_index; /* entries [0, next_index) are committed */
};

enum famfs_ext_type {
	FAMFS_EXT_SIMPLE = 0,
	FAMFS_EXT_INTERLEAVE = 1,
};

struct famfs_omf_extent {
	uint64_t devindex;
	uint64_t offset;
	uint64_t len;
};

struct famfs_omf_iext {
	uint64_t nstrips;
	uint64_t chunk_size;
	struct famfs_omf_extent strips[FAMFS_MAX_STRIPS];
};

struct famfs_omf_fmap {
	uint32_t ext_type; /* enum famfs_ext_type */
	uint32_t pad0;
	union {
		struct {
			uint32_t nextents;
			uint32_t pad1;
			struct famfs_omf_extent se[FAMFS_MAX_SIMPLE_EXT];
		} simple;
		struct {
			uint32_t niext;
			uint32_t pad1;
			struct famfs_omf_iext ie[FAMFS_MAX_IEXT];
		} interleave;
	};
};

enum famfs_entry_type {
	FAMFS_ENTRY_FILE = 0,
	FAMFS_ENTRY_MKDIR = 1,
	FAMFS_ENTRY_DELETE = 2, /* reserved upstream, never written */
	FAMFS_ENTRY_ADD_DAXDEV = 3,
	/*
	 * Ours, not upstream's: a damaged entry that fsck --repair voided so
	 * that the intact entries after it are read again. Its payload is
	 * zero; every reader skips it.
	 */
	FAMFS_ENTRY_VOID = 0x766f6964, /* "void" */
};

/* file flags */
#define FAMFS_FILE_ALL_HOSTS_RO (1u << 0)
#define FAMFS_FILE_ALL_HOSTS_RW (1u << 1)

struct famfs_omf_file {
	uint64_t size;
	uint32_t flags;
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;
	char relpath[FAMFS_PATH_LEN];
	struct famfs_omf_fmap fmap;
};

struct famfs_omf_mkdir {
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;
	char relpath[FAMFS_PATH_LEN];
};

struct famfs_omf_add_daxdev {
	uint64_t size;
	uint8_t uuid[FAMFS_UUID_LEN];
	uint32_t index;
	uint32_t pad0;
};

struct famfs_omf_entry {
	uint64_t seqnum; /* equals the entry's index */
	uint32_t type;	 /* enum famfs_entry_type */
	uint32_t pad0;
	union {
		struct famfs_omf_file file;
		struct famfs_omf_mkdir mkdir;
		struct famfs_omf_add_daxdev daxdev;
	};
	uint64_t crc; /* crc32 of bytes [0, crc), padding included */
};

#define FAMFS_LOG_ENTRIES_OFFSET sizeof(struct famfs_omf_log)

/* The sizes and offsets upstream's x86_64 structs have. */
#define FAMFS_CHECK_OFS(t, f, o) _Static_assert(offsetof(t, f) == (o), #t "." #f)
#define FAMFS_CHECK_SIZE(t, s) _Static_assert(sizeof(t) == (s), "sizeof " #t)

FAMFS_CHECK_SIZE(struct famfs_omf_daxdev, 88);
FAMFS_CHECK_SIZE(struct famfs_omf_superblock, 200);
FAMFS_CHECK_OFS(struct famfs_omf_superblock, omf_major, 40);
FAMFS_CHECK_OFS(struct famfs_omf_superblock, fs_uuid, 48);
FAMFS_CHECK_OFS(struct famfs_omf_superblock, system_uuid, 80);
FAMFS_CHECK_OFS(struct famfs_omf_superblock, crc, 96);
FAMFS_CHECK_OFS(struct famfs_omf_superblock, flags, 104);
FAMFS_CHECK_OFS(struct famfs_omf_superblock, daxdev, 112);
FAMFS_CHECK_SIZE(struct famfs_omf_log, 48);
FAMFS_CHECK_OFS(struct famfs_omf_log, crc, 24);
FAMFS_CHECK_OFS(struct famfs_omf_log, next_index, 40);
FAMFS_CHECK_SIZE(struct famfs_omf_extent, 24);
FAMFS_CHECK_SIZE(struct famfs_omf_iext, 400);
FAMFS_CHECK_SIZE(struct famfs_omf_fmap, 416);
FAMFS_CHECK_OFS(struct famfs_omf_fmap, simple.nextents, 8);
FAMFS_CHECK_OFS(struct famfs_omf_fmap, simple.se, 16);
FAMFS_CHECK_OFS(struct famfs_omf_fmap, interleave.ie, 16);
FAMFS_CHECK_SIZE(struct famfs_omf_file, 520);
FAMFS_CHECK_OFS(struct famfs_omf_file, mode, 20);
FAMFS_CHECK_OFS(struct famfs_omf_file, relpath, 24);
FAMFS_CHECK_OFS(struct famfs_omf_file, fmap, 104);
FAMFS_CHECK_SIZE(struct famfs_omf_mkdir, 92);
FAMFS_CHECK_OFS(struct famfs_omf_mkdir, relpath, 12);
FAMFS_CHECK_SIZE(struct famfs_omf_add_daxdev, 32);
FAMFS_CHECK_OFS(struct famfs_omf_add_daxdev, index, 24);
FAMFS_CHECK_SIZE(struct famfs_omf_entry, 544);
FAMFS_CHECK_OFS(struct famfs_omf_entry, file, 16);
FAMFS_CHECK_OFS(struct famfs_omf_entry, crc, 536);

#endif /* FAMFS_FORMAT_H */
