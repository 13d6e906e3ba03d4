/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * famfs-fused: the state one daemon keeps, shared by its few source files.
 * The daemon serves from one poll loop, so nothing here is locked. Its
 * helper threads (metamap.c, stage.c) only read what never changes here
 * and hand their results to the loop through a pipe.
 */
#ifndef FAMFS_FUSED_H
#define FAMFS_FUSED_H

#define FUSE_USE_VERSION 34

#include <fuse_lowlevel.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "libfamfs.h"
#include "namespace.h"
#include "writer.h"

/*
 * Virtual files live above every inode number the log can produce (index
 * + 2, and a log holds far fewer than 2^40 entries).
 */
#define FUSED_META_DIR_INO (1ULL << 40)
#define FUSED_META_SB_INO (FUSED_META_DIR_INO + 1)
#define FUSED_META_LOG_INO (FUSED_META_DIR_INO + 2)
#define FUSED_META_STATUS_INO (FUSED_META_DIR_INO + 3)
/* .superblock.N of the added device N (1 <= N < FAMFS_MAX_DEVS) */
#define FUSED_META_SECONDARY_INO(n) (FUSED_META_DIR_INO + 16 + (n))
#define FUSED_META_LAST_INO FUSED_META_SECONDARY_INO(FAMFS_MAX_DEVS - 1)

/* Files being written through the mount (create.c), above those */
#define FUSED_PENDING_INO_BASE FAMFS_PENDING_INO_BASE
/* and the hidden files that carry their bytes to the device (stage.c) */
#define FUSED_STAGE_INO_BASE (1ULL << 42)

#define FUSED_META_DIR ".meta"
#define FUSED_META_SB ".superblock"
#define FUSED_META_LOG ".log"
#define FUSED_META_STATUS ".status"

struct fused {
	/* what we serve */
	struct famfs_dev dev;
	struct famfs_geometry g;
	struct famfs_ns ns;
	enum famfs_role role;
	bool readonly; /* a client, or role=client: the log is not written */
	/* File data may not be written: readonly, unless client_rw; or ro. */
	bool data_ro;

	/* how we were started */
	char devpath[PATH_MAX];
	char mountpoint[PATH_MAX];
	char mount_devno[32]; /* fused_mount_devno() */
	char fuse_dev[PATH_MAX];
	unsigned int poll_ms;
	unsigned int readahead_kb;
	unsigned int writer_wait_s; /* a stop waits this long for writers */
	/* a file written through the mount is logged this long after its close */
	unsigned int commit_delay_ms;
	bool debug;
	char unit[256]; /* our systemd unit, if systemd runs us */
	bool allow_famfs;   /* the device can be DAX-mapped by a kernel */
	bool require_famfs; /* fallback=no: fail unless the kernel offers it */
	int ready_fd;	    /* write one status line here once mounted */

	/* the FUSE connection */
	struct fuse_session *se;
	int fuse_fd;
	bool famfs_mode; /* the kernel accepted FUSE_DAX_FMAP */
	bool dax_offered;
	bool module_dev;   /* fuse_fd is the famfs module's device */
	uint64_t dax_fmap; /* FUSE_DAX_FMAP's bit for the kernel's protocol */
	/*
	 * A read-only mount in fallback mode whose kernel allows shared mmap
	 * of direct-I/O files (6.6+): regular files open with FOPEN_DIRECT_IO,
	 * so read(2) bypasses the page cache.
	 */
	bool direct_reads;
	/*
	 * READ replies spliced from the image file (splice.c): allowed unless
	 * splice=no, on when the device is an image file and a pipe can hold
	 * a whole reply.
	 */
	bool splice_allowed, splice_reads;
	/*
	 * Replies may name bytes in the device mapping (the kernel pins its
	 * pages to copy them): not where the mapping is VM_PFNMAP, as
	 * famfs_dax's node on 6.12 is; then every reply is copied first.
	 */
	bool map_replies;
	size_t splice_pipe; /* bytes a pipe holds (splice.c) */
	/*
	 * st_blksize of files: the largest power of two one FUSE WRITE or
	 * READ carries, so that cp, tar and stdio move a request's worth
	 * per system call (cp's default, 128 KiB, took 8 WRITEs per MiB).
	 */
	uint32_t io_size;
	uint64_t init_unique;
	bool init_seen;
	bool initialized; /* INIT answered, the mount is ready */

	/* counters for .meta/.status */
	uint64_t requests, reads, writes, get_fmaps, get_daxdevs, refreshes;
	uint64_t lookups, lookup_misses; /* names looked up; not found */
	uint64_t spliced_reads;		 /* READs answered by splice.c */

	/*
	 * Upstream's monitoring socket (monitor.c): SHADOW/sock, SHADOW being
	 * what the user.famfs.shadow xattr answers.
	 */
	char shadow[PATH_MAX];
	bool shadow_made; /* we made it and remove it */
	char monitor_sock[PATH_MAX + 8];
	struct MHD_Daemon *mhd;
	int monitor_fd; /* poll this, then fused_monitor_run(); -1: none */

	/* the damage the log walk last stopped at, reported once */
	bool log_bad;
	uint64_t bad_index;
	char bad_why[256];

	/*
	 * Who owns which memory, kept with the namespace as entries are
	 * applied: statfs's free space, and the files refused because they
	 * overlap an earlier one.
	 */
	struct famfs_alloc alloc;
	uint64_t overlapping;

	/*
	 * The famfs's other devices (fs->dev.member[]): how many the log
	 * named at the last look for them, and how many were missing.
	 */
	uint32_t members_seen, members_missing;
	uint64_t members_retry; /* when to look for the missing ones again (ms) */
	bool bind_members;     /* put them on the kernel's famfs dax driver */

	int64_t mount_time;
	/* this daemon's start; connections taken over (takeover.c) */
	int64_t start_time;
	uint32_t takeovers;

	/*
	 * The superblock and log are mapped through our mount (metamap.c):
	 * fsdev_dax's node cannot be mapped. Until they are, and once the
	 * mount is gone, dev.sb points at this copy and dev.log is NULL.
	 */
	bool meta_via_mount;
	struct famfs_omf_superblock sb_copy;

	/*
	 * Creation through the mount (create.c): the files not yet logged,
	 * and the log lock, held while there are any; files logged while a
	 * reader still had them open, served to it until its close.
	 */
	struct fused_pending *pending, *retired;
	uint64_t npending;
	uint64_t pending_seq; /* next_pending_ino()'s next number, in us */
	struct famfs_writer writer;

	/* the device's health as famfs_dax reports it (health.c) */
	char health[64];
	uint64_t health_checked; /* ms */
	bool dev_lost; /* our mapping of it faulted or it shrank (devloss.c) */
	/* passes of the loop that serves the mount: 0 before it starts */
	uint64_t pass;
};

/* ---- logging (log.c) ---- */
enum fused_level { L_ERR = 3, L_WARN = 4, L_NOTICE = 5, L_INFO = 6, L_DEBUG = 7 };
void fused_log_init(bool debug, const char *logfile);
void fused_log_detach(void);
/* Do messages reach stderr (where whoever started us reads them)? */
bool fused_log_on_stderr(void);
void fused_log(enum fused_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The most verbose level logged (syslog numbers: L_INFO, or L_DEBUG). */
int fused_log_get_level(void);
void fused_log_set_level(int level);
/* Monotonic milliseconds and microseconds (vDSO: no syscall). */
uint64_t fused_now_ms(void);
uint64_t fused_now_us(void);

/* ---- a writer killed half way (procstat.c) ---- */
/*
 * Is task @pid dying of a signal? A task closes its files late in
 * do_exit(), after PF_EXITING is set (field 9 of /proc/PID/stat) and its
 * exit code (field 52) is known: a signal's number there, not exit()'s.
 */
bool fused_task_killed(pid_t pid);
/* The same, from a line of /proc/PID/stat */
bool fused_stat_says_killed(const char *line);

/* ---- the monitoring socket (monitor.c) ---- */
/* Listen at SHADOW/sock (making SHADOW unless given); a failure is logged. */
void fused_monitor_start(struct fused *fs);
void fused_monitor_run(struct fused *fs);
/* How long the loop may sleep for the monitor's sake (ms, -1: forever). */
int fused_monitor_timeout_ms(struct fused *fs);
void fused_monitor_stop(struct fused *fs);

/* ---- the namespace, kept current from the log (refresh.c) ---- */
int fused_load(struct fused *fs);
/*
 * Open the devices the log added since the last call, and look again for
 * missing ones now and then; says in the log which are missing.
 */
void fused_members_sync(struct fused *fs);
/* Apply entries appended since the last call; returns how many, or < 0. */
int fused_refresh(struct fused *fs);

/* ---- .meta files (meta.c) ---- */
bool fused_is_meta(uint64_t ino);
int fused_meta_attr(struct fused *fs, uint64_t ino, struct stat *st);
uint64_t fused_meta_lookup(struct fused *fs, uint64_t parent,
			   const char *name);
/* The device index whose superblock @ino is (0 for the primary), or -1. */
int fused_meta_sb_index(const struct fused *fs, uint64_t ino);
/* Entry @i (from 0) of .meta's listing, false past the last one. */
bool fused_meta_dirent(const struct fused *fs, unsigned int i,
		       const char **name, char *namebuf, size_t namelen,
		       uint64_t *ino, mode_t *mode);
/* The text of .meta/.status into @buf; returns its length. */
size_t fused_status(struct fused *fs, char *buf, size_t len);
/* Device range behind a superblock or .log (fmap for GET_FMAP too). */
int fused_meta_fmap(struct fused *fs, uint64_t ino, struct famfs_omf_fmap *fm,
		    uint64_t *size);

/* ---- device health (health.c) ---- */
/*
 * Re-read the kernel's famfs_health of our device (at most every 100 ms
 * unless @now) into fs->health: "ok", "failed pfn=...", or "unknown" when
 * the device has none; log when it fails.
 */
void fused_health_check(struct fused *fs, bool now);

/* ---- the device vanishing under the mount (devloss.c) ---- */
/* Catch SIGBUS in our mapping of the device, once it is mapped. */
void fused_devloss_arm(struct fused *fs);
/*
 * True once the device is gone (logged once; health becomes "lost"):
 * bytes read from the mapping since then are zeros, not data. Call it
 * before using the device and again before replying with what was read.
 * An image file's size is looked at once per pass of the loop (a request
 * calls this several times).
 */
bool fused_dev_lost(struct fused *fs);

/* ---- fallback reads by splice from an image file (splice.c) ---- */
/* Decide fs->splice_reads; says how and why, for the log. */
const char *fused_splice_setup(struct fused *fs);
/*
 * The largest READ whose reply one pipe holds, when that is less than the
 * largest the kernel sends (1 MiB); else 0.
 */
size_t fused_splice_fit(const struct fused *fs);
/*
 * Whether the kernel can pin the pages of the device mapping, as it must
 * to take a reply's bytes from it (fs->map_replies).
 */
bool fused_map_pinnable(const struct fused *fs);
/* Reply to a READ of @n by splice; false: use the copying path. */
bool fused_read_spliced(fuse_req_t req, struct fused *fs,
			const struct famfs_node *n, size_t size, off_t off);
/*
 * A reply to such a READ, about to be written, that is shorter than asked
 * for: answered EIO instead; returns the length of the reply it replaced
 * (the caller writes nothing), or 0 to go on.
 */
ssize_t fused_splice_short(struct fused *fs, int fd, const struct iovec *iov,
			   int count);
/* The connection's splice_send: a short reply becomes EIO. */
ssize_t fused_splice_send(int fdin, off_t *offin, int fdout, off_t *offout,
			  size_t len, unsigned int flags, void *userdata);

/* ---- the superblock and log through the mount (metamap.c) ---- */
/*
 * Before open_device(): the device on device_dax, to be read there. These
 * three return NULL, or what went wrong.
 */
const char *fused_metamap_begin(struct fused *fs);
/* After it: keep a superblock copy, unmap, move the device to fsdev_dax. */
const char *fused_metamap_handoff(struct fused *fs);
/* A successor: map the .meta files kept with the connection. */
const char *fused_metamap_adopt(struct fused *fs);
/* At INIT in famfs mode: map them through the mount from a thread. */
int fused_metamap_start(struct fused *fs);
/* Poll it for POLLIN, then fused_metamap_finish() (-1: nothing runs). */
int fused_metamap_wake_fd(void);
/* Install the mapping and report the mount ready (or failed). */
void fused_metamap_finish(struct fused *fs);
/*
 * Our mount has left the mount table: release the mapping now, or once
 * the files written through it are logged, if some are not yet.
 */
void fused_metamap_unmounted(struct fused *fs);
/* The FUSE fd is closed: let go of the log lock let_go() kept. */
void fused_metamap_end(void);
/* The last pending file is logged or dropped: let go, if lingering. */
void fused_metamap_pending_done(struct fused *fs);
/* A detached clone of our mount that only we hold (an fd), or -1, errno */
int fused_mount_clone(const struct fused *fs);

/* ---- FUSE operations (ops.c) ---- */
extern const struct fuse_lowlevel_ops fused_ops;
/* fs->io_size for requests of up to @max_write bytes */
void fused_set_io_size(struct fused *fs, uint32_t max_write);
void fused_node_attr(struct fused *fs, const struct famfs_node *n,
		     struct stat *st);

/* ---- creation through the mount (create.c) ---- */
struct fused_pending;
void fused_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		 mode_t mode);
void fused_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		  mode_t mode, struct fuse_file_info *fi);
/*
 * chmod or chown of the logged directory @dir: one more MKDIR entry of its
 * path with the new mode and owner (tar and cp -a as root set a
 * directory's after its files). 0, or -errno.
 */
int fused_set_dir(struct fused *fs, const struct famfs_node *dir,
		const struct stat *attr, int to_set);
bool fused_is_pending(uint64_t ino);
/*
 * -EIO, logged once per inode, for I/O on a file being written that a
 * daemon before this one had (pending files do not survive a restart)
 */
int fused_pending_gone(uint64_t ino);
/* The pending file @ino, or NULL (logged since, or never one) */
struct fused_pending *fused_pending_get(struct fused *fs, uint64_t ino);
/* Is @ino a pending file logged while a reader had it open? */
bool fused_pending_retired(struct fused *fs, uint64_t ino);
/*
 * After each request and poll: log the closed files whose commit_delay=
 * is over; let go of the mount held while files were pending once none
 * is (the file system then ends, if it was unmounted), and of the log
 * lock once none has been for a moment.
 */
void fused_pending_idle(struct fused *fs);
/*
 * A stop or an unmount: log every closed file now, without its delay.
 * @final: the loop is over, and a removed file a reader had open is
 * given back too.
 */
void fused_pending_commit_closed(struct fused *fs, bool final);
/* When fused_pending_idle() has something to log or let go of: ms, or -1. */
int fused_pending_timeout_ms(const struct fused *fs);
/*
 * The loop is over: let go of the log lock now if nothing is pending,
 * and of the files logged while a reader had them open.
 */
void fused_pending_stop(struct fused *fs);
/*
 * For readdir: the file being written in directory @dir whose inode
 * number is the lowest above @after; false when there is none.
 */
bool fused_pending_next_in(const struct fused *fs, uint64_t dir,
			   uint64_t after, const char **name, uint64_t *ino);
/* Answer a lookup of a pending file; false if @name is none. */
bool fused_pending_lookup(fuse_req_t req, struct fused *fs, uint64_t parent,
			  const char *name);
void fused_pending_attr(const struct fused *fs, const struct fused_pending *p,
			struct stat *st);
/* An open of a pending file: 0, or the errno (ETXTBSY: a second writer) */
int fused_pending_open(struct fused *fs, struct fused_pending *p,
		       struct fuse_file_info *fi);
ssize_t fused_pending_read(struct fused *fs, struct fused_pending *p,
			   char *buf, size_t size, uint64_t off);
/* Memory is reserved as the bytes arrive: -ENOSPC, -EFBIG */
ssize_t fused_pending_write(struct fused *fs, struct fused_pending *p,
			    const char *buf, size_t size, uint64_t off);
/* truncate and fallocate of a pending file: its size is still free */
int fused_pending_resize(struct fused *fs, struct fused_pending *p,
			 uint64_t size);
/* Reserve memory up to @end; without @keep_size, make the file that long */
int fused_pending_fallocate(struct fused *fs, struct fused_pending *p,
			    bool keep_size, uint64_t end);
/* Mode and owner may change until the file is logged. */
int fused_pending_setattr(struct fused_pending *p, const struct stat *attr,
			  int to_set);
/*
 * A close by task @pid of the writer's open: when it is the last before
 * the release, one dying of a signal leaves no file.
 */
void fused_pending_flush(struct fused_pending *p, pid_t pid);
/*
 * Another writer's entry @relpath uses memory of files being written
 * (it was refused here): those files are lost, their memory kept.
 */
void fused_pending_clash(struct fused *fs, const char *relpath,
			 const struct famfs_omf_fmap *fm);
/* fsync(2): the file is logged at its close, without commit_delay=. */
void fused_pending_fsync(struct fused_pending *p);
/*
 * The pending file named @name in directory @parent (rename and unlink
 * find it by name), or NULL.
 */
struct fused_pending *fused_pending_named(struct fused *fs, uint64_t parent,
					  const char *name);
/*
 * A file not yet logged may still change its name: to @name in @parent
 * (replacing a pending file there, unless @noreplace). 0, or the errno
 * (EPERM: a logged file has that name).
 */
int fused_pending_rename(struct fused *fs, struct fused_pending *p,
			 uint64_t parent, const char *name, bool noreplace);
/* ... or be removed: its name goes now, its memory at its last close. */
void fused_pending_unlink(struct fused *fs, struct fused_pending *p);
/* The last close logs the file (and frees @p). */
void fused_pending_release(struct fused *fs, struct fused_pending *p,
			   struct fuse_file_info *fi);

/* ---- a pending file's bytes to memory only the kernel reaches (stage.c) ---- */
bool fused_is_stage(uint64_t ino);
/* LOOKUP in .meta of a hidden file, for the thread that copies to it */
bool fused_stage_lookup(fuse_req_t req, struct fused *fs, const char *name);
int fused_stage_attr(struct fused *fs, uint64_t ino, struct stat *st);
/* 0, or the errno */
int fused_stage_open(struct fused *fs, fuse_req_t req, uint64_t ino,
		     struct fuse_file_info *fi);
/* The memory reserved for the pending file, as the hidden file's map */
int fused_stage_fmap(struct fused *fs, uint64_t ino, struct famfs_omf_fmap *fm,
		     uint64_t *size);
/* The kernel evicted the hidden file @ino: its memory is free to map. */
void fused_stage_forget(struct fused *fs, uint64_t ino);
/* Poll it for POLLIN (-1: no copy ever ran), then fused_stage_reap(). */
int fused_stage_wake_fd(void);
void fused_stage_reap(struct fused *fs);

/* ---- famfs protocol extension (famfs_ext.c) ---- */
/* Put our receive/send hooks on @se's connection @fd. */
int famfs_ext_attach(struct fused *fs, struct fuse_session *se, int fd);
/*
 * Answer a famfs-only request (GET_FMAP, GET_DAXDEV) held in @in: the reply,
 * header included, goes to @out. Returns the reply length, or 0 when the
 * request is not one of ours (libfuse handles it).
 */
size_t famfs_ext_request(struct fused *fs, const void *in, size_t inlen,
			 void *out, size_t outsz);
/* Is @fd open on the famfs module's FUSE device (/dev/famfs-fuse)? */
bool famfs_ext_module_fd(int fd);

/* ---- readiness (main.c) ---- */
void fused_ready(struct fused *fs, const char *err);
/*
 * ---- our own mount (ownmount.c) ----
 * "major:minor" of our mount: read from the mount table the first time it
 * is asked for once the mount is there (at the INIT reply, or once a
 * connection is taken over), then kept, since a mount stacked later on the
 * same path is not ours. NULL while it cannot be read.
 */
const char *fused_mount_devno(struct fused *fs);
/* Is the top mount on our mount point ours? */
bool fused_own_mount_on_top(struct fused *fs);
/*
 * Watch the mount table (POLLPRI on fused_mount_watch_fd(), -1 while
 * none is watched) for our mount to leave it: fused_mount_check() when
 * it changed, fused_mount_left() once it has.
 */
void fused_mount_watch(struct fused *fs);
int fused_mount_watch_fd(void);
void fused_mount_check(struct fused *fs);
bool fused_mount_left(void);

#endif
