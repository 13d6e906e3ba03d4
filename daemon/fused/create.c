// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Creating through the master's mount. mkdir appends a MKDIR entry at
 * once. A file made with creat(2)/open(O_CREAT) is "pending": the daemon
 * reserves memory for it as its bytes arrive and serves it itself (it has
 * no map the kernel could cache), and only at its last close does it
 * become one FILE entry, with the size written and the extents it needs.
 * Until then no other host sees it, and a daemon that dies leaves nothing
 * in the log: the reservations live only in our allocation map.
 *
 * The log lock is held from the first creation until no file is pending,
 * so no other writer can hand out the memory reserved here. It is tried,
 * never waited for: the writer holding it may need us to serve it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pending.h"

/* Nothing is cached of a pending file: it changes at every write. */
#define PENDING_TIMEOUT 0.0
#define CREATOR_ATTR_TIMEOUT 1.0

bool fused_is_pending(uint64_t ino)
{
	return ino >= FUSED_PENDING_INO_BASE && ino < FUSED_STAGE_INO_BASE;
}

/*
 * A number no daemon before us on this mount gave. A successor keeps the
 * mount and the kernel's inodes: an old file still held open must not
 * share its number with a new one, or that holder's writes and its
 * release would reach the new file. The numbers follow the clock, one
 * microsecond each at least (a creation takes far longer), so a daemon
 * starts above every number its predecessors gave. The range wraps after
 * 2^41 microseconds (25 days); a number one of our files still has is
 * skipped then.
 */
static uint64_t next_pending_ino(struct fused *fs)
{
	uint64_t us = fused_now_us(), ino;

	if (us > fs->pending_seq)
		fs->pending_seq = us;
	/* past a wrap, never the number of a file we still have */
	do {
		ino = FUSED_PENDING_INO_BASE +
		      fs->pending_seq++ %
			      (FUSED_STAGE_INO_BASE - FUSED_PENDING_INO_BASE);
	} while (fused_pending_get(fs, ino));
	return ino;
}

int fused_pending_gone(uint64_t ino)
{
	static uint64_t told;

	/* Known to the kernel, not to us: a daemon before us had it. */
	if (ino != told)
		fused_log(L_WARN, "inode %llu, a file being written through the mount, was lost when the daemon restarted: its writer gets EIO",
			  (unsigned long long)ino);
	told = ino;
	return -EIO;
}

static struct fused_pending *find(struct fused_pending *list, uint64_t ino)
{
	for (struct fused_pending *p = list; p; p = p->next)
		if (p->ino == ino)
			return p;
	return NULL;
}

struct fused_pending *fused_pending_get(struct fused *fs, uint64_t ino)
{
	struct fused_pending *p = find(fs->pending, ino);

	return p ? p : find(fs->retired, ino);
}

bool fused_pending_retired(struct fused *fs, uint64_t ino)
{
	return find(fs->retired, ino) != NULL;
}

bool fused_pending_next_in(const struct fused *fs, uint64_t dir,
			   uint64_t after, const char **name, uint64_t *ino)
{
	const struct fused_pending *best = NULL;

	/* newest first on the list: a few at a time, so a scan will do */
	for (const struct fused_pending *p = fs->pending; p; p = p->next)
		if (p->parent == dir && p->ino > after &&
		    (!best || p->ino < best->ino))
			best = p;
	if (!best)
		return false;
	*name = best->name;
	*ino = best->ino;
	return true;
}

struct fused_pending *fused_pending_named(struct fused *fs, uint64_t parent,
					  const char *name)
{
	for (struct fused_pending *p = fs->pending; p; p = p->next)
		if (p->parent == parent && !strcmp(p->name, name))
			return p;
	return NULL;
}

void fused_pending_attr(const struct fused *fs, const struct fused_pending *p,
			struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = p->ino;
	st->st_mode = S_IFREG | p->mode;
	st->st_nlink = 1;
	st->st_uid = p->uid;
	st->st_gid = p->gid;
	st->st_size = (off_t)p->size;
	st->st_blksize = fs->io_size;
	st->st_blocks = (blkcnt_t)(famfs_fmap_capacity(&p->fmap) / 512);
	/* the log keeps no times: the mount's, as its files show */
	st->st_atime = st->st_mtime = st->st_ctime = fs->mount_time;
}

/* Answer a lookup of a pending file; false if @name is none. */
bool fused_pending_lookup(fuse_req_t req, struct fused *fs, uint64_t parent,
			  const char *name)
{
	struct fused_pending *p = fused_pending_named(fs, parent, name);
	struct fuse_entry_param e = { 0 };

	if (!p)
		return false;
	e.ino = p->ino;
	e.attr_timeout = e.entry_timeout = PENDING_TIMEOUT;
	fused_pending_attr(fs, p, &e.attr);
	fuse_reply_entry(req, &e);
	return true;
}

/* "dir/name" of a new entry in directory @dir. */
static int new_relpath(const struct famfs_node *dir, const char *name,
		       char rel[FAMFS_PATH_LEN])
{
	char tmp[FAMFS_PATH_LEN];
	size_t len = strlen(name);

	if (len >= FAMFS_PATH_LEN)
		return -ENAMETOOLONG;
	memcpy(rel, name, len + 1);
	for (; dir && dir->parent; dir = dir->parent) {
		size_t dl = strlen(dir->name);

		if (dl + 1 + len >= FAMFS_PATH_LEN)
			return -ENAMETOOLONG;
		memcpy(tmp, rel, len + 1);
		memcpy(rel, dir->name, dl);
		rel[dl] = '/';
		memcpy(rel + dl + 1, tmp, len + 1);
		len += dl + 1;
	}
	return 0;
}

/*
 * While files are pending, a clone of our mount that only we hold keeps
 * the file system alive. Else umount(8) right after a close, or the last
 * close after a lazy umount, would end the connection before the kernel's
 * RELEASE (sent after close(2) returns) reached us: that file would never
 * be logged. The clone needs no request of ours, so the loop may make it.
 */
static int mount_hold = -1;

static void hold_mount(struct fused *fs)
{
	/*
	 * The clone also keeps the connection after umount(8): files closed
	 * and waiting for commit_delay= would wait on. Once our mount has
	 * left the mount table they are logged at once.
	 */
	if (fs->commit_delay_ms)
		fused_mount_watch(fs);
	if (mount_hold >= 0)
		return;
	mount_hold = fused_mount_clone(fs);
	if (mount_hold < 0)
		fused_log(L_WARN, "cannot hold %s while files are written through it (open_tree: %s): an umount right after a close may lose that file",
			  fs->mountpoint, strerror(errno));
}

int fused_pending_tree(void)
{
	return mount_hold;
}

/*
 * The log lock outlives the last pending file by this much. tar -x and
 * cp -a create file after file: taking the lock anew for each (its file
 * opened and locked, the log's header read again) cost 15% of tar's
 * files per second. A writer waiting for the lock waits that much longer,
 * and the file system outlives an umount(8) by as much.
 */
#define WRITER_LINGER_MS 100
static uint64_t writer_until; /* lingering: when to let go of the lock */

/*
 * What was logged through the mount while the lock was held: one line at
 * info level when it is let go (a line per file would flood the journal
 * during a tar -x, and cost a third of its speed in a slow guest); each
 * entry has its own line at debug level.
 */
static struct {
	unsigned long long files, bytes, dirs, changes;
} made;

static void writer_end(struct fused *fs)
{
	famfs_writer_end(&fs->writer);
	if (!made.files && !made.dirs && !made.changes)
		return;
	fused_log(L_INFO, "logged through the mount: %llu files (%llu bytes), %llu directories, %llu directory mode or owner changes",
		  made.files, made.bytes, made.dirs, made.changes);
	memset(&made, 0, sizeof(made));
}

static void commit(struct fused *fs, struct fused_pending *p, int rc);

/*
 * Closed and waiting to be logged. One removed meanwhile has nothing to
 * log, and a reader that has it open reads it until its close.
 */
static bool waiting(const struct fused_pending *p)
{
	return p->commit_at && !(p->lost && p->opens);
}

/* Log the closed files due by @due. */
static void commit_due(struct fused *fs, uint64_t due)
{
	struct fused_pending *p = fs->pending, *next;

	for (; p; p = next) {
		next = p->next; /* commit() frees or retires @p */
		if (waiting(p) && p->commit_at <= due)
			commit(fs, p, 0);
	}
}

void fused_pending_commit_closed(struct fused *fs, bool final)
{
	struct fused_pending *p = fs->pending, *next;

	if (!final) {
		commit_due(fs, UINT64_MAX);
		return;
	}
	/* no request comes any more: no reader is left to serve or wait for */
	for (; p; p = next) {
		next = p->next;
		if (p->commit_at) {
			p->opens = 0;
			commit(fs, p, 0);
		}
	}
}

void fused_pending_idle(struct fused *fs)
{
	if (fs->pending)
		commit_due(fs, fused_mount_left() ? UINT64_MAX : fused_now_ms());
	if (fs->pending)
		return;
	/*
	 * Both the mount's clone and the lock outlive the last pending file
	 * a moment: a clone dropped after each file of a tar -x and made
	 * again for the next cost a wait for an RCU grace period per file.
	 */
	if (mount_hold >= 0 &&
	    (fused_mount_left() || fused_now_ms() >= writer_until)) {
		close(mount_hold); /* the file system ends here if unmounted */
		mount_hold = -1;
	}
	if (fs->writer.dev && fused_now_ms() >= writer_until)
		writer_end(fs);
}

static void drop(struct fused_pending *p)
{
	if (p->buf_fd >= 0)
		close(p->buf_fd);
	free(p->zeroed);
	free(p);
}

void fused_pending_stop(struct fused *fs)
{
	if (!fs->pending && fs->writer.dev)
		writer_end(fs);
	while (fs->retired) {
		struct fused_pending *p = fs->retired;

		fs->retired = p->next;
		drop(p);
	}
}

int fused_pending_timeout_ms(const struct fused *fs)
{
	uint64_t now = fused_now_ms(), until = UINT64_MAX;

	for (const struct fused_pending *p = fs->pending; p; p = p->next)
		if (waiting(p) && p->commit_at < until)
			until = p->commit_at;
	if (!fs->pending && (fs->writer.dev || mount_hold >= 0))
		until = writer_until;
	if (until == UINT64_MAX)
		return -1;
	return until > now ? (int)(until - now) : 0;
}

/* Take the log lock (unless held) with our namespace current under it. */
static int writer_hold(struct fused *fs)
{
	int rc;

	if (fs->writer.dev)
		return 0;
	rc = famfs_writer_lend(&fs->writer, &fs->dev, &fs->ns, &fs->alloc);
	if (rc) {
		fused_log(L_INFO, "creation through the mount refused: %s",
			  famfs_errmsg());
		return rc;
	}
	fused_refresh(fs);
	rc = famfs_writer_ready(&fs->writer);
	if (rc) {
		fused_log(L_ERR, "creation through the mount refused: %s",
			  famfs_errmsg());
		famfs_writer_end(&fs->writer);
	}
	return rc;
}

/* Let the lock go a moment after nothing pending needs it. */
static void writer_drop(struct fused *fs)
{
	if (!fs->pending)
		writer_until = fused_now_ms() + WRITER_LINGER_MS;
}

/*
 * Room in the log for one entry more than the files being written will
 * take at their close (one each, kept for them): 0, or ENOSPC. Called
 * while the writer is held, so what others appended has been read.
 */
static int log_room(struct fused *fs)
{
	uint64_t slots = famfs_log_slots(fs->dev.log_len);

	return fs->ns.nindex + fs->npending >= slots ? ENOSPC : 0;
}

struct clash {
	const struct fused_pending *p;
	bool hit;
};

static void clash_range(uint64_t devindex, uint64_t offset, uint64_t len,
			void *arg)
{
	struct clash *c = arg;
	const struct famfs_omf_fmap *fm = &c->p->fmap;

	for (uint32_t i = 0; i < fm->simple.nextents; i++) {
		const struct famfs_omf_extent *x = &fm->simple.se[i];

		if (x->devindex == devindex && offset < x->offset + x->len &&
		    x->offset < offset + len)
			c->hit = true;
	}
}

void fused_pending_clash(struct fused *fs, const char *relpath,
			 const struct famfs_omf_fmap *fm)
{
	struct fused_pending *p;

	for (p = fs->pending; p; p = p->next) {
		struct clash c = { .p = p };

		famfs_fmap_for_each_range(fm, clash_range, &c);
		if (!c.hit || p->clashed)
			continue;
		p->clashed = true;
		p->lost = "another writer logged a file in its memory";
		fused_log(L_ERR, "%s, being written through the mount, is lost: another writer, appending without the writers' lock, logged \"%s\" in its memory (its memory stays in use until the next start)",
			  p->relpath, relpath);
	}
}

/*
 * Append where the log ends now. A writer that does not take the lock
 * (another host's famfs creat -D, a tool) may have appended since the
 * writer was held: apply its entries (refresh.c; files being written in
 * whose memory it put a file are lost there), then go on after them.
 * 0, or -errno (the log is damaged past what was applied).
 */
static int writer_in_step(struct fused *fs)
{
	uint64_t was = fs->writer.next, tail;
	int rc;

	if (!fs->dev.log)
		return 0; /* not mapped (7.3, through the mount): nothing to follow */
	famfs_dev_invalidate(&fs->dev, fs->dev.log, sizeof(*fs->dev.log));
	tail = __atomic_load_n(&fs->dev.log->next_index, __ATOMIC_ACQUIRE);
	if (tail == was)
		return 0;
	rc = fused_refresh(fs);
	if (rc < 0)
		return rc;
	rc = famfs_writer_ready(&fs->writer);
	if (rc) {
		fused_log(L_ERR, "the log of %s moved under the writers' lock and cannot be followed: %s",
			  fs->devpath, famfs_errmsg());
		return rc;
	}
	fused_log(L_WARN, "the log of %s moved under the writers' lock, from entry %llu to %llu: another writer appended without it; new entries go after its own",
		  fs->devpath, (unsigned long long)was,
		  (unsigned long long)fs->writer.next);
	return 0;
}

/*
 * Ready to append one entry, the writer held: in step with the log, with
 * a slot beyond those kept for files being written. 0, or the errno.
 */
static int append_ready(struct fused *fs)
{
	int rc = -writer_in_step(fs);

	return rc ? rc : log_room(fs);
}

/* A master that may append, on a device still there: 0, or the errno. */
static int may_append(struct fused *fs)
{
	if (fs->readonly || fs->data_ro)
		return EROFS;
	return fused_dev_lost(fs) ? EIO : 0;
}

/*
 * Where a new name may go: a master that may write, a real directory, a
 * path the log can hold (into @rel). 0, or the errno.
 */
static int check_place(struct fused *fs, uint64_t parent, const char *name,
		       char rel[FAMFS_PATH_LEN])
{
	const struct famfs_node *dir = famfs_ns_get(&fs->ns, parent);
	int rc = may_append(fs);

	if (rc)
		return rc;
	if (!dir)
		return fused_is_meta(parent) ? EPERM : ENOENT;
	if (!dir->is_dir)
		return ENOTDIR;
	rc = new_relpath(dir, name, rel);
	if (rc) {
		fused_log(L_INFO, "no name \"%s\" there: a path of the log holds at most %d bytes",
			  name, FAMFS_PATH_LEN - 1);
		return -rc;
	}
	return 0;
}

/* What mkdir and create check first: check_place(), and a free name. */
static int check_new(struct fused *fs, uint64_t parent, const char *name,
		     char rel[FAMFS_PATH_LEN])
{
	int rc = check_place(fs, parent, name, rel);

	if (!rc && (famfs_ns_lookup(&fs->ns, famfs_ns_get(&fs->ns, parent),
				    name) ||
		    fused_pending_named(fs, parent, name)))
		rc = EEXIST;
	return rc;
}

/* The group of a new entry: a set-group-ID directory's, as ext4 does. */
static uint32_t new_gid(struct fused *fs, uint64_t parent, fuse_req_t req)
{
	const struct famfs_node *dir = famfs_ns_get(&fs->ns, parent);

	return dir && (dir->mode & S_ISGID) ? dir->gid :
					      fuse_req_ctx(req)->gid;
}

void fused_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		 mode_t mode)
{
	struct fused *fs = fuse_req_userdata(req);
	const struct famfs_node *dir = famfs_ns_get(&fs->ns, parent);
	struct fuse_entry_param e = { 0 };
	char rel[FAMFS_PATH_LEN];
	int rc = check_new(fs, parent, name, rel);

	if (!rc && dir && (dir->mode & S_ISGID))
		mode |= S_ISGID;
	if (!rc)
		rc = -writer_hold(fs);
	if (!rc) {
		rc = append_ready(fs);
		if (rc)
			writer_drop(fs);
	}
	if (rc) {
		fuse_reply_err(req, rc);
		return;
	}
	rc = famfs_writer_mkdir(&fs->writer, rel, mode & 07777,
				fuse_req_ctx(req)->uid,
				new_gid(fs, parent, req));
	writer_drop(fs);
	if (rc) {
		fused_log(L_ERR, "mkdir %s: %s", rel, famfs_errmsg());
		fuse_reply_err(req, -rc);
		return;
	}
	made.dirs++;
	fused_log(L_DEBUG, "mkdir %s: logged", rel);
	e.ino = famfs_ns_resolve(&fs->ns, rel)->ino;
	e.attr_timeout = e.entry_timeout = 10.0;
	fused_node_attr(fs, famfs_ns_get(&fs->ns, e.ino), &e.attr);
	fuse_reply_entry(req, &e);
}

int fused_set_dir(struct fused *fs, const struct famfs_node *dir,
		const struct stat *attr, int to_set)
{
	uint32_t mode = to_set & FUSE_SET_ATTR_MODE ? attr->st_mode & 07777 :
						      dir->mode;
	uint32_t uid = to_set & FUSE_SET_ATTR_UID ? attr->st_uid : dir->uid;
	uint32_t gid = to_set & FUSE_SET_ATTR_GID ? attr->st_gid : dir->gid;
	char rel[FAMFS_PATH_LEN];
	int rc;

	/* The kernel checked who may (default_permissions). */
	if (mode == dir->mode && uid == dir->uid && gid == dir->gid)
		return 0; /* nothing to log */
	rc = may_append(fs);
	if (rc)
		return -rc;
	famfs_ns_path(dir, rel, sizeof(rel));
	rc = writer_hold(fs);
	if (rc)
		return rc;
	rc = -append_ready(fs);
	if (rc) {
		writer_drop(fs);
		return rc;
	}
	rc = famfs_writer_set_dir(&fs->writer, rel, mode, uid, gid);
	writer_drop(fs);
	if (rc)
		fused_log(L_ERR, "mode or owner of %s: %s", rel,
			  famfs_errmsg());
	else {
		made.changes++;
		fused_log(L_DEBUG, "%s: mode %04o, owner %u:%u logged", rel,
			  mode, uid, gid);
	}
	return rc;
}

void fused_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		  mode_t mode, struct fuse_file_info *fi)
{
	struct fused *fs = fuse_req_userdata(req);
	struct fuse_entry_param e = { 0 };
	struct fused_pending *p;
	char rel[FAMFS_PATH_LEN];
	int rc = check_new(fs, parent, name, rel);

	if (!rc)
		rc = -writer_hold(fs);
	/* the entry this file will take at its close, kept from now on */
	if (!rc)
		rc = append_ready(fs);
	/* what the entry will need of its name, checked before any byte */
	if (!rc && famfs_writer_check_path(&fs->writer, rel)) {
		fused_log(L_INFO, "create %s refused: %s", rel, famfs_errmsg());
		rc = EINVAL;
	}
	p = rc ? NULL : calloc(1, sizeof(*p));
	if (!rc && !p)
		rc = ENOMEM;
	if (p) {
		/* Only the kernel reaches a device on fsdev_dax: hold the bytes. */
		p->buf_fd = fs->meta_via_mount ?
				    memfd_create("famfs-pending", MFD_CLOEXEC) :
				    -1;
		if (fs->meta_via_mount && p->buf_fd < 0) {
			rc = errno;
			fused_log(L_ERR, "create %s: no memory to hold its bytes: %s",
				  rel, strerror(rc));
			free(p);
			p = NULL;
		}
	}
	if (rc) {
		if (!fs->pending && fs->writer.dev)
			writer_drop(fs);
		fuse_reply_err(req, rc);
		return;
	}
	p->ino = next_pending_ino(fs);
	p->parent = parent;
	snprintf(p->name, sizeof(p->name), "%s", name);
	memcpy(p->relpath, rel, sizeof(rel));
	p->mode = mode & 07777;
	p->uid = fuse_req_ctx(req)->uid;
	p->scrub = p->uid != 0;
	p->gid = new_gid(fs, parent, req);
	p->fmap.ext_type = FAMFS_EXT_SIMPLE;
	p->opens = 1;
	p->writing = (fi->flags & O_ACCMODE) != O_RDONLY;
	hold_mount(fs);
	p->next = fs->pending;
	fs->pending = p;
	fs->npending++;
	e.ino = p->ino;
	e.entry_timeout = PENDING_TIMEOUT;
	/*
	 * Its attributes may be cached by the creator's kernel, which sees
	 * every change (writes, truncate, chmod all pass through it): that
	 * spares a GETATTR before the first write.
	 */
	e.attr_timeout = CREATOR_ATTR_TIMEOUT;
	fused_pending_attr(fs, p, &e.attr);
	/* Every byte goes through us: no page cache to go stale. */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	/* as fused_pending_open(): only the writer's closes are its FLUSHes */
	fi->noflush = !p->writing;
	fused_log(L_DEBUG, "create %s: pending", rel);
	fuse_reply_create(req, &e, fi);
}

/* @p's size, and its memfd's: what lies past the end reads as zeros. */
static int set_size(struct fused_pending *p, uint64_t size)
{
	if (p->buf_fd >= 0 && ftruncate(p->buf_fd, (off_t)size) < 0)
		return -errno;
	p->size = size;
	return 0;
}

/* Its writer is done: its bytes on their way, waiting, or logged. */
static bool closed(const struct fused_pending *p)
{
	return p->stage || p->commit_at || p->logged;
}

int fused_pending_open(struct fused *fs, struct fused_pending *p,
		       struct fuse_file_info *fi)
{
	bool wr = (fi->flags & O_ACCMODE) != O_RDONLY;

	/* one writer; none once it is closed, its bytes on their way */
	if ((wr || fi->flags & O_TRUNC) &&
	    (p->writing || closed(p)))
		return ETXTBSY;
	if (fi->flags & O_TRUNC)
		set_size(p, 0);
	(void)fs;
	p->opens++;
	p->writing |= wr;
	fi->direct_io = 1;
	/* a killed reader must not pass for a killed writer at FLUSH */
	fi->noflush = !wr;
	return 0;
}

#define ZERO_CHUNK_SHIFT 21 /* pending.h's zeroed: a bit per 2 MiB */
#define ZERO_CHUNK (1ULL << ZERO_CHUNK_SHIFT)

static bool chunk_zeroed(const struct fused_pending *p, uint64_t c)
{
	return c / 64 < p->zeroed_words && (p->zeroed[c / 64] >> (c % 64)) & 1;
}

/* Chunk @c is zeros now; without the memory to say so, it is not known. */
static void mark_zeroed(struct fused_pending *p, uint64_t c)
{
	if (c / 64 >= p->zeroed_words) {
		size_t n = c / 64 + 1 + p->zeroed_words;
		uint64_t *z = realloc(p->zeroed, n * sizeof(*z));

		if (!z)
			return;
		memset(z + p->zeroed_words, 0,
		       (n - p->zeroed_words) * sizeof(*z));
		p->zeroed = z;
		p->zeroed_words = n;
	}
	p->zeroed[c / 64] |= 1ULL << (c % 64);
}

/* [@from, @to) may hold bytes now: its chunks are not known zeros. */
static void mark_written(struct fused_pending *p, uint64_t from, uint64_t to)
{
	uint64_t c;

	for (c = from >> ZERO_CHUNK_SHIFT;
	     c <= (to - 1) >> ZERO_CHUNK_SHIFT && c / 64 < p->zeroed_words; c++)
		p->zeroed[c / 64] &= ~(1ULL << (c % 64));
}

/* Zeros over [@from, @to) of @p, which its map covers. */
static int zero_range(struct fused *fs, struct fused_pending *p,
		      uint64_t from, uint64_t to)
{
	/* a memfd's holes are zeros, and stage.c writes them all */
	if (p->buf_fd >= 0)
		return 0;
	while (from < to) {
		uint64_t c = from >> ZERO_CHUNK_SHIFT;
		uint64_t start = c << ZERO_CHUNK_SHIFT;
		uint64_t end = start + ZERO_CHUNK < to ? start + ZERO_CHUNK : to;
		bool whole = from == start && end == start + ZERO_CHUNK;
		int rc;

		if (!whole || !chunk_zeroed(p, c)) {
			rc = famfs_data_zero(&fs->dev, &p->fmap, from, end);
			if (rc)
				return rc;
			if (whole)
				mark_zeroed(p, c);
		}
		from = end;
	}
	return 0;
}

/* Reserve memory for @end bytes of @p. */
static int extend(struct fused *fs, struct fused_pending *p, uint64_t end)
{
	int rc = famfs_alloc_grow(&fs->alloc, &p->fmap, end);

	if (rc) {
		fused_log(L_INFO, "%s: %s", p->relpath, famfs_errmsg());
		/* A file cut short is no file: it goes at its close. */
		p->lost = "a write found no room";
	}
	return rc;
}

ssize_t fused_pending_write(struct fused *fs, struct fused_pending *p,
			    const char *buf, size_t size, uint64_t off)
{
	ssize_t put;
	int rc;

	if (off + size < off)
		return -EFBIG;
	/* that memory is another file's now: leave it alone */
	if (p->clashed)
		return -EIO;
	rc = extend(fs, p, off + size);
	/* A hole reads as zeros, never as what the device held. */
	if (!rc && off > p->size)
		rc = zero_range(fs, p, p->size, off);
	if (rc)
		return rc;
	/* before the store: a failed one may have stored part */
	if (off + size > p->written_end)
		p->written_end = off + size;
	if (size)
		mark_written(p, off, off + size);
	if (p->buf_fd >= 0) {
		put = pwrite(p->buf_fd, buf, size, (off_t)off);
		if (put < 0)
			put = -errno;
	} else {
		put = famfs_data_store(&fs->dev, &p->fmap,
				       famfs_fmap_capacity(&p->fmap), off, buf,
				       size);
	}
	if (put < 0)
		p->lost = "a write failed"; /* its writer was told: no file */
	if (put > 0 && off + (uint64_t)put > p->size)
		p->size = off + (uint64_t)put;
	return put;
}

ssize_t fused_pending_read(struct fused *fs, struct fused_pending *p,
			   char *buf, size_t size, uint64_t off)
{
	ssize_t got;

	if (off >= p->size)
		return 0;
	if (p->buf_fd < 0)
		return famfs_data_read(&fs->dev, &p->fmap, p->size, off, buf,
				       size);
	if (size > p->size - off)
		size = (size_t)(p->size - off);
	got = pread(p->buf_fd, buf, size, (off_t)off);
	return got < 0 ? -errno : got;
}

int fused_pending_resize(struct fused *fs, struct fused_pending *p,
			 uint64_t size)
{
	int rc = 0;

	if (closed(p))
		return -ETXTBSY;
	if (p->clashed)
		return -EIO;
	if (size > p->size) {
		/*
		 * Zeros where it grows: over what a WRITE stored before a
		 * shrink; a user's file over all of it (root's preallocation
		 * keeps what the device held, as famfs creat -s does).
		 */
		uint64_t dirty = p->scrub || p->written_end > size ?
					 size :
					 p->written_end;

		rc = extend(fs, p, size);
		if (!rc && dirty > p->size)
			rc = zero_range(fs, p, p->size, dirty);
	}
	return rc ? rc : set_size(p, size);
}

int fused_pending_fallocate(struct fused *fs, struct fused_pending *p,
			    bool keep_size, uint64_t end)
{
	if (closed(p))
		return -ETXTBSY;
	if (p->clashed)
		return -EIO;
	if (keep_size)
		return extend(fs, p, end);
	return end > p->size ? fused_pending_resize(fs, p, end) : 0;
}

int fused_pending_setattr(struct fused_pending *p, const struct stat *attr,
			  int to_set)
{
	/* The kernel checked who may (default_permissions). */
	if (to_set & FUSE_SET_ATTR_MODE)
		p->mode = attr->st_mode & 07777;
	if (to_set & FUSE_SET_ATTR_UID)
		p->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		p->gid = attr->st_gid;
	return 0;
}

/* @p will not be logged (@why): no lookup or listing finds it any more. */
static void unname(struct fused_pending *p, const char *why)
{
	p->parent = 0;
	p->name[0] = '\0';
	if (!p->lost)
		p->lost = why;
}

void fused_pending_flush(struct fused_pending *p, pid_t pid)
{
	p->killed_pid = fused_task_killed(pid) ? pid : 0;
}

/*
 * The writer's open is closed. A writer killed half way has not written
 * a file; nor has one whose write found no room: neither is logged, and
 * the name is free at once, while a reader may still read what is there.
 */
static void writer_closed(struct fused_pending *p)
{
	p->writing = false;
	if (!p->lost && p->killed_pid) {
		fused_log(L_INFO, "%s: its writer (pid %d) was killed",
			  p->relpath, (int)p->killed_pid);
		p->lost = "its writer was killed";
	}
	if (p->lost)
		unname(p, p->lost);
}

void fused_pending_fsync(struct fused_pending *p)
{
	p->synced = true;
	/* closed, and opened again to be synced: due at that close */
	if (p->commit_at)
		p->commit_at = 1;
}

int fused_pending_rename(struct fused *fs, struct fused_pending *p,
			 uint64_t parent, const char *name, bool noreplace)
{
	struct fused_pending *there = fused_pending_named(fs, parent, name);
	char rel[FAMFS_PATH_LEN];
	int rc;

	if (there == p)
		return 0;
	rc = check_place(fs, parent, name, rel);
	if (rc)
		return rc;
	if (famfs_ns_lookup(&fs->ns, famfs_ns_get(&fs->ns, parent), name)) {
		if (noreplace)
			return EEXIST;
		fused_log(L_INFO, "rename of %s refused: %s is logged, and famfs is append-only",
			  p->relpath, rel);
		return EPERM;
	}
	if (there && noreplace)
		return EEXIST;
	if (famfs_writer_check_path(&fs->writer, rel)) {
		fused_log(L_INFO, "rename of %s refused: %s", p->relpath,
			  famfs_errmsg());
		return EINVAL;
	}
	if (there)
		fused_pending_unlink(fs, there);
	fused_log(L_DEBUG, "%s: renamed to %s before it was logged",
		  p->relpath, rel);
	p->parent = parent;
	snprintf(p->name, sizeof(p->name), "%s", name);
	memcpy(p->relpath, rel, sizeof(rel));
	return 0;
}

void fused_pending_unlink(struct fused *fs, struct fused_pending *p)
{
	unname(p, "it was removed before it was logged");
	/* closed: dropped now; else at its last close */
	if (p->commit_at && !p->opens)
		commit(fs, p, 0);
}

static void unlink_from(struct fused_pending **pp, struct fused_pending *p)
{
	while (*pp != p)
		pp = &(*pp)->next;
	*pp = p->next;
}

static void unlink_pending(struct fused *fs, struct fused_pending *p)
{
	unlink_from(&fs->pending, p);
	fs->npending--;
}

/*
 * Make @p ready to be logged: not lost, at least one unit of memory, no
 * more than its size needs. 0, or why it will not be logged.
 */
static int prepare(struct fused *fs, struct fused_pending *p)
{
	int rc = 0;

	if (p->lost) {
		fused_log(L_NOTICE, "%s: discarded, not logged: %s", p->relpath,
			  p->lost);
		return -ENOSPC;
	}
	/* A file needs one unit of memory, even an empty one. */
	if (!p->fmap.simple.nextents)
		rc = famfs_alloc_grow(&fs->alloc, &p->fmap, 1);
	if (!rc)
		famfs_alloc_trim(&fs->alloc, &p->fmap, p->size);
	else
		fused_log(L_ERR, "%s, written through the mount, is lost: %s",
			  p->relpath, famfs_errmsg());
	return rc;
}

/*
 * @p will not be logged, but a reader still reads its memory, which must
 * not go to another file meanwhile: it is given back at the last close.
 */
static void defer_drop(struct fused_pending *p, const char *why)
{
	unname(p, why); /* its name is free for a new file at once */
	if (!p->commit_at)
		p->commit_at = 1;
}

/* Log @p unless @rc or it was lost (then give its memory back); free it. */
static void commit(struct fused *fs, struct fused_pending *p, int rc)
{
	const char *why = "its bytes could not be stored";

	if (!rc && !p->lost) {
		uint64_t index;

		/* another writer's entries first: they may take its memory */
		rc = writer_in_step(fs);
		index = fs->writer.next;
		if (!rc && !p->lost)
			rc = famfs_writer_log_file(&fs->writer, p->relpath,
						   p->size, p->mode, p->uid,
						   p->gid, &p->fmap);
		/*
		 * In the log, only not in our namespace (the writer makes
		 * room first, so a namespace out of step with the log): the
		 * file exists all the same, and its memory is its own.
		 */
		if (rc && fs->writer.next != index) {
			fused_log(L_ERR, "%s: logged, but not known here: %s",
				  p->relpath, famfs_errmsg());
			rc = 0;
		}
		if (rc) {
			fused_log(L_ERR, "%s, written through the mount, could not be logged and is lost: %s",
				  p->relpath, famfs_errmsg());
			why = "it could not be logged";
		}
	}
	if ((rc || p->lost) && p->opens) {
		defer_drop(p, why);
		return;
	}
	if (!rc && p->lost) {
		fused_log(L_NOTICE, "%s: discarded, not logged: %s", p->relpath,
			  p->lost);
		rc = -ECANCELED;
	}
	if (rc && !p->clashed) {
		for (uint32_t i = 0; i < p->fmap.simple.nextents; i++)
			famfs_alloc_free(&fs->alloc,
					 p->fmap.simple.se[i].devindex,
					 p->fmap.simple.se[i].offset,
					 p->fmap.simple.se[i].len);
	} else {
		made.files++;
		made.bytes += p->size;
		fused_log(L_DEBUG, "%s: logged, %llu bytes", p->relpath,
			  (unsigned long long)p->size);
	}
	unlink_pending(fs, p);
	/* the mount may be gone: then let go of it before the lock */
	fused_metamap_pending_done(fs);
	writer_drop(fs);
	/*
	 * The name now leads to the logged file. No invalidation is sent
	 * (the kernel may hold the directory's lock while it waits for us):
	 * the pending entry was never cached, so the next lookup finds the
	 * logged file under its own inode. A reader that has this one open
	 * goes on reading it here until its close; a delay that waited for
	 * readers could wait for ever on one that keeps reopening it.
	 */
	if (!rc && p->opens) {
		p->logged = true;
		p->next = fs->retired;
		fs->retired = p;
		return;
	}
	drop(p);
}

void fused_pending_finish(struct fused *fs, struct fused_pending *p, int rc)
{
	/*
	 * Kept a moment unlogged, a closed file may still be renamed (as
	 * rsync does with its temporary files): its memfd, if any, serves
	 * its reads until then.
	 */
	if (!rc && !p->lost && fs->commit_delay_ms && !p->synced &&
	    !fused_mount_left()) {
		p->commit_at = fused_now_ms() + fs->commit_delay_ms;
		return;
	}
	commit(fs, p, rc);
}

void fused_pending_release(struct fused *fs, struct fused_pending *p,
			   struct fuse_file_info *fi)
{
	uint64_t page_end = fused_pending_page_end(p);
	int rc;

	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		writer_closed(p);
	if (--p->opens)
		return;
	if (p->logged) {
		unlink_from(&fs->retired, p);
		drop(p);
		return;
	}
	/* closed before: logged when due (fused_pending_idle) */
	if (p->commit_at) {
		if (p->lost)
			commit(fs, p, 0); /* not logged: its memory goes back */
		return;
	}
	/* a reader that came while the bytes were on their way */
	if (p->stage) {
		fused_stage_try_finish(fs, p);
		return;
	}
	rc = prepare(fs, p);
	if (!rc && p->buf_fd >= 0) {
		rc = fused_stage_start(fs, p);
		if (!rc)
			return; /* finished once the bytes are there */
		fused_log(L_ERR, "%s: cannot start copying it to the device: %s",
			  p->relpath, strerror(-rc));
	}
	/* A mapping of the last page shows all of it: no stale bytes. */
	if (!rc && page_end > p->size) {
		rc = zero_range(fs, p, p->size, page_end);
		if (rc)
			fused_log(L_ERR, "%s, written through the mount, is lost: its last page cannot be zeroed: %s",
				  p->relpath, famfs_errmsg());
	}
	/* Its bytes were stored unsynced: durable now, before its entry. */
	if (!rc) {
		rc = famfs_data_sync(&fs->dev, &p->fmap, 0, page_end);
		if (rc)
			fused_log(L_ERR, "%s, written through the mount, is lost: %s",
				  p->relpath, famfs_errmsg());
	}
	fused_pending_finish(fs, p, rc);
}
