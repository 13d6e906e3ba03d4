// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Keeping the namespace current. The log only grows, so each refresh
 * applies just the entries past the ones already applied; that is cheap
 * enough to do on every lookup miss and on a timer.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fused.h"

/*
 * Another writer changed a directory's mode or owner: the kernel drops
 * its copy of the attributes now, not at their timeout. Attributes only
 * (offset -1) take no inode lock: safe inside a request's handler.
 */
static void forget_attr(struct fused *fs, const char *relpath)
{
	const struct famfs_node *n = famfs_ns_resolve(&fs->ns, relpath);

	if (n && fs->se && fs->initialized)
		fuse_lowlevel_notify_inval_inode(fs->se, n->ino, -1, 0);
}

static int apply_entry(const struct famfs_omf_entry *e, uint64_t index,
		       void *arg)
{
	struct fused *fs = arg;
	uint64_t changes = fs->ns.dir_changes;
	int rc = famfs_ns_apply(&fs->ns, e, index);
	bool refused = famfs_ns_claim(&fs->ns, &fs->alloc, e, index);

	if (fs->ns.dir_changes != changes)
		forget_attr(fs, e->mkdir.relpath);

	/* A clash hides one entry on every host alike; keep going. */
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		fused_log(L_WARN, "log entry %llu skipped: %s",
			  (unsigned long long)index, famfs_errmsg());
	if (refused) {
		fs->overlapping++;
		fused_log(L_ERR, "log entry %llu (file \"%s\") uses memory of an earlier file or of the log: the file is refused (famfs fsck lists such files)",
			  (unsigned long long)index, e->file.relpath);
		fused_pending_clash(fs, e->file.relpath, &e->file.fmap);
	}
	return 0;
}

/* Say once what stopped the walk; again only when it changes. */
static void note_damage(struct fused *fs, uint64_t index, const char *why)
{
	if (fs->log_bad && fs->bad_index == index &&
	    !strcmp(fs->bad_why, why))
		return;
	fs->log_bad = true;
	fs->bad_index = index;
	snprintf(fs->bad_why, sizeof(fs->bad_why), "%s", why);
	fused_log(L_ERR, "the log of %s is damaged at entry %llu: %s; entries before it are served, run famfs fsck",
		  fs->devpath, (unsigned long long)index, why);
}

int fused_refresh(struct fused *fs)
{
	uint64_t before = fs->ns.nindex, next;
	struct famfs_walk walk;
	int rc;

	fs->refreshes++;
	/* The timer comes here too: notice a failed device soon. */
	fused_health_check(fs, false);
	if (fused_dev_lost(fs))
		return -EIO;
	if (!fs->dev.log)
		return 0; /* not mapped yet, or no more (metamap.c) */
	famfs_dev_invalidate(&fs->dev, fs->dev.log, sizeof(*fs->dev.log));
	rc = famfs_log_check_header(fs->dev.log, fs->dev.log_len);
	if (fused_dev_lost(fs))
		return -EIO; /* zeros, not damage: keep what we have */
	if (rc) {
		note_damage(fs, fs->ns.nindex, famfs_errmsg());
		return rc;
	}
	/* Nothing new: the common case, and no entry needs re-reading. */
	next = __atomic_load_n(&fs->dev.log->next_index, __ATOMIC_ACQUIRE);
	if (next == fs->ns.nindex)
		return 0;
	/* Another host wrote these entries: drop any stale cached copy. */
	if (next > fs->ns.nindex &&
	    next <= famfs_log_slots(fs->dev.log_len))
		famfs_dev_invalidate(&fs->dev,
				     famfs_log_entry(fs->dev.log, fs->ns.nindex),
				     (next - fs->ns.nindex) *
					     sizeof(struct famfs_omf_entry));
	rc = famfs_log_walk(fs->dev.log, fs->dev.log_len, &fs->g,
			    fs->ns.nindex, apply_entry, fs, &walk);
	/* Zero pages fail their checksum: the walk stopped at the loss. */
	if (fused_dev_lost(fs))
		return -EIO;
	if (walk.bad)
		note_damage(fs, fs->ns.nindex, walk.why);
	else if (rc == 0)
		fs->log_bad = false;
	if (fs->ns.nindex != before)
		fused_log(L_DEBUG, "log: applied entries %llu..%llu",
			  (unsigned long long)before,
			  (unsigned long long)fs->ns.nindex - 1);
	if (famfs_geo_ndevs(&fs->g) != fs->members_seen || fs->members_missing)
		fused_members_sync(fs);
	if (rc < 0 && !walk.bad)
		return rc;
	return (int)(fs->ns.nindex - before);
}

/* Looking for a device scans /dev: not on every lookup miss. */
#define MEMBERS_RETRY_MS 10000

void fused_members_sync(struct fused *fs)
{
	unsigned int flags = fs->data_ro ? 0 : FAMFS_OPEN_RW;
	uint32_t n = famfs_geo_ndevs(&fs->g);
	struct famfs_members res;
	uint64_t now = fused_now_ms();

	if (n == fs->members_seen &&
	    (!fs->members_missing || now < fs->members_retry))
		return;
	if (fs->bind_members)
		flags |= FAMFS_OPEN_BIND_DAX;
	fs->dev.members_mount = fs->mountpoint;
	famfs_dev_open_members(&fs->dev, flags, &res);
	if (res.missing && (res.missing != fs->members_missing ||
			    n != fs->members_seen))
		fused_log(L_ERR, "%u of the %u devices of this famfs are missing on this host; files on them fail with EIO (%s)",
			  res.missing, n, res.why);
	else if (!res.missing && n > 1 &&
		 (fs->members_missing || n != fs->members_seen))
		fused_log(L_NOTICE, "all %u devices of this famfs are open", n);
	/* nothing new goes where this host cannot write it */
	for (uint32_t i = 1; i < n; i++)
		famfs_alloc_set_absent(&fs->alloc, i,
				       !famfs_dev_member(&fs->dev, i));
	fs->members_seen = n;
	fs->members_missing = res.missing;
	fs->members_retry = now + MEMBERS_RETRY_MS;
}

int fused_load(struct fused *fs)
{
	famfs_sb_geometry(fs->dev.sb, &fs->g);
	famfs_ns_init(&fs->ns, 0755, 0, 0);
	if (famfs_alloc_init(&fs->alloc, &fs->g))
		return -ENOMEM;
	return fused_refresh(fs) < 0 && !fs->log_bad ? -EIO : 0;
}
