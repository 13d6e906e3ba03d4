// SPDX-License-Identifier: GPL-2.0-or-later
/* Appending files and directories to the log. */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "writer.h"

static int replay_entry(const struct famfs_omf_entry *e, uint64_t index,
			void *arg)
{
	struct famfs_writer *w = arg;
	int rc = famfs_ns_apply(w->ns, e, index);

	famfs_ns_claim(w->ns, w->alloc, e, index);
	/* A name clash hides one entry; only running out of memory stops us. */
	return rc == -ENOMEM ? rc : 0;
}

static int may_write(const struct famfs_dev *dev);

/* What every writer must be: the master, on a writable log. */
static int may_write(const struct famfs_dev *dev)
{
	if (!dev->log)
		return famfs_fail(EINVAL, "%s has no valid famfs", dev->path);
	if (famfs_role(dev) != FAMFS_ROLE_MASTER)
		return famfs_fail(EPERM, "this host is a client of %s; only the master host can create files and directories",
				  dev->path);
	if (!dev->writable)
		return famfs_fail(EROFS, "%s is open read-only", dev->path);
	return 0;
}

int famfs_writer_begin(struct famfs_writer *w, struct famfs_dev *dev)
{
	struct famfs_walk walk;
	int rc;

	memset(w, 0, sizeof(*w));
	w->dev = dev;
	w->ns = &w->own_ns;
	w->alloc = &w->own_alloc;
	rc = may_write(dev);
	if (!rc)
		rc = famfs_dev_lock_log(dev);
	if (rc) {
		w->dev = NULL; /* nothing to end */
		return rc;
	}
	famfs_sb_geometry(dev->sb, &w->g);
	famfs_ns_init(w->ns, 0755, 0, 0);
	rc = famfs_alloc_init(w->alloc, &w->g);
	if (rc)
		goto fail;
	rc = famfs_log_walk(dev->log, dev->log_len, &w->g, 0, replay_entry, w,
			    &walk);
	if (rc) {
		if (walk.bad)
			rc = famfs_fail(EUCLEAN, "the log is damaged (%s); run famfs fsck",
					walk.why);
		goto fail;
	}
	w->next = walk.committed;
	return 0;
fail:
	famfs_writer_end(w);
	return rc;
}

int famfs_writer_lend(struct famfs_writer *w, struct famfs_dev *dev,
		      struct famfs_ns *ns, struct famfs_alloc *alloc)
{
	int rc;

	memset(w, 0, sizeof(*w));
	rc = may_write(dev);
	if (!rc)
		rc = famfs_dev_trylock(dev);
	if (rc)
		return rc;
	w->dev = dev;
	w->ns = ns;
	w->alloc = alloc;
	w->borrowed = true;
	famfs_dev_geometry(dev, &w->g);
	return 0;
}

int famfs_writer_ready(struct famfs_writer *w)
{
	uint64_t tail;

	famfs_dev_invalidate(w->dev, w->dev->log, sizeof(*w->dev->log));
	if (famfs_log_check_header(w->dev->log, w->dev->log_len))
		return -EUCLEAN;
	tail = __atomic_load_n(&w->dev->log->next_index, __ATOMIC_ACQUIRE);
	if (tail != w->ns->nindex)
		return famfs_fail(EUCLEAN, "the log is damaged at entry %llu; run famfs fsck",
				  (unsigned long long)w->ns->nindex);
	w->next = tail;
	return 0;
}

void famfs_writer_end(struct famfs_writer *w)
{
	if (!w->dev)
		return;
	if (!w->borrowed) {
		famfs_ns_free(w->ns);
		famfs_alloc_release(w->alloc);
	}
	famfs_dev_unlock(w->dev);
	w->dev = NULL;
}

/* Check the path can be created, as the namespace would on replay. */
int famfs_writer_check_path(struct famfs_writer *w, const char *relpath)
{
	const char *slash;
	char parent[FAMFS_PATH_LEN];
	const struct famfs_node *dir;

	while (*relpath == '/')
		relpath++;
	if (strlen(relpath) >= FAMFS_PATH_LEN)
		return famfs_fail(ENAMETOOLONG, "\"%s\" is longer than the %d bytes a famfs path may have",
				  relpath, FAMFS_PATH_LEN - 1);
	if (!*relpath)
		return famfs_fail(EEXIST, "the root directory exists already");
	if (!famfs_name_is_clean(relpath))
		return famfs_fail(EINVAL, "a name may not contain control characters");
	if (famfs_relpath_check(relpath))
		return famfs_fail(EINVAL, "cannot create \"%s\": %s", relpath,
				  famfs_errmsg());
	/* A mount serves its metadata there; an entry would be hidden. */
	if (!strcmp(relpath, FAMFS_META_NAME) ||
	    !strncmp(relpath, FAMFS_META_NAME "/", sizeof(FAMFS_META_NAME)))
		return famfs_fail(EINVAL, "cannot create \"%s\": the name %s is the mount's metadata directory",
				  relpath, FAMFS_META_NAME);
	if (famfs_ns_resolve(w->ns, relpath))
		return famfs_fail(EEXIST, "\"%s\" exists already", relpath);
	slash = strrchr(relpath, '/');
	if (slash) {
		memcpy(parent, relpath, (size_t)(slash - relpath));
		parent[slash - relpath] = '\0';
		dir = famfs_ns_resolve(w->ns, parent);
		if (!dir)
			return famfs_fail(ENOENT, "directory \"%s\" does not exist", parent);
		if (!dir->is_dir)
			return famfs_fail(ENOTDIR, "\"%s\" is not a directory", parent);
	}
	return 0;
}

static int append(struct famfs_writer *w, struct famfs_omf_entry *e)
{
	uint64_t index = w->next;
	struct famfs_omf_entry copy;
	/* an entry in the log is in our namespace too: room for it first */
	int rc = famfs_ns_reserve(w->ns);

	if (!rc)
		rc = famfs_log_append_at(w->dev, e, index);
	if (rc)
		return rc;
	w->next = index + 1;
	memcpy(&copy, e, sizeof(copy));
	return famfs_ns_apply(w->ns, &copy, index);
}

static void set_path(char dst[FAMFS_PATH_LEN], const char *relpath)
{
	while (*relpath == '/')
		relpath++;
	strncpy(dst, relpath, FAMFS_PATH_LEN - 1);
}

/* A file entry for @relpath; the caller fills in its map. */
static void file_entry(struct famfs_omf_entry *e, const char *relpath,
		       uint64_t size, uint32_t flags, uint32_t mode,
		       uint32_t uid, uint32_t gid)
{
	memset(e, 0, sizeof(*e));
	e->type = FAMFS_ENTRY_FILE;
	e->file.size = size;
	e->file.flags = flags;
	e->file.mode = mode & 07777;
	e->file.uid = uid;
	e->file.gid = gid;
	set_path(e->file.relpath, relpath);
}

static int append_mkdir(struct famfs_writer *w, const char *relpath,
			uint32_t mode, uint32_t uid, uint32_t gid)
{
	struct famfs_omf_entry e;

	memset(&e, 0, sizeof(e));
	e.type = FAMFS_ENTRY_MKDIR;
	e.mkdir.mode = mode & 07777;
	e.mkdir.uid = uid;
	e.mkdir.gid = gid;
	set_path(e.mkdir.relpath, relpath);
	return append(w, &e);
}

int famfs_writer_mkdir(struct famfs_writer *w, const char *relpath,
		       uint32_t mode, uint32_t uid, uint32_t gid)
{
	int rc = famfs_writer_check_path(w, relpath);

	return rc ? rc : append_mkdir(w, relpath, mode, uid, gid);
}

int famfs_writer_set_dir(struct famfs_writer *w, const char *relpath,
		       uint32_t mode, uint32_t uid, uint32_t gid)
{
	const struct famfs_node *dir = famfs_ns_resolve(w->ns, relpath);

	if (!dir)
		return famfs_fail(ENOENT, "\"%s\" does not exist", relpath);
	if (dir == &w->ns->root)
		return famfs_fail(EPERM, "the root directory is not in the log: its mode and owner cannot change");
	if (!dir->is_dir)
		return famfs_fail(ENOTDIR, "\"%s\" is not a directory",
				  relpath);
	return append_mkdir(w, relpath, mode, uid, gid);
}

int famfs_writer_creat(struct famfs_writer *w, const char *relpath,
		       uint64_t size, uint32_t mode, uint32_t uid,
		       uint32_t gid, const struct famfs_interleave *il,
		       const struct famfs_node **out)
{
	struct famfs_omf_entry e;
	int rc = famfs_writer_check_path(w, relpath);

	if (rc)
		return rc;
	if (size == 0)
		return famfs_fail(EINVAL, "\"%s\": famfs files are pre-allocated and need a size > 0",
				  relpath);
	file_entry(&e, relpath, size, FAMFS_FILE_ALL_HOSTS_RW, mode, uid, gid);
	if (il) {
		rc = famfs_interleave_check(il, &w->g);
		if (!rc)
			rc = famfs_alloc_interleaved(w->alloc, size, il,
						     &e.file.fmap);
	} else {
		rc = famfs_alloc_contig(w->alloc, size, &e.file.fmap);
	}
	if (rc)
		return rc;
	rc = append(w, &e);
	/*
	 * If the append failed the units stay marked in our map; that only
	 * makes this writer more careful, and the next one starts afresh.
	 */
	if (!rc && out)
		*out = famfs_ns_resolve(w->ns, relpath);
	return rc;
}

int famfs_writer_clone(struct famfs_writer *w, const char *src_relpath,
		       const char *dst_relpath)
{
	const struct famfs_node *src = famfs_ns_resolve(w->ns, src_relpath);
	struct famfs_omf_entry e;
	int rc;

	if (!src)
		return famfs_fail(ENOENT, "\"%s\" does not exist", src_relpath);
	if (src->is_dir)
		return famfs_fail(EISDIR, "\"%s\" is a directory; only files can be cloned",
				  src_relpath);
	rc = famfs_writer_check_path(w, dst_relpath);
	if (rc)
		return rc;
	file_entry(&e, dst_relpath, src->size, src->flags, src->mode, src->uid,
		   src->gid);
	e.file.fmap = src->fmap;
	return append(w, &e);
}

int famfs_writer_log_file(struct famfs_writer *w, const char *relpath,
			  uint64_t size, uint32_t mode, uint32_t uid,
			  uint32_t gid, const struct famfs_omf_fmap *fm)
{
	struct famfs_omf_entry e;
	int rc = famfs_writer_check_path(w, relpath);

	if (rc)
		return rc;
	file_entry(&e, relpath, size, FAMFS_FILE_ALL_HOSTS_RW, mode, uid, gid);
	e.file.fmap = *fm;
	return append(w, &e);
}
