// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Building the namespace of a famfs for readers: the tools that list, map
 * or check files need the tree the log describes, but must not take the
 * log lock (that would stall the master's appends) nor change anything.
 */
#include <errno.h>

#include "internal.h"
#include "namespace.h"

struct load {
	struct famfs_ns *ns;
	uint64_t skipped;
};

static int load_entry(const struct famfs_omf_entry *e, uint64_t index,
		      void *arg)
{
	struct load *l = arg;
	int rc = famfs_ns_apply(l->ns, e, index);

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
	int rc;

	famfs_ns_init(ns, 0755, 0, 0);
	rc = famfs_dev_log_walk(dev, load_entry, &l, walk);
	if (skipped)
		*skipped = l.skipped;
	return rc;
}
