/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file being written through the master's mount: create.c keeps it,
 * stage.c copies its bytes to the device at its close where only the
 * kernel reaches the memory (fsdev_dax).
 */
#ifndef FAMFS_FUSED_PENDING_H
#define FAMFS_FUSED_PENDING_H

#include "fused.h"

struct fused_stage;

struct fused_pending {
	uint64_t ino;
	uint64_t parent; /* its directory's inode */
	char name[FAMFS_PATH_LEN];
	char relpath[FAMFS_PATH_LEN];
	uint32_t mode, uid, gid;
	uint64_t size;		    /* bytes written (or set by truncate) */
	struct famfs_omf_fmap fmap; /* reserved in fs->alloc */
	unsigned int opens;
	bool writing; /* open for writing: a second writer is refused */
	/*
	 * The task of the writer's last FLUSH, when it was being killed: a
	 * child killed with a copy of the writer's fd is not the writer, so
	 * the release of the writer's open decides (0: not killed).
	 */
	pid_t killed_pid;
	/*
	 * Closed, its bytes in place, waiting commit_delay= to be logged (a
	 * rename may still move it, an unlink drop it): when it is due, in
	 * ms; 0 while it is still being written.
	 */
	uint64_t commit_at;
	bool synced; /* fsync(2) came: no delay at its close */
	/*
	 * Logged while a reader had it open (on fs->retired): that reader
	 * still reads it here, under this inode, until its close.
	 */
	bool logged;
	/*
	 * Made by a user other than root: memory it reserves is zeroed, as
	 * it may hold what the device held before. Root (famfs creat) can
	 * read the device anyway, and gets preallocation as famfs creat -s
	 * always gave it, without a pass over the memory.
	 */
	bool scrub;
	/* why it will be freed, not logged, at its close (NULL: it will not) */
	const char *lost;
	/*
	 * Another writer logged a file in its memory: lost, and its memory
	 * is not given back (other hosts see it as that file's; a replay at
	 * the next start gets it right).
	 */
	bool clashed;
	/*
	 * Where the daemon cannot write the device (fs->meta_via_mount) the
	 * bytes wait in this memfd, whose holes read as zeros, until the last
	 * close; -1 elsewhere.
	 */
	int buf_fd;
	/* the end of the furthest byte a WRITE stored (0: none did) */
	uint64_t written_end;
	/*
	 * Bit per 2 MiB of the file: its memory is known to be zeros (zeroed
	 * here, not written since). Zeroing skips those, so a file grown
	 * and shrunk again and again costs what was written, not its size.
	 */
	uint64_t *zeroed;
	size_t zeroed_words;
	/* its bytes on their way to the device (stage.c), or NULL */
	struct fused_stage *stage;
	struct fused_pending *next;
};

/* Where the last page of @p ends: a mapping shows all of that page. */
static inline uint64_t fused_pending_page_end(const struct fused_pending *p)
{
	return (p->size + 4095) & ~(uint64_t)4095;
}

/*
 * @p is closed and its bytes are in place: log it as one FILE entry now,
 * or once commit_delay= has passed. If @rc, or it was lost meanwhile,
 * give its memory back instead.
 */
void fused_pending_finish(struct fused *fs, struct fused_pending *p, int rc);
/*
 * The clone of our mount held while any file is pending (a directory fd),
 * or -1 if it could not be made.
 */
int fused_pending_tree(void);

/* ---- stage.c ---- */
/*
 * Copy @p's bytes from its memfd to the memory reserved for it, through a
 * hidden file of our own mount, on a thread of its own; @p is finished
 * (logged) once that file is gone from the kernel. 0, or -errno.
 */
int fused_stage_start(struct fused *fs, struct fused_pending *p);
/* Finish @p if its copy is done and nothing holds it any more. */
void fused_stage_try_finish(struct fused *fs, struct fused_pending *p);

#endif
