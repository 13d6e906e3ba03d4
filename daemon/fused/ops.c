// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The FUSE operations. famfs is append-only and its metadata belongs to
 * the log, so everything that would change a logged file's size, owner or
 * mode, or take a name away, is refused here. mkdir, create and a chmod
 * or chown of a directory on the master append to the log (create.c); so
 * does the famfs CLI, through .meta/.log.
 *
 * Errors returned (documented in famfs-fused(8)):
 *   truncate / size change          EPERM  (logged files have a fixed size)
 *   chmod / chown of a logged file  EPERM  (its entry holds them)
 *   unlink rmdir rename link symlink EPERM (nothing is ever removed;
 *                                   a file not yet logged may be
 *                                   renamed or removed, create.c)
 *   mknod                           EPERM  (only files and directories)
 *   write past the end of a file    EFBIG  (logged files never grow)
 *   any write on a client           EROFS  (file data too, unless client_rw)
 * Setting only the times succeeds and changes nothing: famfs keeps none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* RENAME_NOREPLACE */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "famfs_fuse_abi.h"
#include "fused.h"

/* Entries never go away or change; only new ones appear. */
#define ENTRY_TIMEOUT 10.0
#define ATTR_TIMEOUT 10.0

static struct fused *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

void fused_node_attr(struct fused *fs, const struct famfs_node *n,
		     struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	st->st_blksize = fs->io_size;
	st->st_atime = st->st_mtime = st->st_ctime = fs->mount_time;
	if (n->is_dir) {
		st->st_mode = S_IFDIR | n->mode;
		st->st_nlink = 2;
		for (const struct famfs_node *c = n->first_child; c;
		     c = c->next_sibling)
			st->st_nlink += c->is_dir;
		st->st_size = 4096;
	} else {
		st->st_mode = S_IFREG | n->mode;
		st->st_nlink = 1;
		st->st_size = (off_t)n->size;
		st->st_blocks = (blkcnt_t)(famfs_fmap_capacity(&n->fmap) / 512);
	}
}

static int attr_of(struct fused *fs, uint64_t ino, struct stat *st)
{
	const struct famfs_node *n;
	const struct fused_pending *p;

	if (fused_is_meta(ino))
		return fused_meta_attr(fs, ino, st);
	if (fused_is_stage(ino))
		return fused_stage_attr(fs, ino, st);
	if (fused_is_pending(ino)) {
		p = fused_pending_get(fs, ino);
		/*
		 * Logged since (a new inode) or lost: ESTALE has the kernel
		 * look the name up again, as it does for an open (below).
		 */
		if (!p)
			return -ESTALE;
		fused_pending_attr(fs, p, st);
		return 0;
	}
	n = famfs_ns_get(&fs->ns, ino);
	if (!n)
		return -ENOENT;
	fused_node_attr(fs, n, st);
	if (ino == FAMFS_ROOT_INO)
		st->st_nlink++; /* .meta */
	return 0;
}

void fused_set_io_size(struct fused *fs, uint32_t max_write)
{
	fs->io_size = 4096;
	while (fs->io_size <= max_write / 2)
		fs->io_size *= 2;
}

static void fused_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fused *fs = userdata;
	const char *splice = "off (famfs mode)";

	/* Our receive hook needs whole requests in memory, never a pipe. */
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE);
	/*
	 * Replies to READs may be spliced from the image file; never moved:
	 * SPLICE_MOVE would let the kernel steal the image's page-cache pages.
	 */
	if (!fs->famfs_mode)
		splice = fused_splice_setup(fs);
	if (fs->splice_reads && (conn->capable & FUSE_CAP_SPLICE_WRITE))
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	else
		fs->splice_reads = false;
	/*
	 * libfuse tells the kernel its largest request (max_pages) from
	 * max_write: no READ larger than a pipe can splice.
	 */
	if (fused_splice_fit(fs) && conn->max_write > fused_splice_fit(fs))
		conn->max_write = (unsigned int)fused_splice_fit(fs);
	fused_set_io_size(fs, conn->max_write);
	/* The design keeps READDIRPLUS off in famfs mode; we never need it. */
	conn->want &= ~FUSE_CAP_READDIRPLUS;
	conn->time_gran = 1000000000;

	if (fs->require_famfs && !fs->famfs_mode) {
		fused_ready(fs, fs->dax_offered ?
				"the kernel offers famfs mode but the device cannot be DAX-mapped, and fallback is disabled" :
				"the kernel does not offer famfs mode (FUSE_DAX_FMAP) and fallback is disabled");
		fuse_session_exit(fs->se);
		return;
	}
	if (fs->meta_via_mount && !fs->famfs_mode) {
		/* The device is on fsdev_dax: only the kernel can reach it. */
		fused_ready(fs, "the kernel did not agree to famfs mode, and the device, on fsdev_dax, can be served in no other");
		fuse_session_exit(fs->se);
		return;
	}
	/* Ready first: a mount helper stays quiet when all went well. */
	if (!fs->meta_via_mount || fs->dev.log)
		fused_ready(fs, NULL);
	else if (fused_metamap_start(fs) < 0) {
		fused_ready(fs, "cannot start the thread that maps the superblock and log through the mount");
		fuse_session_exit(fs->se);
		return;
	}
	fused_log(L_NOTICE, "%s mounted on %s in %s mode as %s%s (kernel %s FUSE_DAX_FMAP)%s",
		  fs->devpath, fs->mountpoint,
		  fs->famfs_mode ? "famfs" : "fallback",
		  famfs_role_name(fs->role), fs->readonly ? ", read-only" : "",
		  fs->dax_offered ? "offers" : "does not offer",
		  fs->direct_reads ? "; reads bypass the page cache" : "");
	if (!fs->famfs_mode)
		fused_log(L_INFO, "reads spliced from the image file: %s (pipe of %zu KiB, requests of up to %u KiB)",
			  splice, fs->splice_pipe >> 10, conn->max_write >> 10);
}

static void fused_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fused *fs = fs_of(req);
	struct fuse_entry_param e;
	const struct famfs_node *dir, *n;
	uint64_t mino;

	if (parent == FUSED_META_DIR_INO && fused_stage_lookup(req, fs, name))
		return;
	mino = fused_meta_lookup(fs, parent, name);
	memset(&e, 0, sizeof(e));
	if (mino) {
		e.ino = mino;
		/* .status changes size as it is read: never cache it. */
		e.attr_timeout = mino == FUSED_META_STATUS_INO ? 0 : ATTR_TIMEOUT;
		e.entry_timeout = ENTRY_TIMEOUT;
		fused_meta_attr(fs, mino, &e.attr);
		fuse_reply_entry(req, &e);
		return;
	}
	dir = famfs_ns_get(&fs->ns, parent);
	if (!dir || !dir->is_dir) {
		fuse_reply_err(req, dir ? ENOTDIR : ENOENT);
		return;
	}
	n = famfs_ns_lookup(&fs->ns, dir, name);
	/* The CLI may have just appended it: read the log tail and retry. */
	if (!n && fused_refresh(fs) > 0)
		n = famfs_ns_lookup(&fs->ns, dir, name);
	fs->lookups++;
	fs->lookup_misses += !n;
	if (!n && fs->dev_lost) {
		fuse_reply_err(req, EIO); /* it may be in the log we lost */
		return;
	}
	if (!n && fused_pending_lookup(req, fs, parent, name))
		return;
	if (!n) {
		/* Not cached, so a file logged a moment later is seen at once. */
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = n->ino;
	e.attr_timeout = ATTR_TIMEOUT;
	e.entry_timeout = ENTRY_TIMEOUT;
	fused_node_attr(fs, n, &e.attr);
	fuse_reply_entry(req, &e);
}

static void fused_getattr(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	struct stat st;
	int rc = attr_of(fs, ino, &st);

	(void)fi;
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st,
				ino == FUSED_META_STATUS_INO ||
						fused_is_pending(ino) ||
						fused_is_stage(ino) ?
					0 :
					ATTR_TIMEOUT);
}

/* Append one directory entry; false when the reply buffer is full. */
static bool add_dirent(fuse_req_t req, char *buf, size_t size, size_t *used,
		       const char *name, uint64_t ino, mode_t mode, off_t next)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t n = fuse_add_direntry(req, buf + *used, size - *used, name, &st,
				     next);

	if (n > size - *used)
		return false;
	*used += n;
	return true;
}

/*
 * Directory offsets: 1 ".", 2 "..", 3 ".meta" (root only), then a child
 * at ino + 3. Children are appended in log order, so their inode numbers
 * grow along the list and an offset says exactly where to resume. Files
 * being written through the mount (create.c) come last, at their own
 * inode + 3, above every logged one: a file logged while a directory is
 * read is listed once, as pending or as logged.
 */
static void fused_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			  off_t off, struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	const struct famfs_node *dir, *c;
	const char *pname;
	uint64_t pino;
	size_t used = 0;
	char *buf;

	(void)fi;
	if (off == 0 && ino != FUSED_META_DIR_INO)
		fused_refresh(fs);
	if (ino == FUSED_META_DIR_INO) {
		char namebuf[32];
		const char *name;
		uint64_t eino;
		mode_t mode;

		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		for (off_t i = off;
		     fused_meta_dirent(fs, (unsigned int)i, &name, namebuf,
				       sizeof(namebuf), &eino, &mode);
		     i++)
			if (!add_dirent(req, buf, size, &used, name, eino,
					mode, i + 1))
				break;
		fuse_reply_buf(req, buf, used);
		free(buf);
		return;
	}
	dir = famfs_ns_get(&fs->ns, ino);
	if (!dir || !dir->is_dir) {
		fuse_reply_err(req, dir ? ENOTDIR : ENOENT);
		return;
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off < 1 && !add_dirent(req, buf, size, &used, ".", dir->ino,
				   S_IFDIR, 1))
		goto out;
	if (off < 2 &&
	    !add_dirent(req, buf, size, &used, "..",
			dir->parent ? dir->parent->ino : FAMFS_ROOT_INO, S_IFDIR,
			2))
		goto out;
	if (off < 3 && dir->ino == FAMFS_ROOT_INO &&
	    !add_dirent(req, buf, size, &used, FUSED_META_DIR,
			FUSED_META_DIR_INO, S_IFDIR, 3))
		goto out;
	for (c = dir->first_child; c; c = c->next_sibling) {
		if ((off_t)(c->ino + 3) <= off)
			continue;
		/* Lookups find .meta, never this: do not list two. */
		if (dir->ino == FAMFS_ROOT_INO &&
		    !strcmp(c->name, FUSED_META_DIR))
			continue;
		if (!add_dirent(req, buf, size, &used, c->name, c->ino,
				c->is_dir ? S_IFDIR : S_IFREG,
				(off_t)(c->ino + 3)))
			goto out;
	}
	for (uint64_t after = off > 3 ? (uint64_t)off - 3 : 0;
	     fused_pending_next_in(fs, dir->ino, after, &pname, &pino);
	     after = pino)
		if (!add_dirent(req, buf, size, &used, pname, pino, S_IFREG,
				(off_t)(pino + 3)))
			break;
out:
	fuse_reply_buf(req, buf, used);
	free(buf);
}

/* The checks of an open of a .meta file; false after replying an error. */
static bool open_meta(fuse_req_t req, struct fused *fs, fuse_ino_t ino,
		      struct fuse_file_info *fi, bool wr)
{
	if (ino == FUSED_META_DIR_INO) {
		fuse_reply_err(req, EISDIR);
		return false;
	}
	/*
	 * The superblock and the log are root's: they hold every name,
	 * owner and device offset, also of files in directories others
	 * cannot search, and their lock orders the writers. Checked here
	 * too, so that the rule holds on a mount without
	 * default_permissions.
	 */
	if (ino != FUSED_META_STATUS_INO && fuse_req_ctx(req)->uid) {
		fuse_reply_err(req, EACCES);
		return false;
	}
	if (wr && (ino != FUSED_META_LOG_INO || fs->readonly)) {
		fuse_reply_err(req, EROFS);
		return false;
	}
	/* Built afresh on each read, so bypass the page cache. */
	fi->direct_io = ino == FUSED_META_STATUS_INO;
	if (ino != FUSED_META_STATUS_INO && fused_dev_lost(fs)) {
		fuse_reply_err(req, EIO);
		return false;
	}
	return true;
}

static void fused_open(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	const struct famfs_node *n = NULL;
	bool wr = (fi->flags & O_ACCMODE) != O_RDONLY;

	if (fused_is_meta(ino)) {
		if (!open_meta(req, fs, ino, fi, wr))
			return;
	} else if (fused_is_stage(ino)) {
		int rc = fused_stage_open(fs, req, ino, fi);

		if (rc)
			fuse_reply_err(req, rc);
		else
			fuse_reply_open(req, fi);
		return;
	} else if (fused_is_pending(ino)) {
		struct fused_pending *p = fused_pending_get(fs, ino);
		/*
		 * Logged between the opener's LOOKUP and this OPEN: on
		 * ESTALE the kernel looks the name up again and opens the
		 * logged file (a file lost by a restart: ENOENT then).
		 */
		int rc = p ? fused_pending_open(fs, p, fi) : ESTALE;

		if (rc)
			fuse_reply_err(req, rc);
		else
			fuse_reply_open(req, fi);
		return;
	} else {
		n = famfs_ns_get(&fs->ns, ino);
		if (!n) {
			fuse_reply_err(req, ENOENT);
			return;
		}
		if (n->is_dir) {
			fuse_reply_err(req, EISDIR);
			return;
		}
		if (n->overlaps) {
			fuse_reply_err(req, EUCLEAN); /* logged when applied */
			return;
		}
		if (wr && fs->data_ro) {
			fuse_reply_err(req, EROFS);
			return;
		}
		if (fi->flags & O_TRUNC && n->size) {
			fuse_reply_err(req, EPERM);
			return;
		}
		if (fused_dev_lost(fs)) {
			fuse_reply_err(req, EIO);
			return;
		}
	}
	/*
	 * Page cache on, so mmap works through FUSE. A client drops it at
	 * each open to see what the master wrote to the device meanwhile. On
	 * the master every write to a file comes through this mount unless a
	 * client mounted with client_rw (famfs-fused(8) says what that costs
	 * in fallback mode), so its page cache is kept; the log is the
	 * exception: other tools may repair it behind our back.
	 */
	fi->keep_cache = n && !fs->readonly;
	/*
	 * In famfs mode files have no page cache: dropping it at open would
	 * only unmap the file from everyone who maps it (the daemon itself
	 * maps .meta/.log on 7.3).
	 */
	if (fs->famfs_mode && ino != FUSED_META_STATUS_INO)
		fi->keep_cache = 1;
	/*
	 * Where the kernel still allows shared mmap of such files, a
	 * read-only mount reads past the page cache instead: every read(2)
	 * sees the device as it is now, and costs one copy, not two.
	 */
	if (n && fs->direct_reads)
		fi->direct_io = 1;
	fi->noflush = 1; /* nothing to do at a close of a logged file */
	fuse_reply_open(req, fi);
}

/* One buffer for all replies: the loop handles one request at a time. */
static void *reply_buf(size_t size)
{
	static void *buf;
	static size_t cap;

	if (size > cap) {
		void *p = realloc(buf, size);

		if (!p)
			return NULL;
		buf = p;
		cap = size;
	}
	return buf;
}

/* Bytes [off, off+size) of a device region of @len bytes at @base. */
static void read_region(fuse_req_t req, struct fused *fs, const uint8_t *base,
			uint64_t len, size_t size, off_t off)
{
	if ((uint64_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > len - (uint64_t)off)
		size = (size_t)(len - (uint64_t)off);
	if (fused_dev_lost(fs)) {
		fuse_reply_err(req, EIO);
		return;
	}
	famfs_dev_invalidate(&fs->dev, base + off, size);
	if (!fs->map_replies) {
		char *buf = reply_buf(size ? size : 1);

		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		memcpy(buf, base + off, size);
		if (fused_dev_lost(fs)) {
			fuse_reply_err(req, EIO);
			return;
		}
		base = (const uint8_t *)buf;
		off = 0;
	}
	fuse_reply_buf(req, (const char *)base + off, size);
}

/*
 * The common case, a read inside one extent (or one chunk of a strip):
 * reply straight from the device mapping, saving a copy per byte. Returns
 * false to let famfs_data_read handle the rest (ends, chunk crossings).
 */
static bool read_direct(fuse_req_t req, struct fused *fs,
			const struct famfs_node *n, size_t size, off_t off)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	uint64_t di, dev_off, contig;
	const struct famfs_dev *d;

	if (!fs->map_replies || (uint64_t)off >= n->size ||
	    size > n->size - (uint64_t)off)
		return false;
	if (famfs_fmap_resolve(&n->fmap, (uint64_t)off, &di, &dev_off,
			       &contig))
		return false;
	/* A missing device: the copying path says so. */
	d = famfs_dev_member(&fs->dev, di);
	if (!d || !d->base || contig < size || dev_off > d->size ||
	    size > d->size - dev_off)
		return false;
	famfs_dev_invalidate(d, d->base + dev_off, size);
	bv.buf[0].mem = d->base + dev_off;
	fuse_reply_data(req, &bv, 0);
	return true;
}

/*
 * The file whose bytes a READ or WRITE moves, or NULL after replying with
 * the error: not a regular file, its memory overlaps another's, famfs mode
 * (the kernel maps famfs files itself, so such a request is a bug), or the
 * device is gone.
 */
static const struct famfs_node *data_file(fuse_req_t req, struct fused *fs,
					  fuse_ino_t ino, const char *op)
{
	const struct famfs_node *n = famfs_ns_get(&fs->ns, ino);

	if (!n || n->is_dir) {
		fuse_reply_err(req, n ? EISDIR : ENOENT);
		return NULL;
	}
	if (n->overlaps) {
		fuse_reply_err(req, EUCLEAN);
		return NULL;
	}
	if (fs->famfs_mode) {
		fused_log(L_ERR, "%s of inode %llu in famfs mode: refused", op,
			  (unsigned long long)ino);
		fuse_reply_err(req, EIO);
		return NULL;
	}
	if (fused_dev_lost(fs)) {
		fuse_reply_err(req, EIO);
		return NULL;
	}
	return n;
}

/*
 * READ (into @rbuf) or WRITE (from @wbuf) of a file being written through
 * the mount (create.c)
 */
static void pending_io(fuse_req_t req, struct fused *fs, fuse_ino_t ino,
		       char *rbuf, const char *wbuf, size_t size, off_t off)
{
	struct fused_pending *p = fused_pending_get(fs, ino);
	ssize_t n = !p   ? fused_pending_gone(ino) :
		    wbuf ? fused_pending_write(fs, p, wbuf, size, (uint64_t)off) :
			   fused_pending_read(fs, p, rbuf, size, (uint64_t)off);

	if (n >= 0 && fused_dev_lost(fs))
		n = -EIO;
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (wbuf)
		fuse_reply_write(req, (size_t)n);
	else
		fuse_reply_buf(req, rbuf, (size_t)n);
}

/*
 * Say why a read failed, once a minute per file: a reader looping on a
 * file whose device is missing must not flood the journal.
 */
static void read_failed(fuse_ino_t ino)
{
	static fuse_ino_t last_ino;
	static time_t last;
	time_t now = time(NULL);

	if (ino == last_ino && now - last < 60)
		return;
	last_ino = ino;
	last = now;
	fused_log(L_ERR, "read of inode %llu: %s (said once a minute)",
		  (unsigned long long)ino, famfs_errmsg());
}

/*
 * Reply to a READ with bytes of @fm (a file of @fsize bytes) copied into
 * @buf: a file's, or (fallback mode) a .superblock.N read from wherever
 * this host found device N, EIO when it is missing here.
 */
static void reply_copied(fuse_req_t req, struct fused *fs, fuse_ino_t ino,
			 const struct famfs_omf_fmap *fm, uint64_t fsize,
			 char *buf, size_t size, off_t off)
{
	ssize_t got = famfs_data_read(&fs->dev, fm, fsize, (uint64_t)off, buf,
				      size);

	if (fused_dev_lost(fs)) {
		/* read from the zero pages that replaced it */
		fuse_reply_err(req, EIO);
		return;
	}
	if (got < 0) {
		read_failed(ino);
		fuse_reply_err(req, (int)-got);
		return;
	}
	fuse_reply_buf(req, buf, (size_t)got);
}

static void fused_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	const struct famfs_node *n;
	char *buf;

	(void)fi;
	fs->reads++;
	if (ino == FUSED_META_SB_INO) {
		read_region(req, fs, fs->dev.base, FAMFS_SB_REGION, size, off);
		return;
	}
	if (ino == FUSED_META_LOG_INO) {
		read_region(req, fs, (const uint8_t *)fs->dev.log,
			    fs->dev.log_len, size, off);
		return;
	}
	buf = reply_buf(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (ino == FUSED_META_STATUS_INO) {
		char text[4096];
		size_t len = fused_status(fs, text, sizeof(text));

		if ((size_t)off >= len)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, text + off,
				       len - (size_t)off < size ?
					       len - (size_t)off :
					       size);
		return;
	}
	if (fused_meta_sb_index(fs, ino) > 0) {
		struct famfs_omf_fmap fm;
		uint64_t len;

		fused_meta_fmap(fs, ino, &fm, &len);
		reply_copied(req, fs, ino, &fm, len, buf, size, off);
		return;
	}
	if (fused_is_pending(ino)) {
		pending_io(req, fs, ino, buf, NULL, size, off);
		return;
	}
	n = data_file(req, fs, ino, "READ");
	if (!n)
		return;
	if (fused_read_spliced(req, fs, n, size, off) ||
	    read_direct(req, fs, n, size, off))
		return;
	reply_copied(req, fs, ino, &n->fmap, n->size, buf, size, off);
}

static void fused_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	const struct famfs_node *n;
	ssize_t put;

	(void)fi;
	fs->writes++;
	if (fs->data_ro || (fs->readonly && ino == FUSED_META_LOG_INO)) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (ino == FUSED_META_LOG_INO) {
		uint8_t *log = (uint8_t *)fs->dev.log;

		if ((uint64_t)off > fs->dev.log_len ||
		    size > fs->dev.log_len - (uint64_t)off) {
			fuse_reply_err(req, EFBIG);
			return;
		}
		if (fused_dev_lost(fs)) {
			fuse_reply_err(req, EIO);
			return;
		}
		memcpy(log + off, buf, size);
		famfs_dev_flush(&fs->dev, log + off, size);
		if (fused_dev_lost(fs))
			fuse_reply_err(req, EIO);
		else
			fuse_reply_write(req, size);
		return;
	}
	if (fused_is_meta(ino)) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (fused_is_pending(ino)) {
		pending_io(req, fs, ino, NULL, buf, size, off);
		return;
	}
	n = data_file(req, fs, ino, "WRITE");
	if (!n)
		return;
	put = famfs_data_write(&fs->dev, &n->fmap, n->size, (uint64_t)off, buf,
			       size);
	if (fused_dev_lost(fs))
		put = -EIO; /* it went to the zero pages, not the device */
	if (put < 0) {
		fused_log(put == -EFBIG ? L_INFO : L_ERR,
			  "write of inode %llu: %s", (unsigned long long)ino,
			  famfs_errmsg());
		fuse_reply_err(req, (int)-put);
		return;
	}
	fuse_reply_write(req, (size_t)put);
}

/* A file not yet logged may still change its size, mode and owner. */
static void pending_setattr(fuse_req_t req, struct fused *fs, fuse_ino_t ino,
			    const struct stat *attr, int to_set)
{
	struct fused_pending *p = fused_pending_get(fs, ino);
	struct stat st;
	int rc = 0;

	if (to_set & FUSE_SET_ATTR_SIZE)
		rc = attr->st_size < 0 ? -EINVAL :
					 fused_pending_resize(fs, p,
							      (uint64_t)attr->st_size);
	if (!rc)
		rc = fused_pending_setattr(p, attr, to_set);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	fused_pending_attr(fs, p, &st);
	fuse_reply_attr(req, &st, 0);
}

static void fused_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			  int to_set, struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	const struct famfs_node *n;
	struct stat st;
	int rc = attr_of(fs, ino, &st);

	(void)fi;
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	if (fs->data_ro) {
		fuse_reply_err(req, EROFS);
		return;
	}
	/* one logged while a reader had it open is a logged file now */
	if (fused_is_pending(ino) && !fused_pending_retired(fs, ino)) {
		pending_setattr(req, fs, ino, attr, to_set);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_SIZE) && attr->st_size != st.st_size) {
		fused_log(L_INFO, "inode %llu: size change refused (famfs files have a fixed size)",
			  (unsigned long long)ino);
		fuse_reply_err(req, EPERM);
		return;
	}
	if (((to_set & FUSE_SET_ATTR_MODE) &&
	     (attr->st_mode & 07777) != (st.st_mode & 07777)) ||
	    ((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != st.st_uid) ||
	    ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != st.st_gid)) {
		/* a logged directory's may change; a file's is in its entry */
		n = ino == FAMFS_ROOT_INO ? NULL : famfs_ns_get(&fs->ns, ino);
		rc = n && n->is_dir ? fused_set_dir(fs, n, attr, to_set) : -EPERM;
		if (rc) {
			fuse_reply_err(req, -rc);
			return;
		}
		attr_of(fs, ino, &st);
	}
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void refuse(fuse_req_t req, const char *what, const char *hint)
{
	struct fused *fs = fs_of(req);

	if (fs->readonly) {
		fuse_reply_err(req, EROFS);
		return;
	}
	fused_log(L_INFO, "%s refused: famfs is append-only%s", what, hint);
	fuse_reply_err(req, EPERM);
}

static void fused_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fused *fs = fs_of(req);
	struct fused_pending *p = fused_pending_named(fs, parent, name);

	if (!p) {
		refuse(req, "unlink", "");
		return;
	}
	fused_pending_unlink(fs, p);
	fuse_reply_err(req, 0);
}

static void fused_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	refuse(req, "rmdir", "");
}

static void fused_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			 fuse_ino_t newparent, const char *newname,
			 unsigned int flags)
{
	struct fused *fs = fs_of(req);
	struct fused_pending *p = fused_pending_named(fs, parent, name);

	if (!p || (flags & ~RENAME_NOREPLACE)) {
		refuse(req, "rename",
		       p ? " (of the flags, only RENAME_NOREPLACE)" : "");
		return;
	}
	fuse_reply_err(req, fused_pending_rename(fs, p, newparent, newname,
						 flags & RENAME_NOREPLACE));
}

static void fused_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		       const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	refuse(req, "link", "");
}

static void fused_symlink(fuse_req_t req, const char *link,
			  fuse_ino_t parent, const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	refuse(req, "symlink", "");
}

static void fused_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			mode_t mode, dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	refuse(req, "mknod", "; create files with 'famfs creat' or 'famfs cp'");
}

static void fused_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fused *fs = fs_of(req);
	const struct famfs_alloc *a;
	uint64_t slots = famfs_log_slots(fs->dev.log_len);
	struct statvfs sv;

	(void)ino;
	if (fused_refresh(fs) < 0 && fused_dev_lost(fs)) {
		fuse_reply_err(req, EIO);
		return;
	}
	a = &fs->alloc;
	memset(&sv, 0, sizeof(sv));
	/* One block is one allocation unit: df then shows exact sizes. */
	sv.f_bsize = fs->g.alloc_unit;
	sv.f_frsize = fs->g.alloc_unit;
	sv.f_blocks = a->nunits;
	sv.f_bfree = famfs_alloc_free_units(a); /* missing devices: none */
	sv.f_bavail = fs->readonly ? 0 : sv.f_bfree;
	sv.f_files = slots;
	sv.f_ffree = slots > fs->ns.nindex ? slots - fs->ns.nindex : 0;
	sv.f_favail = fs->readonly ? 0 : sv.f_ffree;
	sv.f_namemax = FAMFS_PATH_LEN - 1;
	fuse_reply_statfs(req, &sv);
}

/*
 * Only the writer's open of a file being written asks for FLUSH (other
 * opens say FOPEN_NOFLUSH): whether its writer is dying of a signal is
 * known only at its closes. One a daemon before us had is lost: its
 * writer's close(2) says so.
 */
static void fused_flush(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	struct fused_pending *p = fused_pending_get(fs, ino);

	(void)fi;
	if (p)
		fused_pending_flush(p, fuse_req_ctx(req)->pid);
	fuse_reply_err(req, !p && fused_is_pending(ino) ?
				    -fused_pending_gone(ino) : 0);
}

static void fused_release(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	struct fused_pending *p = fused_pending_get(fs, ino);

	/* Reply first: a failed commit is the daemon's to log, not close's. */
	fuse_reply_err(req, 0);
	if (p)
		fused_pending_release(fs, p, fi);
}

/*
 * Inodes are numbers the log fixes, so there is nothing to drop; but the
 * hidden file that carries a pending file's bytes must be gone from the
 * kernel before that file is logged (stage.c).
 */
static void fused_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)nlookup;
	if (fused_is_stage(ino))
		fused_stage_forget(fs_of(req), ino);
	fuse_reply_none(req);
}

/*
 * fallocate of a file not yet logged reserves its memory (mode 0 also
 * makes it that long): what 'famfs creat -s' does. A logged file has all
 * its memory already: a range inside it is there, and it never grows.
 */
static void fused_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			    off_t off, off_t len, struct fuse_file_info *fi)
{
	struct fused *fs = fs_of(req);
	struct fused_pending *p = fused_pending_get(fs, ino);
	const struct famfs_node *n = famfs_ns_get(&fs->ns, ino);
	uint64_t end = (uint64_t)off + (uint64_t)len;
	int rc = 0;

	(void)fi;
	if (mode & ~FALLOC_FL_KEEP_SIZE)
		rc = EOPNOTSUPP;
	else if (off < 0 || len <= 0 || end < (uint64_t)off)
		rc = EINVAL;
	else if (p)
		rc = -fused_pending_fallocate(fs, p,
					      mode & FALLOC_FL_KEEP_SIZE, end);
	else if (fused_is_pending(ino))
		rc = (int)-fused_pending_gone(ino);
	else if (!n || n->is_dir)
		rc = n ? EISDIR : EBADF;
	else if (end > n->size)
		rc = EFBIG;
	fuse_reply_err(req, rc);
}

static void fused_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	struct fused_pending *p = fused_pending_get(fs_of(req), ino);

	/*
	 * A logged file's writes reach the device (and are flushed) before
	 * they are acked. A file being written exists only once it is logged
	 * at its last close, its bytes made durable just before: until then
	 * a crash leaves nothing that fsync could have kept. What fsync can
	 * do is take commit_delay= away from that close.
	 */
	(void)datasync;
	(void)fi;
	if (p)
		fused_pending_fsync(p);
	fuse_reply_err(req, 0);
}

/*
 * Where upstream's scripts find the monitoring socket: SHADOW/sock, SHADOW
 * being this attribute's value (on every inode, as upstream answers it).
 */
static void fused_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			   size_t size)
{
	struct fused *fs = fs_of(req);
	size_t len = strlen(fs->shadow);

	(void)ino;
	if (strcmp(name, "user.famfs.shadow") || !fs->monitor_sock[0])
		fuse_reply_err(req, ENODATA);
	else if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, fs->shadow, len);
}

const struct fuse_lowlevel_ops fused_ops = {
	.init = fused_init,
	.lookup = fused_lookup,
	.forget = fused_forget,
	.getattr = fused_getattr,
	.setattr = fused_setattr,
	.readdir = fused_readdir,
	.open = fused_open,
	.read = fused_read,
	.write = fused_write,
	.flush = fused_flush,
	.release = fused_release,
	.fallocate = fused_fallocate,
	.fsync = fused_fsync,
	.statfs = fused_statfs,
	.unlink = fused_unlink,
	.rmdir = fused_rmdir,
	.rename = fused_rename,
	.link = fused_link,
	.symlink = fused_symlink,
	.mknod = fused_mknod,
	.mkdir = fused_mkdir,
	.create = fused_create,
	.getxattr = fused_getxattr,
};
