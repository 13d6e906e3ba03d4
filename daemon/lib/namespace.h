/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The namespace a log describes: directories and files, built by applying
 * log entries in order. Inode numbers are stable on every host that plays
 * the same log: 1 for the root, log index + 2 for everything else.
 */
#ifndef FAMFS_NAMESPACE_H
#define FAMFS_NAMESPACE_H

#include "libfamfs.h"

#define FAMFS_ROOT_INO 1
/*
 * A mount's daemon numbers a file being written through the mount, not
 * yet in the log, from here up (famfs-fused's create.c); famfs creat
 * waits until the name it made leads below it: logged.
 */
#define FAMFS_PENDING_INO_BASE (1ULL << 41)

struct famfs_node {
	uint64_t ino;
	char name[FAMFS_PATH_LEN]; /* last path component */
	bool is_dir;
	uint32_t mode; /* permission bits only */
	uint32_t uid, gid;
	uint64_t size;	/* files */
	uint32_t flags; /* FAMFS_FILE_* */
	struct famfs_omf_fmap fmap; /* files: checked copy from the log */
	/*
	 * Files: some of its memory belongs to an earlier file or to the
	 * log (a cross-link, which only a damaged or forged log holds). Such
	 * a file is never served: two files must not map the same memory.
	 */
	bool overlaps;
	struct famfs_node *parent;
	struct famfs_node *first_child, *last_child, *next_sibling;
	uint64_t nchildren;
	struct famfs_node *hash_next; /* (parent, name) hash chain */
};

struct famfs_ns {
	struct famfs_node root;
	struct famfs_node **by_index; /* log index -> node (NULL: none) */
	uint64_t nindex;	      /* entries applied: next index to apply */
	uint64_t cap;
	struct famfs_node **hash;
	uint64_t nhash;
	uint64_t files, dirs;
	uint64_t dir_changes; /* MKDIR entries that changed a directory */
	struct famfs_node *spare; /* famfs_ns_reserve()'s, for the next entry */
};

void famfs_ns_init(struct famfs_ns *ns, uint32_t root_mode, uint32_t uid,
		   uint32_t gid);
void famfs_ns_free(struct famfs_ns *ns);
/*
 * Apply a checked entry at @index (== ns->nindex). A path whose parent is
 * missing or not a directory, or that exists already, returns -ENOENT,
 * -ENOTDIR or -EEXIST with famfs_errmsg() set; the entry is then skipped
 * (the index still advances) so one bad entry hides only itself. A MKDIR
 * of an existing directory is no clash: it changes the directory's mode
 * and owner to the entry's.
 */
int famfs_ns_apply(struct famfs_ns *ns, const struct famfs_omf_entry *e,
		   uint64_t index);
/*
 * Room for one more entry: the next famfs_ns_apply() cannot run out of
 * memory. A writer makes it before it appends, so that an entry in the
 * log is never missing from its namespace. 0 or -ENOMEM.
 */
int famfs_ns_reserve(struct famfs_ns *ns);
/*
 * Claim in @a the memory of @e, the file entry just applied at @index
 * (whether or not it made a node: its memory is taken all the same; an
 * entry the namespace has not taken yet claims nothing). When some of it
 * was claimed before and the entry made a node, flag the node as
 * overlapping and return true. Call it after every famfs_ns_apply(), in
 * log order: the first file to claim memory keeps it. An ADD_DAXDEV
 * entry adds its device to @a.
 */
bool famfs_ns_claim(struct famfs_ns *ns, struct famfs_alloc *a,
		    const struct famfs_omf_entry *e, uint64_t index);
struct famfs_node *famfs_ns_get(const struct famfs_ns *ns, uint64_t ino);
struct famfs_node *famfs_ns_lookup(const struct famfs_ns *ns,
				   const struct famfs_node *dir,
				   const char *name);
/* Resolve a relative path ("a/b/c"); NULL when any part is missing. */
struct famfs_node *famfs_ns_resolve(const struct famfs_ns *ns,
				    const char *relpath);
/* The path of a node relative to the root, into @buf. */
void famfs_ns_path(const struct famfs_node *n, char *buf, size_t len);

/*
 * Build @ns from every committed entry of @dev's log, for readers: no lock
 * is taken and nothing is written. Entries that clash (EEXIST, missing
 * parent) are skipped as on replay and counted in *@skipped (may be NULL);
 * a file whose memory an earlier file or the log holds is flagged
 * overlaps (famfs_ns_claim()), as every daemon flags and refuses it.
 * On a damaged log the walk stops at the bad entry: @walk says where and
 * why, @ns keeps what came before it, and the return is negative. The
 * caller frees @ns with famfs_ns_free() in every case.
 */
int famfs_ns_load(struct famfs_dev *dev, struct famfs_ns *ns,
		  struct famfs_walk *walk, uint64_t *skipped);

#endif
