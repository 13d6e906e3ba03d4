/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Creating files and directories: the only way anything is added to a
 * famfs. A writer holds the log lock from begin to end, replays the log
 * once, and keeps its namespace and free map current as it appends, so
 * copying a tree of many files replays the log only once.
 */
#ifndef FAMFS_WRITER_H
#define FAMFS_WRITER_H

#include "libfamfs.h"
#include "namespace.h"

struct famfs_writer {
	struct famfs_dev *dev;
	struct famfs_geometry g;
	/* what the log says: the writer's own, or a mount daemon's */
	struct famfs_ns *ns;
	struct famfs_alloc *alloc;
	uint64_t next; /* the log's tail as we left it: the next index */
	bool borrowed; /* ns and alloc are the caller's */
	struct famfs_ns own_ns;
	struct famfs_alloc own_alloc;
};

/*
 * Lock the log and replay it. -EPERM on a client, -EUCLEAN when the log
 * has a bad entry (nothing is appended after damage: fsck first).
 */
int famfs_writer_begin(struct famfs_writer *w, struct famfs_dev *dev);
/*
 * The writer of the daemon that serves @dev's mount, on the namespace and
 * allocation map it keeps current itself: no replay. The lock is tried,
 * never waited for (-EBUSY: another writer holds it), as the daemon must
 * go on serving that writer. The caller brings @ns up to the log's tail
 * after this returns; famfs_writer_ready() checks it did.
 */
int famfs_writer_lend(struct famfs_writer *w, struct famfs_dev *dev,
		      struct famfs_ns *ns, struct famfs_alloc *alloc);
/* -EUCLEAN unless @w's namespace holds every entry of the log */
int famfs_writer_ready(struct famfs_writer *w);
void famfs_writer_end(struct famfs_writer *w);

int famfs_writer_mkdir(struct famfs_writer *w, const char *relpath,
		       uint32_t mode, uint32_t uid, uint32_t gid);
/*
 * Give the logged directory @relpath a new mode and owner: one more MKDIR
 * entry of the same path (famfs_ns_apply()). -ENOENT, -ENOTDIR.
 */
int famfs_writer_set_dir(struct famfs_writer *w, const char *relpath,
		       uint32_t mode, uint32_t uid, uint32_t gid);
/*
 * Can @relpath be created: a clean name of at most FAMFS_PATH_LEN - 1
 * bytes, not .meta, new, in an existing directory? 0 or -errno (said).
 */
int famfs_writer_check_path(struct famfs_writer *w, const char *relpath);
/*
 * Log a file over memory the caller allocated from w->alloc (@fm), as
 * the daemon does for a file written through the mount.
 */
int famfs_writer_log_file(struct famfs_writer *w, const char *relpath,
			  uint64_t size, uint32_t mode, uint32_t uid,
			  uint32_t gid, const struct famfs_omf_fmap *fm);
/*
 * Allocate @size bytes (contiguous, or striped when @il is non-NULL) and
 * log a file. On success *@out is its node in w->ns.
 */
int famfs_writer_creat(struct famfs_writer *w, const char *relpath,
		       uint64_t size, uint32_t mode, uint32_t uid,
		       uint32_t gid, const struct famfs_interleave *il,
		       const struct famfs_node **out);

/*
 * Log @dst_relpath as a second file over the memory of the file
 * @src_relpath (same size, map, mode and owner): upstream's "clone", a
 * deliberate cross-link for testing fsck and what serves the files.
 */
int famfs_writer_clone(struct famfs_writer *w, const char *src_relpath,
		       const char *dst_relpath);

#endif
