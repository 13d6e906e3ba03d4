// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Building the namespace of a famfs for readers: the tools that list, map
 * or check files need the tree the log describes, but must not take the
 * log lock (that would stall the master's appends) nor change anything.
 * Memory is claimed in log order as the daemon claims it, so a file whose
 * memory an earlier one owns is flagged as the daemon would refuse it.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "namespace.h"

struct load {
	struct famfs_ns *ns;
	struct famfs_alloc alloc;
	uint64_t skipped;
};

static int load_entry(const struct famfs_omf_entry *e, uint64_t index,
		      void *arg)
{
	struct load *l = arg;
	int rc = famfs_ns_apply(l->ns, e, index);

	famfs_ns_claim(l->ns, &l->alloc, e, index);
	/* A clash hides only its own entry (as on every host); go on. */
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		l->skipped++;
	return 0;
}

int famfs_ns_load(struct famfs_dev *dev, struct famfs_ns *ns,
		  struct famfs_walk *walk, uint64_t *skipped)
{
	struct load l = { .ns = ns };
	struct famfs_geometry g;
	int rc;

	memset(walk, 0, sizeof(*walk));
	famfs_ns_init(ns, 0755, 0, 0);
	if (skipped)
		*skipped = 0;
	if (!dev->log)
		return famfs_fail(EINVAL, "%s has no valid famfs", dev->path);
	famfs_sb_geometry(dev->sb, &g);
	rc = famfs_alloc_init(&l.alloc, &g);
	if (rc)
		return rc;
	rc = famfs_dev_log_walk(dev, load_entry, &l, walk);
	famfs_alloc_release(&l.alloc);
	if (skipped)
		*skipped = l.skipped;
	return rc;
}
