/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libfamfs: the one place that knows the famfs on-media format.
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * errno on failure; on failure famfs_errmsg() holds one line saying what was
 * wrong and where, suitable for printing after the device name.
 */
#ifndef LIBFAMFS_H
#define LIBFAMFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "famfs/cache.h"
#include "format.h"

/* ---- errors -------------------------------------------------------------- */

/* The message of the last failure in this thread. */
const char *famfs_errmsg(void);

/* ---- checksums ----------------------------------------------------------- */

uint32_t famfs_sb_crc(const struct famfs_omf_superblock *sb);
uint32_t famfs_log_header_crc(const struct famfs_omf_log *log);
uint32_t famfs_entry_crc(const struct famfs_omf_entry *e);

/* ---- geometry: where data may live on a device --------------------------- */

/*
 * Devices one famfs may span: the primary, which holds the log, and the
 * ones ADD_DAXDEV entries add, indexed densely in log order. The kernel's
 * device table has this many slots (famfs_fuse_abi.h).
 */
#define FAMFS_MAX_DEVS 24
/* 64 PiB: larger than any device, small enough that no map sum overflows. */
#define FAMFS_MAX_DEV_SIZE (1ULL << 56)

struct famfs_member {
	uint64_t size;		      /* bytes the file system uses on it */
	uint8_t uuid[FAMFS_UUID_LEN]; /* the dev_uuid of its superblock */
};

struct famfs_geometry {
	uint64_t dev_size;   /* bytes usable on the primary device */
	uint64_t alloc_unit; /* allocation unit, a power of two */
	uint64_t data_start; /* first byte after superblock and log */
	/*
	 * Devices known so far: 1 from the superblock, one more for each
	 * ADD_DAXDEV entry a log walk has passed (0 reads as 1). dev[0] is
	 * the primary; its size is dev_size.
	 */
	uint32_t ndevs;
	struct famfs_member dev[FAMFS_MAX_DEVS];
};

static inline uint32_t famfs_geo_ndevs(const struct famfs_geometry *g)
{
	return g->ndevs ? g->ndevs : 1;
}

/* Bytes of device @i, or 0 if the geometry has no such device. */
uint64_t famfs_geo_dev_size(const struct famfs_geometry *g, uint64_t i);
/*
 * Where files may start on device @i: after the log on the primary, after
 * the 2 MiB superblock region on the others, which hold no log.
 */
uint64_t famfs_geo_data_start(const struct famfs_geometry *g, uint64_t i);
/*
 * Check an ADD_DAXDEV entry against the devices the log named before it:
 * the next index (or one already added, with the same uuid and size, so
 * that walking a log again is harmless), a uuid no other device has, a
 * size that holds a superblock and a unit of data. -EUCLEAN says why.
 */
int famfs_geo_check_add(const struct famfs_geometry *g,
			const struct famfs_omf_add_daxdev *d);
/* Add the device of a checked ADD_DAXDEV entry (a no-op if it is known). */
void famfs_geo_add(struct famfs_geometry *g,
		   const struct famfs_omf_add_daxdev *d);
/* The index of the device whose uuid is @uuid, or -1. */
int famfs_geo_find(const struct famfs_geometry *g,
		   const uint8_t uuid[FAMFS_UUID_LEN]);

/* ---- the superblock ------------------------------------------------------ */

/*
 * Check a superblock read from a device of @dev_size bytes. Returns 0 when
 * it is a valid famfs superblock we understand; -ENOENT when there is no
 * famfs magic; -EPROTO for a wrong version; -EBADMSG for a bad CRC;
 * -EUCLEAN for a superblock whose geometry does not fit the device.
 */
int famfs_sb_check(const struct famfs_omf_superblock *sb, uint64_t dev_size);
/* The geometry of the primary alone (ndevs 1): a log walk adds the rest. */
void famfs_sb_geometry(const struct famfs_omf_superblock *sb,
		       struct famfs_geometry *g);
/*
 * Is @sb a valid secondary's superblock, of famfs @fs_uuid and with device
 * uuid @dev_uuid (either NULL: any)? 0, or -errno saying which it is not.
 */
int famfs_sb_check_member(const struct famfs_omf_superblock *sb,
			  const uint8_t *fs_uuid, const uint8_t *dev_uuid);
/*
 * Check the superblock of a secondary device of @dev_size bytes that should
 * be device @want (its uuid and size as the log records them) of the famfs
 * whose primary superblock is @primary: marked secondary, no log, the
 * primary's file system uuid, the recorded device uuid. As
 * famfs_sb_check() for the magic, version and CRC; -EUCLEAN (saying which
 * field) for the rest.
 */
int famfs_sb_check_secondary(const struct famfs_omf_superblock *sb,
			     uint64_t dev_size,
			     const struct famfs_omf_superblock *primary,
			     const struct famfs_member *want);
/* Is @sb (checked for magic and CRC by the caller) a secondary's? */
bool famfs_sb_is_secondary(const struct famfs_omf_superblock *sb);

/* ---- the log ------------------------------------------------------------- */

/* Entry slots in a log of @log_len bytes. */
uint64_t famfs_log_slots(uint64_t log_len);
void famfs_log_init(struct famfs_omf_log *log, uint64_t log_len);
/* The entry slot at @index (the caller bounds it by famfs_log_slots()). */
static inline struct famfs_omf_entry *famfs_log_entry(struct famfs_omf_log *log,
						      uint64_t index)
{
	return (struct famfs_omf_entry *)((uint8_t *)log +
					  FAMFS_LOG_ENTRIES_OFFSET) + index;
}
/* Check the log header against the superblock's idea of its length. */
int famfs_log_check_header(const struct famfs_omf_log *log, uint64_t log_len);
/* Check one committed entry found at @index. */
int famfs_entry_check(const struct famfs_omf_entry *e, uint64_t index,
		      const struct famfs_geometry *g);

/* Called for each valid entry; a non-zero return stops the walk. */
typedef int (*famfs_entry_fn)(const struct famfs_omf_entry *e,
			      uint64_t index, void *arg);

struct famfs_walk {
	uint64_t committed; /* next_index of the header */
	uint64_t valid;	    /* entries checked and passed to the callback */
	bool bad;	    /* the walk stopped at a bad entry, index @valid */
	char why[256];	    /* what was wrong with it */
};

/*
 * Walk the committed entries from @from on. Each ADD_DAXDEV entry adds its
 * device to @g, against which the entries after it are checked. The log is append-only, so the
 * walk stops at the first bad entry: what follows it cannot be trusted.
 * Each entry is copied out of the (shared, changing) log before it is
 * checked, so the callback sees exactly the bytes that were checked.
 */
int famfs_log_walk(const struct famfs_omf_log *log, uint64_t log_len,
		   struct famfs_geometry *g, uint64_t from,
		   famfs_entry_fn fn, void *arg, struct famfs_walk *res);
struct famfs_dev;
/*
 * famfs_log_walk() over the whole log of an open device, read afresh (another
 * host may have appended), after checking its header.
 */
int famfs_dev_log_walk(struct famfs_dev *dev, famfs_entry_fn fn, void *arg,
		       struct famfs_walk *res);
/*
 * The geometry of an open famfs with every device its log has added so
 * far: kept with @dev and brought up to date from the entries appended
 * since the last call, so that it costs no walk of the whole log.
 */
void famfs_dev_geometry(struct famfs_dev *dev, struct famfs_geometry *g);

/* ---- file maps ----------------------------------------------------------- */

/* Check an fmap for a file of @size bytes (extents aligned, in bounds). */
int famfs_fmap_check(const struct famfs_omf_fmap *fm, uint64_t size,
		     const struct famfs_geometry *g);
/* Bytes of device memory the fmap maps. */
uint64_t famfs_fmap_capacity(const struct famfs_omf_fmap *fm);
/*
 * Translate file offset @off (< capacity) to a device index and offset on
 * it, and say how many bytes from there are contiguous on that device.
 */
int famfs_fmap_resolve(const struct famfs_omf_fmap *fm, uint64_t off,
		       uint64_t *devindex, uint64_t *dev_off, uint64_t *contig);

typedef void (*famfs_extent_fn)(uint64_t devindex, uint64_t offset,
				uint64_t len, void *arg);
/* Call @fn for every device range the fmap uses (strips included). */
void famfs_fmap_for_each_range(const struct famfs_omf_fmap *fm,
			       famfs_extent_fn fn, void *arg);

/* ---- allocation ---------------------------------------------------------- */

struct famfs_alloc_dev {
	uint64_t nunits; /* allocation units on the device */
	uint64_t used;	 /* units marked in use */
	uint8_t *map;	 /* one bit per unit */
	bool absent;	 /* not reachable here: nothing new goes there */
};

struct famfs_alloc {
	uint64_t alloc_unit;
	uint64_t nunits;   /* allocation units, all devices */
	uint64_t used;	   /* units marked in use, all devices */
	uint64_t overlaps; /* units claimed more than once (fsck) */
	uint32_t ndevs;
	struct famfs_alloc_dev dev[FAMFS_MAX_DEVS];
};

/*
 * On one device, strips come from buckets (equal slices of it); on
 * several, each strip from its own device while there are enough, and
 * nbuckets is not used.
 */
struct famfs_interleave {
	uint32_t nbuckets;   /* device split into this many equal buckets */
	uint32_t nstrips;    /* strips per file, each from its own bucket */
	uint64_t chunk_size; /* bytes per chunk, multiple of alloc_unit */
};

/*
 * An empty map of every device @g knows: only the superblock and log (the
 * superblock alone on secondaries) are in use.
 */
int famfs_alloc_init(struct famfs_alloc *a, const struct famfs_geometry *g);
/*
 * Add the device of a checked ADD_DAXDEV entry when it is the next one
 * (a no-op for a device the map has): walks that build a map call this
 * for each such entry, as they mark each file.
 */
int famfs_alloc_add_dev(struct famfs_alloc *a,
			const struct famfs_omf_add_daxdev *d);
/* Mark every range of @fm used; returns units that were in use already. */
uint64_t famfs_alloc_mark_fmap(struct famfs_alloc *a,
			       const struct famfs_omf_fmap *fm);
void famfs_alloc_release(struct famfs_alloc *a);
/*
 * Device @devindex is missing on this host (@absent), or back: new memory
 * is never placed on a missing one, whose files could not be written.
 */
void famfs_alloc_set_absent(struct famfs_alloc *a, uint32_t devindex,
			    bool absent);
/* Free units where new memory may go (devices this host has). */
uint64_t famfs_alloc_free_units(const struct famfs_alloc *a);
/* Is allocation unit @unit of device @devindex in use (or not there)? */
bool famfs_alloc_used(const struct famfs_alloc *a, uint64_t devindex,
		      uint64_t unit);
/*
 * Mark a range of device @devindex used; returns how many of its units
 * were already in use (all of them on a device the map does not have).
 */
uint64_t famfs_alloc_mark(struct famfs_alloc *a, uint64_t devindex,
			  uint64_t off, uint64_t len);
/*
 * Give back units marked for a file that was never logged (the daemon's
 * reservations for files still being written).
 */
void famfs_alloc_free(struct famfs_alloc *a, uint64_t devindex, uint64_t off,
		      uint64_t len);
/*
 * Make the simple map @fm (of a file not yet logged; may start empty)
 * cover @need bytes: its last extent grows in place where the units after
 * it are free, else a new extent of as much again as @fm has (or just
 * what is missing) is added. -ENOSPC, or -EFBIG past the extents an entry
 * holds; @fm is unchanged then.
 */
int famfs_alloc_grow(struct famfs_alloc *a, struct famfs_omf_fmap *fm,
		     uint64_t need);
/*
 * Cut @fm down to the units @size bytes need (one at least), giving the
 * rest back: what a file written through the mount keeps when logged.
 */
void famfs_alloc_trim(struct famfs_alloc *a, struct famfs_omf_fmap *fm,
		      uint64_t size);
/*
 * First fit, one extent, on the device with the most free space that has
 * room. -ENOSPC when no run of free units is long enough.
 */
int famfs_alloc_contig(struct famfs_alloc *a, uint64_t size,
		       struct famfs_omf_fmap *out);
/*
 * Upstream famfs makes no famfs below 4 GiB and allows no bucket below
 * 1 GiB; we follow that on devices of 4 GiB or more and allow smaller
 * buckets (down to one chunk) only on the smaller devices we accept.
 */
#define FAMFS_UPSTREAM_MIN_DEV (4ULL << 30)
#define FAMFS_MIN_BUCKET (1ULL << 30)
int famfs_interleave_check(const struct famfs_interleave *il,
			   const struct famfs_geometry *g);
int famfs_alloc_interleaved(struct famfs_alloc *a, uint64_t size,
			    const struct famfs_interleave *il,
			    struct famfs_omf_fmap *out);

/* ---- devices ------------------------------------------------------------- */

/*
 * The directory a mount serves its superblock, log and status in, at its
 * root: no log entry may take the name (writers refuse it, the daemon
 * hides one that another tool logged).
 */
#define FAMFS_META_NAME ".meta"

enum famfs_dev_kind {
	FAMFS_DEV_DAX,	/* /dev/daxX.Y */
	FAMFS_DEV_FILE, /* a regular file standing in for memory */
	FAMFS_DEV_META, /* a mounted famfs, through its .meta files */
};

#define FAMFS_OPEN_RW (1u << 0)
/* famfs_dev_open_members(): bind devdax members as famfs_dax_bind() does */
#define FAMFS_OPEN_BIND_DAX (1u << 1)
/*
 * Never move a devdax node to a driver whose node can be read: a device
 * we only look at may be another mount's (famfs_dax_make_readable()).
 */
#define FAMFS_OPEN_NO_REBIND (1u << 2)

struct famfs_dev {
	char path[4096];
	enum famfs_dev_kind kind;
	bool writable;
	int fd;	     /* device or .meta/.log (the lock lives here) */
	uint64_t size; /* device bytes (META: from the superblock) */
	uint8_t *base; /* whole device mapping (DAX, FILE) */
	struct famfs_omf_superblock *sb;
	struct famfs_omf_log *log; /* NULL until famfs_dev_map_log() */
	uint64_t log_len;
	void *meta_sb_map, *meta_log_map; /* META only */
	/*
	 * META mapped by the daemon that serves the mount: msync() would
	 * send FSYNC to that very daemon and wait for it (set by
	 * famfs_dev_open_meta_fds(); the CPU cache is written back alone).
	 */
	bool own_mount;
	/* an image file in tmpfs or ramfs: msync() has nothing to write */
	bool in_memory;
	/* the famfs's other devices, by index (famfs_dev_open_members()) */
	struct famfs_dev *member[FAMFS_MAX_DEVS];
	/* the mount point they serve, for the records of holders.c */
	const char *members_mount;
	/* famfs_dev_geometry(): devices from entries [0, geo_next) */
	struct famfs_geometry geo;
	uint64_t geo_next;
	bool geo_valid, geo_stuck;
	/* famfs_dev_lock(): which locks are held */
	bool id_locked, dev_locked;
	int id_lock_fd; /* root's lock file, when id_locked */
};

/*
 * Open a device, a regular file or a mounted famfs (any path inside it),
 * map the superblock and, when it is valid, the log. A device without a
 * valid superblock still opens (dev->log stays NULL) so that mkfs and fsck
 * can say what is there; famfs_dev_open_fs() insists on a valid one.
 */
int famfs_dev_open(const char *path, unsigned int flags, struct famfs_dev *dev);
int famfs_dev_open_fs(const char *path, unsigned int flags,
		      struct famfs_dev *dev);
/*
 * famfs_dev_open_fs() of the famfs mounted at @root from its open
 * .meta/.superblock (@sbfd) and .meta/.log (@logfd, open read-only or
 * read-write), both taken over (closed on failure and by
 * famfs_dev_close()). No path is looked up: a daemon maps its own mount
 * with it.
 */
int famfs_dev_open_meta_fds(const char *root, int sbfd, int logfd,
			    struct famfs_dev *dev);
void famfs_dev_close(struct famfs_dev *dev);

/* ---- the other devices of a famfs (resolve.c) ------------------------------ */

/*
 * The host-local device map: where this host last found each device, as
 * "<device uuid> <file system uuid> <path>" lines; $FAMFS_DEVMAP names
 * another file (tests). A cache only: every entry is checked on use.
 */
const char *famfs_devmap_path(void);
int famfs_devmap_record(const uint8_t dev_uuid[FAMFS_UUID_LEN],
			const uint8_t fs_uuid[FAMFS_UUID_LEN],
			const char *path);
/*
 * Rebuild the device map from what is there now: the places it names that
 * still hold a secondary superblock, every readable /dev/dax*, and
 * @paths[0..n) (images, or devices by another name), each of which must
 * hold one (-ENOENT). *@found counts the devices recorded.
 */
int famfs_devmap_refresh(char *const *paths, int n, unsigned int *found);
/*
 * The path on this host of the secondary device @dev_uuid of famfs
 * @fs_uuid: from the device map, else the readable devdax nodes; only a
 * device whose superblock carries both uuids, on a node or file that only
 * root (or the caller) can write. -ENOENT when none is found, -EEXIST when
 * two different devices carry the uuid.
 */
int famfs_resolve_dev(const uint8_t fs_uuid[FAMFS_UUID_LEN],
		      const uint8_t dev_uuid[FAMFS_UUID_LEN], char *path,
		      size_t len);

/*
 * Open device @i (> 0) of @dev's famfs, found by famfs_resolve_dev() and
 * checked to be that device; 0 also when it is open already. When it is
 * not found, the message says what is now where this host last saw it.
 */
int famfs_dev_open_member(struct famfs_dev *dev, uint32_t i,
			  unsigned int flags);

/*
 * Record that the mount at @mountpoint holds the devdax node @dev, device
 * @dev_uuid of famfs @fs_uuid, on a driver whose node cannot be read
 * (holders.c); 0 when there is nothing to record.
 */
int famfs_member_hold(const char *dev, const uint8_t fs_uuid[FAMFS_UUID_LEN],
		      const uint8_t dev_uuid[FAMFS_UUID_LEN],
		      const char *mountpoint);
/* Does a famfs mount still hold @dev? Its uuids, as recorded, if so. */
bool famfs_member_holder(const char *dev, uint8_t fs_uuid[FAMFS_UUID_LEN],
			 uint8_t dev_uuid[FAMFS_UUID_LEN]);

struct famfs_members {
	uint32_t ndevs;	       /* devices the log names, the primary included */
	uint32_t missing;      /* of those, not found or not valid here */
	uint32_t first_missing;
	char why[512];	       /* what was wrong with the last missing one */
};
/*
 * Open every device the log of @dev names that is not open yet, with
 * @flags, each checked to be that device of this famfs. -ENODEV when some
 * are missing (@res says which); the others are open all the same, and
 * data on the missing ones fails with EIO.
 */
int famfs_dev_open_members(struct famfs_dev *dev, unsigned int flags,
			   struct famfs_members *res);
/*
 * What to check famfs @fs_uuid by on this host: the mount point of a
 * mount of it, else its primary device, a devdax node readable as it is;
 * -ENOENT if neither (an unmounted image file is found by no one).
 */
int famfs_find_primary(const uint8_t fs_uuid[FAMFS_UUID_LEN], char *path,
		       size_t len);
/* Device @i of @dev's famfs (@dev itself for 0); NULL when not open. */
const struct famfs_dev *famfs_dev_member(const struct famfs_dev *dev,
					 uint64_t i);
void famfs_dev_close_members(struct famfs_dev *dev);
/*
 * The root of the famfs mounted at or above the directory @path (found by
 * its .meta/.superblock, which anyone may look up but only root opens),
 * or -ENOENT.
 */
int famfs_mount_root(const char *path, char *root, size_t len);
/* Write back a range of device memory so other hosts see it. */
void famfs_dev_flush(const struct famfs_dev *dev, const void *addr, size_t len);
/* Drop cached copies of a range so we see other hosts' writes. */
void famfs_dev_invalidate(const struct famfs_dev *dev, const void *addr,
			  size_t len);
/*
 * Serialise appenders on this host: one lock per device, whatever path
 * reached it, that no reader can hold (device.c says how). Refuses a
 * device that is mounted (-EBUSY, naming the mount): its writers go
 * through the mount. Waits at most $FAMFS_LOCK_TIMEOUT seconds (default
 * 30; after a second it says on stderr whom it waits for), then
 * -ETIMEDOUT with a message naming the holder.
 */
int famfs_dev_lock(struct famfs_dev *dev);
/*
 * The same lock for the daemon of @dev's own mount: tried once (-EBUSY,
 * naming the holder), since the daemon must go on serving whoever holds
 * it; the mount is no reason to refuse.
 */
int famfs_dev_trylock(struct famfs_dev *dev);
void famfs_dev_unlock(struct famfs_dev *dev);
/*
 * Wait, as famfs_dev_lock() does, until no writer on this host holds the
 * log lock of the device at @path, then let it go. A daemon whose mount
 * was unmounted while files written through it were not yet logged
 * holds that lock until it has logged them and let go of the device.
 */
int famfs_dev_wait_writers(const char *path);
/*
 * Take that lock once (-EBUSY, naming the holder, if it is held): the fd
 * that holds it until it is closed, or -errno. Root only.
 */
int famfs_dev_hold_writers(const char *path);
/*
 * Who besides root can reach the device or image file @path: @warn gets
 * one line for each finding (owned by another user, writable or readable
 * by others), each saying what that user can do with it. A mount serves
 * the log's owners and modes, so such a device undoes them.
 */
void famfs_dev_exposure(const char *path,
			void (*warn)(const char *msg, void *arg), void *arg);
/* Size in bytes of a devdax device, a regular file or a block device. */
int famfs_device_size(int fd, const char *path, uint64_t *size);
/*
 * The driver serving devdax node DEVPATH ("" if none); -ENODEV if DEVPATH
 * is not a devdax device.
 */
int famfs_dax_driver(const char *devpath, char *driver, size_t len);
/*
 * The running kernel's release (uname -r, or $FAMFS_KERNEL_RELEASE) in
 * BUF, which is returned.
 */
const char *famfs_kernel_release(char *buf, size_t len);
/*
 * The dax driver famfs needs on the running kernel: "famfs_dax" (6.12,
 * from famfs_fuse.ko), "fsdev_dax" (7.3, the kernel's own); NULL on a
 * kernel famfs-dkms does not build for (no kernel data path there).
 */
const char *famfs_kernel_dax_driver(void);
/*
 * Whether that driver serves mmap of the device node, through which the
 * daemon reads the superblock and log (famfs_dax yes, fsdev_dax no);
 * false on a kernel without famfs support.
 */
bool famfs_kernel_dax_node_maps(void);
/* What every tool says on such a kernel (printf format, the release). */
#define FAMFS_NO_KERNEL_SUPPORT \
	"famfs kernel support not available for %s: fallback mode"
/*
 * One line to F after PREFIX: "kernel R: dax driver D", or
 * FAMFS_NO_KERNEL_SUPPORT.
 */
void famfs_say_kernel_driver(FILE *f, const char *prefix);
/*
 * Move devdax node DEVPATH to famfs_kernel_dax_driver(), which the kernel
 * data path needs (0 also when it is there already); -ENOTSUP with
 * FAMFS_NO_KERNEL_SUPPORT on a kernel without famfs support. -ENOENT
 * when that driver is not registered (module not loaded), -ENODEV when
 * DEVPATH is not devdax. Do it before mapping the device: unbinding
 * device_dax revokes mappings made through it.
 */
int famfs_dax_bind(const char *devpath);
/* Move devdax node DEVPATH to the dax driver DRIVER (as famfs_dax_bind()). */
int famfs_dax_move(const char *devpath, const char *driver);
/* The stock driver, whose node reads and maps the device. */
#define FAMFS_READ_DRIVER "device_dax"
/*
 * Make devdax node DEVPATH readable: from a driver whose node has no mmap
 * (fsdev_dax, where an earlier famfs mount left it on 7.3), or none, to
 * FAMFS_READ_DRIVER. 0 also when there is nothing to do (DEVPATH is not
 * devdax, or readable already); -EBUSY when it is mounted.
 */
int famfs_dax_make_readable(const char *devpath);

/* ---- file data through the device mapping (DAX and FILE devices) ---- */

#include <sys/types.h>

/*
 * Copy file bytes [off, off+len) of a file of @size bytes mapped by @fm.
 * Reads and writes stop at the end of the file (a short count); a write
 * that starts at or past the end fails with -EFBIG, since famfs files
 * never grow.
 */
ssize_t famfs_data_read(const struct famfs_dev *dev,
			const struct famfs_omf_fmap *fm, uint64_t size,
			uint64_t off, void *buf, size_t len);
ssize_t famfs_data_write(const struct famfs_dev *dev,
			 const struct famfs_omf_fmap *fm, uint64_t size,
			 uint64_t off, const void *buf, size_t len);
/*
 * For a file not logged yet: famfs_data_store() is famfs_data_write()
 * without making the bytes durable, and famfs_data_zero() stores zeros
 * over [@from, @to) (inside the map) the same way. famfs_data_sync() over
 * [@from, @to) then makes them durable once, before the file's entry is
 * logged: for an image file that is one msync, which costs about as much
 * for a page as for many (a devdax device's bytes went around the cache
 * and need nothing).
 */
ssize_t famfs_data_store(const struct famfs_dev *dev,
			 const struct famfs_omf_fmap *fm, uint64_t size,
			 uint64_t off, const void *buf, size_t len);
int famfs_data_zero(const struct famfs_dev *dev,
		    const struct famfs_omf_fmap *fm, uint64_t from,
		    uint64_t to);
int famfs_data_sync(const struct famfs_dev *dev,
		    const struct famfs_omf_fmap *fm, uint64_t from,
		    uint64_t to);

/* ---- roles --------------------------------------------------------------- */

enum famfs_role {
	FAMFS_ROLE_MASTER = 1, /* may append to the log */
	FAMFS_ROLE_CLIENT,     /* read-only */
	FAMFS_ROLE_NOSUPER,    /* no valid superblock */
};

/*
 * This host's famfs identity: the UUID in /opt/famfs/system_uuid (the
 * file upstream famfs uses), created on first use. $FAMFS_SYSTEM_UUID_FILE
 * names another file, for containers and tests that play several hosts.
 */
int famfs_system_uuid(uint8_t uuid[FAMFS_UUID_LEN], bool create);
enum famfs_role famfs_role(const struct famfs_dev *dev);
const char *famfs_role_name(enum famfs_role role);

/* ---- appending ----------------------------------------------------------- */

/*
 * Append one entry: the caller holds famfs_dev_lock(). The entry is written
 * and flushed before the header that commits it, so a crash in between
 * leaves the log as it was. -ENOSPC when the log is full, -EPERM when this
 * host is not the master.
 */
int famfs_log_append(struct famfs_dev *dev, struct famfs_omf_entry *e);
/*
 * famfs_log_append() at index @expect, the log's tail as the caller last
 * saw it under the lock: if the tail moved (someone appended without the
 * lock) nothing is written and it says so (-EBUSY).
 */
int famfs_log_append_at(struct famfs_dev *dev, struct famfs_omf_entry *e,
			uint64_t expect);

/* ---- mkfs ---------------------------------------------------------------- */

struct famfs_mkfs_opts {
	uint64_t log_len; /* 0: FAMFS_LOG_MIN_LEN */
	bool force;	  /* overwrite an existing famfs */
};

int famfs_mkfs(const char *path, const struct famfs_mkfs_opts *opts);
/* A log length mkfs accepts: a power of two of at least 8 MiB. */
int famfs_log_len_check(uint64_t log_len);
/*
 * Would famfs_devadd() take @path? A device or file of whole allocation
 * units with room for a superblock and data, unmounted, holding nothing
 * we know of unless @force: for checking every device before any is made.
 */
int famfs_devadd_check(const char *path, bool force);
/*
 * Add the device or file @path to the famfs of @primary (open read-write,
 * the master): a secondary superblock on it (this file system's uuid, a
 * new device uuid, no log), then an ADD_DAXDEV entry for the next index,
 * in *@index. Takes the log lock. Never takes the primary or a device of
 * this famfs under another name, even with @force.
 */
int famfs_devadd(struct famfs_dev *primary, const char *path, bool force,
		 uint32_t *index);
/* Invalidate the superblock (mkfs -k): the data stays, famfs forgets it. */
int famfs_kill_super(const char *path);
/* ---- mounts -------------------------------------------------------------- */

/*
 * What names a device whatever path reaches it: kind 'c' or 'b' and the
 * node's st_rdev, or 'f' and an image file's st_dev and st_ino.
 */
struct famfs_dev_id {
	char kind;
	dev_t dev;
	ino_t ino;
};
void famfs_dev_id_of(const struct stat *st, struct famfs_dev_id *id);
bool famfs_dev_id_eq(const struct famfs_dev_id *a,
		     const struct famfs_dev_id *b);

/* One line of /proc/self/mountinfo, unescaped. */
struct famfs_mount_ent {
	const char *dir, *src, *type;
	bool rw;
	bool famfs; /* fuse.famfs or our module's famfs_fuse* */
};
/*
 * Call @fn on each mount until it returns true, leaving out FUSE mounts
 * root does not own (user_id=0): any user can make one and name it as
 * they like, and it holds no device. True if @fn said so.
 */
bool famfs_mounts_each(bool (*fn)(const struct famfs_mount_ent *m, void *arg),
		       void *arg);
/* mountinfo and mounts escape space, tab, newline and backslash as \ooo. */
void famfs_mount_unescape(char *s);
bool famfs_mount_type_famfs(const char *type);
/* Do FUSE mount options (comma-separated) say root owns the mount? */
bool famfs_mount_opts_root(const char *opts);
/*
 * Is the device @id the source of a mount (a famfs mount of ours when
 * @famfs_only)? Compares identities, never names. @where gets the first
 * read-write such mount, else the first; *@rw (if not NULL) whether any
 * is read-write.
 */
bool famfs_id_mounted(const struct famfs_dev_id *id, bool famfs_only,
		      char *where, size_t len, bool *rw);
/*
 * One value of the daemon's <root>/.meta/.status (the mount at @root);
 * -ENOENT if the key is absent, -errno if the file cannot be read.
 */
int famfs_mount_status(const char *root, const char *key, char *val,
		       size_t len);
/* famfs_id_mounted() of the device or image file @path, any mount. */
bool famfs_dev_mounted(const char *path, char *where, size_t len);
/*
 * Up to @len bytes of @path, read within @ms milliseconds: the number
 * read, -ETIMEDOUT, or -errno. For a file of a mount whose daemon may be
 * stopped or hung: the read is a child process's, killed at the deadline
 * (a request the daemon took and never answers holds that child until
 * the kernel lets go of it, never the caller).
 */
ssize_t famfs_read_within(const char *path, void *buf, size_t len, int ms);

/* ---- fsck ---------------------------------------------------------------- */

#define FAMFS_FSCK_MAX_PROBLEMS 64
#define FAMFS_FSCK_MAX_WARNINGS 16

struct famfs_fsck {
	/* what was found */
	bool sb_valid, log_valid;
	uint64_t dev_size, alloc_unit, log_len;
	uint64_t log_slots, log_used;
	uint64_t files, dirs, daxdevs, bytes_in_files;
	uint64_t voided; /* entries an earlier repair voided */
	/* names with control characters (a warning, not a problem) */
	uint64_t control_names, control_first;
	char control_example[FAMFS_PATH_LEN];
	uint64_t space_used, space_free; /* allocation units, in bytes */
	/* each device the log names, as the files use it */
	uint32_t ndevs;
	struct famfs_fsck_dev {
		uint8_t uuid[FAMFS_UUID_LEN];
		uint64_t size, used, free; /* bytes */
		bool present;	 /* found on this host and checked */
		char path[256];	 /* where, on this host */
	} devs[FAMFS_MAX_DEVS];
	uint32_t missing; /* devices not found or not valid here */
	uint64_t overlap_bytes;
	uint8_t fs_uuid[FAMFS_UUID_LEN], system_uuid[FAMFS_UUID_LEN];
	enum famfs_role role;
	/* what is wrong, in the order found */
	unsigned int nproblems;
	unsigned int problems_dropped;
	char problems[FAMFS_FSCK_MAX_PROBLEMS][256];
	/*
	 * What is valid but worth a look, in the order found: set-user-ID and
	 * set-group-ID files (a mount honours them only with "suid"). They
	 * do not change the status.
	 */
	uint64_t setid_files;
	unsigned int nwarnings;
	unsigned int warnings_dropped;
	char warnings[FAMFS_FSCK_MAX_WARNINGS][320];
};

/* exit codes of famfs fsck, also returned by famfs_fsck_status() */
#define FAMFS_FSCK_CLEAN 0
#define FAMFS_FSCK_ERRORS 1  /* the log or allocations are damaged */
#define FAMFS_FSCK_NOFS 2    /* no valid superblock or log header */
#define FAMFS_FSCK_FAILED 8  /* could not check: no device, no access */
#define FAMFS_FSCK_USAGE 16  /* bad command line */

int famfs_fsck(struct famfs_dev *dev, struct famfs_fsck *r);
struct famfs_repair {
	uint64_t voided;       /* damaged entries before intact ones, voided */
	uint64_t first_voided; /* the index of the first of them */
	uint64_t dropped;      /* damaged entries at the end, cut off */
	/* intact entries the superblock's geometry does not fit, kept */
	uint64_t kept, first_kept;
};

/*
 * Repair the log, on the master, under the log lock. A damaged entry
 * (bad CRC, sequence number or contents) that intact entries follow is
 * overwritten with a void entry (FAMFS_ENTRY_VOID, same index), so the
 * entries after it are served again; a damaged tail (what a crash
 * mid-append leaves) is dropped. What a damaged entry described is lost.
 * An intact entry (valid CRC and sequence number) that fails only
 * against the superblock (its device size, allocation unit or log
 * length) is never voided or dropped: the superblock is what is wrong.
 */
int famfs_fsck_repair(struct famfs_dev *dev, struct famfs_repair *rep);
int famfs_fsck_status(const struct famfs_fsck *r);

/* How the files use one of @n equal buckets of the device (fsck -B). */
struct famfs_bucket_stats {
	uint64_t size, used, free;	      /* bytes */
	uint64_t free_runs;		      /* runs of free allocation units */
	uint64_t largest_free, smallest_free; /* bytes, 0 if none is free */
};

/*
 * Split the device of @dev into @n buckets of whole allocation units and
 * fill *@out (@n of them, allocated here; free() it) from the files in
 * the log; *@overhang gets the bytes at the end that belong to no bucket.
 * -EINVAL when the device has fewer allocation units than @n.
 */
int famfs_bucket_stats(struct famfs_dev *dev, unsigned int n,
		       struct famfs_bucket_stats **out, uint64_t *overhang);

/* ---- upstream's shadow tree (logplay --shadow) --------------------------- */

#include <stdio.h>

/*
 * DIR/root (or DIR itself if it ends in /root) gets a directory per logged
 * directory and, per logged file, a YAML file in upstream's schema.
 */
struct famfs_shadow_stats {
	uint64_t files, dirs; /* entries played */
	uint64_t dir_changes; /* MKDIR entries of a directory there before */
	uint64_t existed;     /* already there */
	uint64_t changed;     /* of those, given a later mode or owner */
	uint64_t tested;      /* YAML files read back and found equal */
	uint64_t errors;      /* reported on stderr */
};

/* Write file entry @fe as upstream's shadow YAML. */
int famfs_shadow_emit(const struct famfs_omf_file *fe, FILE *f);
/*
 * Read a shadow YAML back into @fe. Bounded: more than 64 KiB is -EFBIG,
 * nesting deeper than 16 levels -EINVAL (ours: 6).
 */
int famfs_shadow_parse(FILE *f, struct famfs_omf_file *fe);
/*
 * Play the log of @dev into the shadow tree under @dir (@dryrun: write
 * nothing; @test: read every file's YAML back and compare it with its
 * entry). -EIO when entries failed (each said why on stderr).
 */
int famfs_shadow_play(struct famfs_dev *dev, const char *dir, bool dryrun,
		      bool test, struct famfs_shadow_stats *st);

/* ---- directories root builds in (shadow trees, sockets) ----------------- */

/*
 * Open directory @path (@what names it in messages: "shadow directory")
 * for root to build in: it and every directory on the way to it,
 * reopened from / without following symbolic links, must be owned by
 * root or by the caller; it must not be writable by its group or others,
 * nor may the ones on the way unless they are sticky (/tmp). Returns the
 * open directory's fd, or -errno with famfs_errmsg() saying which
 * directory failed and why.
 */
int famfs_private_dir_open(const char *path, const char *what);
/* The check of one open directory @fd (@last: the one built in). */
int famfs_private_dir_check(int fd, const char *what, const char *path,
			    bool last);

/* ---- small helpers shared by the tools ----------------------------------- */

/*
 * The one parser of numbers for every tool, option and configuration
 * key: decimal (leading zeros allowed, never octal) or 0x hexadecimal, no
 * sign, nothing after the digits. -EINVAL for junk (a minus sign
 * included), -ERANGE for a value outside [@min, @max] or one that does
 * not fit in 64 bits; famfs_errmsg() quotes the input.
 */
int famfs_parse_number(const char *s, uint64_t min, uint64_t max,
		       uint64_t *out);
/* A size: a number with an optional k, m, g or t (KiB, MiB...) suffix. */
int famfs_parse_size(const char *s, uint64_t *out);
void famfs_uuid_str(const uint8_t uuid[FAMFS_UUID_LEN], char out[37]);
/*
 * Names may not hold control characters (C0, DEL, C1): on a terminal they
 * move the cursor or fake output lines. The tools refuse them in new names
 * and print every name through famfs_escape(): \n \t \r \\ and \xNN,
 * the last also for every byte that is not part of valid UTF-8, so what
 * is printed is always UTF-8 without control characters (the one rule
 * for terminals, the journal, the daemon's log and JSON).
 */
bool famfs_name_is_clean(const char *s);
/* Is @s valid UTF-8 (no overlong forms, surrogates, or past U+10FFFF)? */
bool famfs_utf8_valid(const char *s);
/* @s escaped into @buf (truncated to @len); returns @buf. */
const char *famfs_escape(const char *s, char *buf, size_t len);
/* Room famfs_escape() needs for any string of @n bytes. */
#define FAMFS_ESCAPED_LEN(n) (4 * (n) + 1)

#endif /* LIBFAMFS_H */
