// SPDX-License-Identifier: GPL-2.0-or-later
/* Building the directory tree from log entries. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "namespace.h"

void famfs_ns_init(struct famfs_ns *ns, uint32_t root_mode, uint32_t uid,
		   uint32_t gid)
{
	memset(ns, 0, sizeof(*ns));
	ns->root.ino = FAMFS_ROOT_INO;
	ns->root.is_dir = true;
	ns->root.mode = root_mode & 07777;
	ns->root.uid = uid;
	ns->root.gid = gid;
}

void famfs_ns_free(struct famfs_ns *ns)
{
	for (uint64_t i = 0; i < ns->nindex; i++)
		free(ns->by_index[i]);
	free(ns->by_index);
	free(ns->hash);
	free(ns->spare);
	memset(ns, 0, sizeof(*ns));
}

static uint64_t hash_of(uint64_t parent_ino, const char *name)
{
	uint64_t h = 1469598103934665603ULL ^ parent_ino; /* FNV-1a */

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 1099511628211ULL;
	return h;
}

static int grow_hash(struct famfs_ns *ns)
{
	uint64_t n = ns->nhash ? ns->nhash * 2 : 256;
	struct famfs_node **h = calloc(n, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (uint64_t i = 0; i < ns->nindex; i++) {
		struct famfs_node *x = ns->by_index[i];
		uint64_t b;

		if (!x)
			continue;
		b = hash_of(x->parent->ino, x->name) % n;
		x->hash_next = h[b];
		h[b] = x;
	}
	free(ns->hash);
	ns->hash = h;
	ns->nhash = n;
	return 0;
}

struct famfs_node *famfs_ns_lookup(const struct famfs_ns *ns,
				   const struct famfs_node *dir,
				   const char *name)
{
	struct famfs_node *x;

	if (!ns->nhash || !dir || !dir->is_dir)
		return NULL;
	x = ns->hash[hash_of(dir->ino, name) % ns->nhash];
	for (; x; x = x->hash_next)
		if (x->parent == dir && !strcmp(x->name, name))
			return x;
	return NULL;
}

/* Walk @relpath's directories; returns the parent and the final name. */
static struct famfs_node *walk_parent(const struct famfs_ns *ns,
				      const char *relpath, const char **leaf,
				      int *err)
{
	struct famfs_node *dir = (struct famfs_node *)&ns->root;
	char comp[FAMFS_PATH_LEN];
	const char *p = relpath;

	for (;;) {
		size_t n = strcspn(p, "/");

		if (!p[n]) {
			*leaf = p;
			return dir;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		dir = famfs_ns_lookup(ns, dir, comp);
		if (!dir) {
			*err = ENOENT;
			return NULL;
		}
		if (!dir->is_dir) {
			*err = ENOTDIR;
			return NULL;
		}
		p += n + 1;
	}
}

struct famfs_node *famfs_ns_resolve(const struct famfs_ns *ns,
				    const char *relpath)
{
	const char *leaf;
	int err;
	struct famfs_node *dir;

	while (*relpath == '/')
		relpath++;
	if (!*relpath)
		return (struct famfs_node *)&ns->root;
	dir = walk_parent(ns, relpath, &leaf, &err);
	return dir ? famfs_ns_lookup(ns, dir, leaf) : NULL;
}

bool famfs_ns_claim(struct famfs_ns *ns, struct famfs_alloc *a,
		    const struct famfs_omf_entry *e, uint64_t index)
{
	struct famfs_node *n;

	/* Not applied yet (ENOMEM before it was taken): the next walk will. */
	if (index < ns->nindex && e->type == FAMFS_ENTRY_ADD_DAXDEV)
		famfs_alloc_add_dev(a, &e->daxdev);
	if (index >= ns->nindex || e->type != FAMFS_ENTRY_FILE ||
	    !famfs_alloc_mark_fmap(a, &e->file.fmap))
		return false;
	n = famfs_ns_get(ns, index + 2);
	if (!n || n->is_dir)
		return false;
	n->overlaps = true;
	return true;
}

struct famfs_node *famfs_ns_get(const struct famfs_ns *ns, uint64_t ino)
{
	if (ino == FAMFS_ROOT_INO)
		return (struct famfs_node *)&ns->root;
	if (ino < 2 || ino - 2 >= ns->nindex)
		return NULL;
	return ns->by_index[ino - 2];
}

void famfs_ns_path(const struct famfs_node *n, char *buf, size_t len)
{
	/* Paths fit in FAMFS_PATH_LEN, so they are at most this deep. */
	const struct famfs_node *chain[FAMFS_PATH_LEN / 2 + 1];
	size_t depth = 0, used = 0;

	for (; n && n->parent && depth < sizeof(chain) / sizeof(chain[0]);
	     n = n->parent)
		chain[depth++] = n;
	if (len)
		buf[0] = '\0';
	while (depth--) {
		int w = snprintf(buf + used, len - used, "%s%s", used ? "/" : "",
				 chain[depth]->name);

		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
}

static int grow_slots(struct famfs_ns *ns)
{
	uint64_t cap = ns->cap ? ns->cap * 2 : 64;
	struct famfs_node **p = realloc(ns->by_index, cap * sizeof(*p));

	if (!p)
		return famfs_fail(ENOMEM, "out of memory for the namespace");
	ns->by_index = p;
	ns->cap = cap;
	return 0;
}

static int add_slot(struct famfs_ns *ns, struct famfs_node *node)
{
	if (ns->nindex == ns->cap && grow_slots(ns))
		return -ENOMEM;
	ns->by_index[ns->nindex++] = node;
	return 0;
}

/* Does one more node need a larger hash table? (famfs_ns_apply grows it) */
static bool hash_full(const struct famfs_ns *ns, uint64_t more)
{
	return ns->files + ns->dirs + more > ns->nhash / 2;
}

int famfs_ns_reserve(struct famfs_ns *ns)
{
	if (ns->nindex == ns->cap && grow_slots(ns))
		return -ENOMEM;
	if (hash_full(ns, 1) && grow_hash(ns))
		return famfs_fail(ENOMEM, "out of memory for the namespace");
	if (!ns->spare)
		ns->spare = calloc(1, sizeof(*ns->spare));
	if (!ns->spare)
		return famfs_fail(ENOMEM, "out of memory for the namespace");
	return 0;
}

/*
 * A MKDIR of a directory that exists gives it the entry's mode and owner:
 * how a chmod or chown of a logged directory is logged. Upstream's tools
 * see a directory that exists and keep the first entry's.
 */
static int change_dir(struct famfs_ns *ns, struct famfs_node *dir,
		      const struct famfs_omf_mkdir *md)
{
	dir->mode = md->mode & 07777;
	dir->uid = md->uid;
	dir->gid = md->gid;
	ns->dir_changes++;
	return add_slot(ns, NULL);
}

int famfs_ns_apply(struct famfs_ns *ns, const struct famfs_omf_entry *e,
		   uint64_t index)
{
	const char *relpath, *leaf;
	struct famfs_node *dir, *node;
	int err = 0;

	if (index != ns->nindex)
		return famfs_fail(EINVAL, "log entry %llu applied out of order (expected %llu)",
				  (unsigned long long)index,
				  (unsigned long long)ns->nindex);
	if (e->type != FAMFS_ENTRY_FILE && e->type != FAMFS_ENTRY_MKDIR)
		return add_slot(ns, NULL);

	relpath = e->type == FAMFS_ENTRY_FILE ? e->file.relpath :
						e->mkdir.relpath;
	dir = walk_parent(ns, relpath, &leaf, &err);
	node = dir ? famfs_ns_lookup(ns, dir, leaf) : NULL;
	if (e->type == FAMFS_ENTRY_MKDIR && node && node->is_dir)
		return change_dir(ns, node, &e->mkdir);
	if (!dir || node) {
		if (!err)
			err = EEXIST;
		if (add_slot(ns, NULL))
			return -ENOMEM;
		return famfs_fail(err, "log entry %llu: cannot create \"%s\": %s",
				  (unsigned long long)index, relpath,
				  err == EEXIST ? "it exists already" :
				  err == ENOTDIR ? "a parent is not a directory" :
						   "its parent directory does not exist");
	}

	node = ns->spare ? ns->spare : calloc(1, sizeof(*node));
	ns->spare = NULL;
	if (!node)
		return famfs_fail(ENOMEM, "out of memory for the namespace");
	node->ino = index + 2;
	snprintf(node->name, sizeof(node->name), "%s", leaf);
	node->parent = dir;
	if (e->type == FAMFS_ENTRY_FILE) {
		node->mode = e->file.mode & 07777;
		node->uid = e->file.uid;
		node->gid = e->file.gid;
		node->size = e->file.size;
		node->flags = e->file.flags;
		node->fmap = e->file.fmap;
		ns->files++;
	} else {
		node->is_dir = true;
		node->mode = e->mkdir.mode & 07777;
		node->uid = e->mkdir.uid;
		node->gid = e->mkdir.gid;
		ns->dirs++;
	}
	if (add_slot(ns, node)) {
		free(node);
		return -ENOMEM;
	}
	if (dir->last_child)
		dir->last_child->next_sibling = node;
	else
		dir->first_child = node;
	dir->last_child = node;
	dir->nchildren++;
	if (hash_full(ns, 0)) {
		if (grow_hash(ns))
			return famfs_fail(ENOMEM, "out of memory for the namespace");
	} else {
		uint64_t b = hash_of(dir->ino, node->name) % ns->nhash;

		node->hash_next = ns->hash[b];
		ns->hash[b] = node;
	}
	return 0;
}
