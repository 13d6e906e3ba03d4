// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How the files of a famfs use equal buckets of its primary device (fsck
 * -B): the view that interleaved allocation (creat -N/-B) takes of a
 * famfs of one device.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int mark_file(const struct famfs_omf_entry *e, uint64_t index, void *arg)
{
	(void)index;
	if (e->type == FAMFS_ENTRY_FILE)
		famfs_alloc_mark_fmap(arg, &e->file.fmap);
	if (e->type == FAMFS_ENTRY_ADD_DAXDEV)
		return famfs_alloc_add_dev(arg, &e->daxdev);
	return 0;
}

static void bucket(const struct famfs_alloc *a, uint64_t first, uint64_t n,
		   struct famfs_bucket_stats *b)
{
	uint64_t run = 0;

	memset(b, 0, sizeof(*b));
	b->size = n * a->alloc_unit;
	for (uint64_t u = first; u <= first + n; u++) {
		if (u < first + n && !famfs_alloc_used(a, 0, u)) {
			run++;
			continue;
		}
		if (u < first + n)
			b->used += a->alloc_unit;
		if (!run)
			continue;
		/* a run of free units ends here */
		b->free_runs++;
		b->free += run * a->alloc_unit;
		if (run * a->alloc_unit > b->largest_free)
			b->largest_free = run * a->alloc_unit;
		if (!b->smallest_free || run * a->alloc_unit < b->smallest_free)
			b->smallest_free = run * a->alloc_unit;
		run = 0;
	}
}

int famfs_bucket_stats(struct famfs_dev *dev, unsigned int n,
		       struct famfs_bucket_stats **outp, uint64_t *overhang)
{
	struct famfs_bucket_stats *out;
	struct famfs_geometry g;
	struct famfs_alloc a;
	struct famfs_walk w;
	uint64_t per;
	int rc;

	if (!dev->log)
		return famfs_fail(EINVAL, "%s has no valid famfs", dev->path);
	famfs_sb_geometry(dev->sb, &g);
	rc = famfs_alloc_init(&a, &g);
	if (rc)
		return rc;
	per = n ? a.dev[0].nunits / n : 0;
	if (!per) {
		famfs_alloc_release(&a);
		return famfs_fail(
			EINVAL,
			"%u buckets: the device has only %llu allocation units",
			n, (unsigned long long)a.dev[0].nunits);
	}
	/* only once @n is known to fit: never a huge allocation for a typo */
	out = calloc(n, sizeof(*out));
	if (!out) {
		famfs_alloc_release(&a);
		return famfs_fail(ENOMEM, "%u buckets: out of memory", n);
	}
	famfs_dev_invalidate(dev, dev->log, dev->log_len);
	/* a damaged log is fsck's to report; count what precedes it */
	famfs_log_walk(dev->log, dev->log_len, &g, 0, mark_file, &a, &w);
	for (unsigned int i = 0; i < n; i++)
		bucket(&a, i * per, per, &out[i]);
	*overhang = g.dev_size - (uint64_t)n * per * a.alloc_unit;
	famfs_alloc_release(&a);
	*outp = out;
	return 0;
}
