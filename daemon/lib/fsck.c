// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Checking a famfs: the superblock, the log header, every committed entry,
 * the namespace the entries build, and that no two files share memory.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "namespace.h"

__attribute__((format(printf, 2, 3))) static void problem(struct famfs_fsck *r,
							    const char *fmt, ...)
{
	va_list ap;

	if (r->nproblems == FAMFS_FSCK_MAX_PROBLEMS) {
		r->problems_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(r->problems[r->nproblems++], sizeof(r->problems[0]), fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void warning(struct famfs_fsck *r,
							  const char *fmt, ...)
{
	va_list ap;

	if (r->nwarnings == FAMFS_FSCK_MAX_WARNINGS) {
		r->warnings_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(r->warnings[r->nwarnings++], sizeof(r->warnings[0]), fmt, ap);
	va_end(ap);
}

/*
 * A log is written by whoever can write the device, so a set-user-ID
 * file in it is worth naming even though mounts are nosuid by default.
 */
static void check_setid(struct famfs_fsck *r, const struct famfs_omf_file *f,
			uint64_t index)
{
	bool u = f->mode & S_ISUID, g = f->mode & S_ISGID;
	char who[48];

	if (!u && !g)
		return;
	r->setid_files++;
	if (u && g)
		snprintf(who, sizeof(who), "uid %u, gid %u", f->uid, f->gid);
	else
		snprintf(who, sizeof(who), "%s %u", u ? "uid" : "gid",
			 u ? f->uid : f->gid);
	warning(r, "log entry %llu: \"%s\" is %s (mode %04o, %s)",
		(unsigned long long)index, f->relpath,
		u && g ? "set-user-ID and set-group-ID" :
		u      ? "set-user-ID" :
			 "set-group-ID",
		f->mode & 07777, who);
}

/*
 * Is entry @e at @index intact apart from what the superblock says of the
 * device: a valid CRC and sequence number, and valid against the
 * loosest geometry any superblock could give this device (its real
 * size, the smallest allocation unit, the shortest log)? Such an entry
 * is what its writer wrote; a superblock field that no longer fits it is
 * the thing to fix, never the entry.
 */
static bool intact_but_for_superblock(const struct famfs_dev *dev,
				      const struct famfs_geometry *g,
				      const struct famfs_omf_entry *e,
				      uint64_t index)
{
	struct famfs_geometry loose = *g; /* the devices the log added */

	loose.dev_size = dev->size > dev->sb->daxdev.size ? dev->size :
							     dev->sb->daxdev.size;
	loose.alloc_unit = 4096;
	loose.data_start = FAMFS_LOG_OFFSET + FAMFS_LOG_MIN_LEN;
	return famfs_entry_check(e, index, &loose) == 0;
}

struct scan {
	struct famfs_fsck *r;
	struct famfs_alloc alloc;
	struct famfs_ns ns;
};

static int scan_entry(const struct famfs_omf_entry *e, uint64_t index,
		      void *arg)
{
	struct scan *s = arg;
	struct famfs_fsck *r = s->r;
	uint64_t changes = s->ns.dir_changes;
	int rc = famfs_ns_apply(&s->ns, e, index);
	const char *name = e->type == FAMFS_ENTRY_FILE ? e->file.relpath :
			   e->type == FAMFS_ENTRY_MKDIR ? e->mkdir.relpath :
							  "";

	if (rc == -ENOMEM)
		return rc;
	if (rc)
		problem(r, "%s", famfs_errmsg());
	if (!famfs_name_is_clean(name) && !r->control_names++) {
		r->control_first = index;
		snprintf(r->control_example, sizeof(r->control_example), "%s",
			 name);
	}

	switch (e->type) {
	case FAMFS_ENTRY_FILE:
		r->files++;
		r->bytes_in_files += e->file.size;
		check_setid(r, &e->file, index);
		if (famfs_alloc_mark_fmap(&s->alloc, &e->file.fmap))
			problem(r, "log entry %llu (file \"%s\"): its memory overlaps memory already used by another file or by the log",
				(unsigned long long)index, e->file.relpath);
		break;
	case FAMFS_ENTRY_MKDIR:
		/* a second one of a directory changes its mode and owner */
		r->dirs += s->ns.dir_changes == changes;
		break;
	case FAMFS_ENTRY_ADD_DAXDEV:
		r->daxdevs++;
		if (famfs_alloc_add_dev(&s->alloc, &e->daxdev))
			return -ENOMEM;
		break;
	case FAMFS_ENTRY_VOID:
		r->voided++;
		break;
	}
	return 0;
}

/*
 * Secondary @i of the famfs mounted at @dev->path, for a host that cannot
 * open its node (7.3's fsdev_dax hides it once a mount holds it): its
 * superblock as the mount serves it, .meta/.superblock.N, which the
 * kernel reads from the device it was given, checked as on a device.
 */
static int check_member_through_mount(const struct famfs_dev *dev,
				      const struct famfs_geometry *g,
				      uint32_t i)
{
	struct famfs_omf_superblock sb;
	char p[PATH_MAX + 32];
	int rc;

	snprintf(p, sizeof(p), "%s/.meta/.superblock.%u", dev->path, i);
	rc = famfs_sb_read_file(p, &sb);
	if (rc)
		return rc;
	rc = famfs_sb_check_secondary(&sb, g->dev[i].size, dev->sb,
				      &g->dev[i]);
	if (rc)
		return famfs_fail(-rc, "%s: %s", p, famfs_errmsg());
	return 0;
}

/*
 * Each secondary device: found on this host by its uuid, with a superblock
 * of this famfs. One that is not is a problem: its files cannot be read.
 */
static void check_member(struct famfs_dev *dev,
			 const struct famfs_geometry *g, uint32_t i,
			 struct famfs_fsck *r)
{
	struct famfs_fsck_dev *d = &r->devs[i];
	char key[32], served[PATH_MAX + 32], why[512];
	const char *path = served;

	if (i == 0 || !famfs_dev_open_member(dev, i, 0)) {
		path = famfs_dev_member(dev, i)->path;
	} else if (dev->kind == FAMFS_DEV_META) {
		snprintf(why, sizeof(why), "%s", famfs_errmsg());
		if (check_member_through_mount(dev, g, i)) {
			r->missing++;
			problem(r, "%s; through the mount: %s", why,
				famfs_errmsg());
			return;
		}
		/* the name the daemon found it by, else the file we read */
		snprintf(key, sizeof(key), "member.%u", i);
		if (famfs_mount_status(dev->path, key, served, sizeof(served)))
			snprintf(served, sizeof(served),
				 "%s/.meta/.superblock.%u", dev->path, i);
	} else {
		r->missing++;
		problem(r, "%s", famfs_errmsg());
		return;
	}
	d->present = true;
	/* a device path longer than this is cut: it is shown, not used */
	memcpy(d->path, path, strnlen(path, sizeof(d->path) - 1));
}

int famfs_fsck(struct famfs_dev *dev, struct famfs_fsck *r)
{
	struct famfs_geometry g;
	struct famfs_walk walk;
	struct scan s = { .r = r };
	int rc;

	memset(r, 0, sizeof(*r));
	r->dev_size = dev->size;
	r->role = famfs_role(dev);
	rc = famfs_sb_check(dev->sb, dev->size);
	if (rc) {
		char primary[PATH_MAX];

		problem(r, "superblock: %s", famfs_errmsg());
		/* a secondary: say what to check instead */
		if (rc == -EMEDIUMTYPE &&
		    !famfs_find_primary(dev->sb->fs_uuid, primary,
					sizeof(primary)))
			problem(r, "check its file system by %s: famfs fsck %s",
				primary, primary);
		else if (rc == -EMEDIUMTYPE)
			problem(r, "%s", famfs_errmsg());
		return 0;
	}
	r->sb_valid = true;
	if (dev->sb->daxdev.size < dev->size)
		warning(r, "the superblock records a device of %llu bytes, but %s has %llu: the rest is not used (a superblock made for a smaller device, or a damaged one)",
			(unsigned long long)dev->sb->daxdev.size, dev->path,
			(unsigned long long)dev->size);
	r->alloc_unit = dev->sb->alloc_unit;
	r->log_len = dev->sb->log_len;
	memcpy(r->fs_uuid, dev->sb->fs_uuid, FAMFS_UUID_LEN);
	memcpy(r->system_uuid, dev->sb->system_uuid, FAMFS_UUID_LEN);

	famfs_dev_invalidate(dev, dev->log, dev->log_len);
	rc = famfs_log_check_header(dev->log, dev->log_len);
	if (rc) {
		problem(r, "log: %s", famfs_errmsg());
		return 0;
	}
	r->log_valid = true;
	r->log_slots = famfs_log_slots(dev->log_len);

	famfs_sb_geometry(dev->sb, &g);
	rc = famfs_alloc_init(&s.alloc, &g);
	if (rc)
		return rc;
	famfs_ns_init(&s.ns, 0755, 0, 0);
	rc = famfs_log_walk(dev->log, dev->log_len, &g, 0, scan_entry, &s,
			    &walk);
	r->log_used = walk.committed;
	if (rc == -ENOMEM)
		goto out;
	if (walk.bad) {
		struct famfs_omf_entry e;

		problem(r, "%s", walk.why);
		memcpy(&e, famfs_log_entry(dev->log, walk.valid), sizeof(e));
		if (intact_but_for_superblock(dev, &g, &e, walk.valid))
			problem(r, "log entry %llu is intact (valid CRC): only the superblock's geometry (device size %llu, the device has %llu bytes) does not fit it; fix the superblock: --repair keeps the entry",
				(unsigned long long)walk.valid,
				(unsigned long long)dev->sb->daxdev.size,
				(unsigned long long)dev->size);
		if (walk.committed > walk.valid + 1)
			problem(r, "%llu committed log entries after entry %llu were not checked",
				(unsigned long long)(walk.committed - walk.valid - 1),
				(unsigned long long)walk.valid);
	}
	r->ndevs = s.alloc.ndevs;
	for (uint32_t i = 0; i < s.alloc.ndevs; i++) {
		struct famfs_fsck_dev *d = &r->devs[i];

		memcpy(d->uuid, g.dev[i].uuid, FAMFS_UUID_LEN);
		d->size = famfs_geo_dev_size(&g, i);
		d->used = s.alloc.dev[i].used * g.alloc_unit;
		d->free = (s.alloc.dev[i].nunits - s.alloc.dev[i].used) *
			  g.alloc_unit;
		check_member(dev, &g, i, r);
	}
	r->space_used = s.alloc.used * g.alloc_unit;
	r->space_free = (s.alloc.nunits - s.alloc.used) * g.alloc_unit;
	r->overlap_bytes = s.alloc.overlaps * g.alloc_unit;
	rc = 0;
out:
	famfs_ns_free(&s.ns);
	famfs_alloc_release(&s.alloc);
	return rc;
}

int famfs_fsck_status(const struct famfs_fsck *r)
{
	if (!r->sb_valid || !r->log_valid)
		return FAMFS_FSCK_NOFS;
	return r->nproblems || r->problems_dropped ? FAMFS_FSCK_ERRORS :
						     FAMFS_FSCK_CLEAN;
}

/* Overwrite the damaged entry at @index with a void one. */
static void void_entry(struct famfs_dev *dev, uint64_t index)
{
	struct famfs_omf_entry *slot = famfs_log_entry(dev->log, index);
	struct famfs_omf_entry e;

	memset(&e, 0, sizeof(e));
	e.seqnum = index;
	e.type = FAMFS_ENTRY_VOID;
	e.crc = famfs_entry_crc(&e);
	memcpy(slot, &e, sizeof(e));
	famfs_dev_flush(dev, slot, sizeof(*slot));
}

/*
 * Repair keeps every intact entry. A damaged entry followed by an intact
 * one (a valid CRC and the sequence number of its slot) is not a torn
 * append: it is voided in place, so the indices of the entries after it
 * do not change. The damaged entries after the last intact one are a
 * torn tail and are dropped. An entry that fails only against the
 * superblock's geometry is intact: it is kept as it is, and so is
 * everything before it.
 */
int famfs_fsck_repair(struct famfs_dev *dev, struct famfs_repair *rep)
{
	struct famfs_geometry g, g0;
	struct famfs_walk walk;
	uint64_t i, last_good;
	int rc;

	memset(rep, 0, sizeof(*rep));
	if (famfs_role(dev) != FAMFS_ROLE_MASTER)
		return famfs_fail(EPERM, "only the master host may repair the log of %s",
				  dev->path);
	if (!dev->writable || !dev->log)
		return famfs_fail(EROFS, "%s is not open for writing", dev->path);
	rc = famfs_dev_lock_log(dev);
	if (rc)
		return rc;
	famfs_sb_geometry(dev->sb, &g);
	rc = famfs_log_walk(dev->log, dev->log_len, &g, 0, NULL, NULL, &walk);
	if (!walk.bad) {
		rc = 0; /* nothing to repair */
		goto out;
	}
	/* entries [0, last_good) are intact or will be void */
	last_good = walk.valid;
	g0 = g;
	for (i = walk.valid; i < walk.committed; i++) {
		struct famfs_omf_entry e;

		memcpy(&e, famfs_log_entry(dev->log, i), sizeof(e));
		if (famfs_entry_check(&e, i, &g) == 0) {
			last_good = i + 1;
			if (e.type == FAMFS_ENTRY_ADD_DAXDEV)
				famfs_geo_add(&g, &e.daxdev);
		} else if (intact_but_for_superblock(dev, &g, &e, i)) {
			if (!rep->kept++)
				rep->first_kept = i;
			last_good = i + 1;
		}
	}
	g = g0;
	for (i = walk.valid; i < last_good; i++) {
		struct famfs_omf_entry e;

		memcpy(&e, famfs_log_entry(dev->log, i), sizeof(e));
		if (famfs_entry_check(&e, i, &g) == 0) {
			if (e.type == FAMFS_ENTRY_ADD_DAXDEV)
				famfs_geo_add(&g, &e.daxdev);
			continue;
		}
		if (intact_but_for_superblock(dev, &g, &e, i))
			continue;
		if (!rep->voided++)
			rep->first_voided = i;
		void_entry(dev, i);
	}
	rep->dropped = walk.committed - last_good;
	if (rep->dropped) {
		dev->log->next_seqnum = last_good;
		__atomic_store_n(&dev->log->next_index, last_good,
				 __ATOMIC_RELEASE);
		famfs_dev_flush(dev, dev->log, sizeof(*dev->log));
	}
	rc = 0;
out:
	famfs_dev_unlock(dev);
	return rc;
}
