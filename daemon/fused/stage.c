// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A file written through the mount, where only the kernel reaches the
 * device's memory (fsdev_dax, fs->meta_via_mount): its bytes wait in a
 * memfd (create.c), and at its last close go to the memory reserved for
 * it through a hidden file of our own mount, ".meta/.stage.N":
 *
 *  - a thread of ours opens it in a private clone of the mount; the loop
 *    answers that thread alone (its LOOKUP and OPEN), and GET_FMAP with
 *    the reserved extents, so the kernel maps the memory to that file;
 *  - the thread writes every byte (the kernel serves the writes: no
 *    upcall), closes it and asks the kernel to drop its name;
 *  - the kernel evicts the inode, which gives up its hold on the memory
 *    (patch 0005: each page belongs to one file), and sends FORGET;
 *  - only then is the FILE entry logged: an open of the logged file can
 *    no longer find the memory held by the hidden one.
 * Until then the name still leads to the pending file, read from the
 * memfd, and no other host sees anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pending.h"

#define STAGE_CHUNK (1u << 20)

struct fused_stage {
	/* set before the thread starts, then read-only */
	uint64_t ino; /* of the hidden file */
	char name[32];
	uint64_t size;	   /* its size: the pending file's, to a page */
	uint64_t data_end; /* the pending file's size */
	bool write_all;	   /* else only [data_end, size): preallocation */
	int buf_fd;
	int tree; /* create.c's clone of the mount, held while this is pending */
	struct fused *fs;
	pthread_t thread;
	/* shared with the thread */
	int tid;       /* it alone may look the file up */
	int looked_up; /* the loop answered its LOOKUP: a FORGET will come */
	int rc;	       /* the thread's result, read after its wake-up */
	char err[160];
	/* the loop's */
	bool done, forgotten;
};

static int wake[2] = {-1, -1};

bool fused_is_stage(uint64_t ino)
{
	return ino >= FUSED_STAGE_INO_BASE;
}

/* The pending file whose hidden file is @ino, or NULL. */
static struct fused_pending *of_ino(struct fused *fs, uint64_t ino)
{
	for (struct fused_pending *p = fs->pending; p; p = p->next)
		if (p->stage && p->stage->ino == ino)
			return p;
	return NULL;
}

/*
 * write(2), not a mapping: the kernel's copy into device-dax memory
 * bypasses the CPU cache (DAXDEV_NOCACHE), so other hosts read the bytes
 * once the entry is logged, and a memory error fails the write with EIO
 * instead of killing the daemon.
 */
static int copy_out(struct fused_stage *s, int fd)
{
	char *buf = malloc(STAGE_CHUNK);
	uint64_t off = s->write_all ? 0 : s->data_end;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	while (!rc && off < s->size) {
		size_t want = s->size - off < STAGE_CHUNK
				      ? (size_t)(s->size - off)
				      : STAGE_CHUNK;
		ssize_t got = s->write_all
				      ? pread(s->buf_fd, buf, want, (off_t)off)
				      : 0;

		if (got < 0) {
			rc = -errno;
			break;
		}
		/* past the bytes written: zeros, never what the memory held */
		memset(buf + got, 0, want - (size_t)got);
		if (pwrite(fd, buf, want, (off_t)off) != (ssize_t)want)
			rc = errno ? -errno : -EIO;
		off += want;
	}
	free(buf);
	return rc;
}

static void *stage_thread(void *arg)
{
	struct fused_stage *s = arg;
	char path[64];
	struct stat st, root;
	int tree = s->tree, own = -1, fd = -1, rc = 0;

	__atomic_store_n(&s->tid, (int)gettid(), __ATOMIC_RELEASE);
	snprintf(path, sizeof(path), "%s/%s", FUSED_META_DIR, s->name);
	/* without create.c's clone (it could not be made), our own */
	if (tree < 0)
		tree = own = fused_mount_clone(s->fs);
	if (tree < 0) {
		rc = -errno;
		snprintf(s->err, sizeof(s->err), "cannot clone the mount: %s",
			 strerror(errno));
	} else {
		fd = openat(tree, path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			snprintf(s->err, sizeof(s->err), "cannot open %s: %s",
				 path, strerror(errno));
		}
	}
	/*
	 * Our own file, answered by our loop: never another mount's. (Only
	 * this thread may stat our files: the loop would wait for itself.)
	 */
	if (!rc && (fstat(tree, &root) || fstat(fd, &st) ||
		    st.st_dev != root.st_dev || st.st_ino != s->ino ||
		    !__atomic_load_n(&s->looked_up, __ATOMIC_ACQUIRE))) {
		rc = -ESTALE;
		snprintf(s->err, sizeof(s->err),
			 "%s is not the file this daemon serves", path);
	}
	if (!rc) {
		rc = copy_out(s, fd);
		if (rc)
			snprintf(s->err, sizeof(s->err),
				 "writing the device's memory: %s",
				 strerror(-rc));
	}
	if (fd >= 0 && close(fd) && !rc) {
		rc = -errno;
		snprintf(s->err, sizeof(s->err), "close: %s", strerror(errno));
	}
	/* Its name goes: the inode is evicted and its memory let go. */
	if (__atomic_load_n(&s->looked_up, __ATOMIC_ACQUIRE))
		fuse_lowlevel_notify_inval_entry(s->fs->se, FUSED_META_DIR_INO,
						 s->name, strlen(s->name));
	if (own >= 0)
		close(own);
	s->rc = rc;
	if (write(wake[1], &s->ino, sizeof(s->ino)) != sizeof(s->ino)) {
		/* the loop is gone: nobody to tell */
	}
	return NULL;
}

int fused_stage_start(struct fused *fs, struct fused_pending *p)
{
	struct fused_stage *s;
	int rc;

	/*
	 * The loop drains the pipe without waiting; a thread's report must
	 * never be lost to a full pipe, so its end blocks.
	 */
	if (wake[0] < 0 && (pipe2(wake, O_CLOEXEC) ||
			    fcntl(wake[0], F_SETFL, O_NONBLOCK)))
		return -errno;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ino = FUSED_STAGE_INO_BASE + (p->ino - FUSED_PENDING_INO_BASE);
	snprintf(s->name, sizeof(s->name), ".stage.%llu",
		 (unsigned long long)s->ino);
	s->data_end = p->size;
	s->size = fused_pending_page_end(p);
	s->write_all = p->written_end || p->scrub;
	s->buf_fd = p->buf_fd;
	s->tree = fused_pending_tree();
	s->fs = fs;
	p->stage = s;
	rc = -pthread_create(&s->thread, NULL, stage_thread, s);
	if (rc) {
		p->stage = NULL;
		free(s);
	}
	return rc;
}

void fused_stage_try_finish(struct fused *fs, struct fused_pending *p)
{
	struct fused_stage *s = p->stage;
	int rc;

	/* a reader may have it open: its memfd serves it until its close */
	if (!s->done ||
	    (__atomic_load_n(&s->looked_up, __ATOMIC_ACQUIRE) && !s->forgotten))
		return;
	rc = s->rc;
	if (rc)
		fused_log(L_ERR, "%s: its bytes could not reach the device: %s",
			  p->relpath, s->err);
	p->stage = NULL;
	free(s);
	fused_pending_finish(fs, p, rc);
}

int fused_stage_wake_fd(void)
{
	return wake[0];
}

void fused_stage_reap(struct fused *fs)
{
	uint64_t ino;
	struct fused_pending *p;

	while (read(wake[0], &ino, sizeof(ino)) == sizeof(ino)) {
		p = of_ino(fs, ino);
		if (!p)
			continue;
		pthread_join(p->stage->thread, NULL);
		p->stage->done = true;
		fused_stage_try_finish(fs, p);
	}
}

void fused_stage_forget(struct fused *fs, uint64_t ino)
{
	struct fused_pending *p = of_ino(fs, ino);

	if (!p)
		return;
	p->stage->forgotten = true;
	fused_stage_try_finish(fs, p);
}

/* The pending file staged as @ino, for its own thread's request only. */
static struct fused_pending *staged_for(struct fused *fs, fuse_req_t req,
					uint64_t ino)
{
	struct fused_pending *p = of_ino(fs, ino);
	int tid;

	if (!p || p->stage->done)
		return NULL;
	/*
	 * 0 until the thread has said who it is, and the pid FUSE gives a
	 * task outside the daemon's pid namespace: never a match.
	 */
	tid = __atomic_load_n(&p->stage->tid, __ATOMIC_ACQUIRE);
	return tid > 0 && fuse_req_ctx(req)->pid == (pid_t)tid ? p : NULL;
}

bool fused_stage_lookup(fuse_req_t req, struct fused *fs, const char *name)
{
	static const char prefix[] = ".stage.";
	struct fuse_entry_param e = {0};
	struct fused_pending *p;
	char *end;
	uint64_t ino;

	if (strncmp(name, prefix, sizeof(prefix) - 1))
		return false;
	ino = strtoull(name + sizeof(prefix) - 1, &end, 10);
	p = *end ? NULL : staged_for(fs, req, ino);
	if (!p || strcmp(name, p->stage->name))
		return false;
	e.ino = ino;
	/* Nothing cached: the name is dropped as soon as it is closed. */
	e.attr_timeout = e.entry_timeout = 0;
	fused_stage_attr(fs, ino, &e.attr);
	__atomic_store_n(&p->stage->looked_up, 1, __ATOMIC_RELEASE);
	fuse_reply_entry(req, &e);
	return true;
}

int fused_stage_attr(struct fused *fs, uint64_t ino, struct stat *st)
{
	struct fused_pending *p = of_ino(fs, ino);

	if (!p)
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_size = (off_t)p->stage->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)(famfs_fmap_capacity(&p->fmap) / 512);
	return 0;
}

int fused_stage_open(struct fused *fs, fuse_req_t req, uint64_t ino,
		     struct fuse_file_info *fi)
{
	if (!staged_for(fs, req, ino))
		return ENOENT;
	fi->keep_cache = 1;
	fi->noflush = 1;
	return 0;
}

int fused_stage_fmap(struct fused *fs, uint64_t ino, struct famfs_omf_fmap *fm,
		     uint64_t *size)
{
	struct fused_pending *p = of_ino(fs, ino);

	if (!p || p->stage->done)
		return -ENOENT;
	*fm = p->fmap;
	*size = p->stage->size;
	return 0;
}
