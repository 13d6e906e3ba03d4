// SPDX-License-Identifier: GPL-2.0-or-later
/* The metadata log: header, entry validation, walking and appending. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

uint64_t famfs_log_slots(uint64_t log_len)
{
	if (log_len <= FAMFS_LOG_ENTRIES_OFFSET)
		return 0;
	return (log_len - FAMFS_LOG_ENTRIES_OFFSET) /
	       sizeof(struct famfs_omf_entry);
}

void famfs_log_init(struct famfs_omf_log *log, uint64_t log_len)
{
	memset(log, 0, sizeof(*log));
	log->magic = FAMFS_LOG_MAGIC;
	log->len = log_len;
	log->last_index = famfs_log_slots(log_len) - 1;
	log->crc = famfs_log_header_crc(log);
}

int famfs_log_check_header(const struct famfs_omf_log *log, uint64_t log_len)
{
	uint64_t slots = famfs_log_slots(log_len);

	if (log->magic != FAMFS_LOG_MAGIC)
		return famfs_fail(ENOENT, "log header at 0x%llx: bad magic 0x%llx",
				  (unsigned long long)FAMFS_LOG_OFFSET,
				  (unsigned long long)log->magic);
	if (log->crc != famfs_log_header_crc(log))
		return famfs_fail(EBADMSG, "log header CRC mismatch: stored 0x%llx, computed 0x%x",
				  (unsigned long long)log->crc,
				  famfs_log_header_crc(log));
	if (log->len != log_len)
		return famfs_fail(EUCLEAN, "log header length %llu differs from the superblock's %llu",
				  (unsigned long long)log->len,
				  (unsigned long long)log_len);
	if (log->last_index + 1 != slots)
		return famfs_fail(EUCLEAN, "log header last index %llu does not fit a %llu-byte log (%llu slots)",
				  (unsigned long long)log->last_index,
				  (unsigned long long)log_len,
				  (unsigned long long)slots);
	if (log->next_index > slots)
		return famfs_fail(EUCLEAN, "log header claims %llu entries but the log has room for %llu",
				  (unsigned long long)log->next_index,
				  (unsigned long long)slots);
	return 0;
}

/*
 * A relative path of at most FAMFS_PATH_LEN-1 bytes, made of non-empty
 * components other than "." and "..".
 */
int famfs_relpath_check(const char *p)
{
	size_t len = strnlen(p, FAMFS_PATH_LEN);
	const char *c;

	if (len == FAMFS_PATH_LEN)
		return famfs_fail(ENAMETOOLONG, "path is not NUL-terminated within %d bytes",
				  FAMFS_PATH_LEN);
	if (len == 0 || p[0] == '/')
		return famfs_fail(EUCLEAN, "path \"%s\" is not a relative path", p);
	for (c = p; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return famfs_fail(EUCLEAN, "path \"%s\" has an empty, \".\" or \"..\" component",
					  p);
		c += n;
		if (*c == '/')
			c++;
	}
	if (p[len - 1] == '/')
		return famfs_fail(EUCLEAN, "path \"%s\" ends with '/'", p);
	return 0;
}

static int check_entry_path(const char *p, uint64_t index)
{
	int rc = famfs_relpath_check(p);

	if (rc)
		return famfs_fail(-rc, "log entry %llu: %s",
				  (unsigned long long)index, famfs_errmsg());
	return 0;
}

int famfs_entry_check(const struct famfs_omf_entry *e, uint64_t index,
		      const struct famfs_geometry *g)
{
	int rc;

	if (e->crc != famfs_entry_crc(e))
		return famfs_fail(EBADMSG, "log entry %llu: CRC mismatch: stored 0x%llx, computed 0x%x",
				  (unsigned long long)index,
				  (unsigned long long)e->crc, famfs_entry_crc(e));
	if (e->seqnum != index)
		return famfs_fail(EUCLEAN, "log entry %llu: sequence number %llu, expected %llu",
				  (unsigned long long)index,
				  (unsigned long long)e->seqnum,
				  (unsigned long long)index);

	switch (e->type) {
	case FAMFS_ENTRY_FILE:
		rc = check_entry_path(e->file.relpath, index);
		if (rc)
			return rc;
		/* upstream's cp may record S_IFREG; nothing else fits */
		if ((e->file.mode & ~07777u) & ~(uint32_t)S_IFREG)
			return famfs_fail(EUCLEAN, "log entry %llu: file mode 0%o is not a regular file's",
					  (unsigned long long)index, e->file.mode);
		rc = famfs_fmap_check(&e->file.fmap, e->file.size, g);
		if (rc)
			return famfs_fail(-rc, "log entry %llu (file \"%s\"): %s",
					  (unsigned long long)index,
					  e->file.relpath, famfs_errmsg());
		return 0;
	case FAMFS_ENTRY_MKDIR:
		rc = check_entry_path(e->mkdir.relpath, index);
		if (rc)
			return rc;
		if ((e->mkdir.mode & ~07777u) & ~(uint32_t)S_IFDIR)
			return famfs_fail(EUCLEAN, "log entry %llu: directory mode 0%o is not a directory's",
					  (unsigned long long)index, e->mkdir.mode);
		return 0;
	case FAMFS_ENTRY_ADD_DAXDEV:
		if (e->daxdev.pad0)
			return famfs_fail(EUCLEAN, "log entry %llu: an added device with padding set",
					  (unsigned long long)index);
		rc = famfs_geo_check_add(g, &e->daxdev);
		if (rc)
			return famfs_fail(-rc, "log entry %llu: %s",
					  (unsigned long long)index,
					  famfs_errmsg());
		return 0;
	case FAMFS_ENTRY_VOID:
		for (size_t i = 0; i < sizeof(e->file); i++)
			if (((const uint8_t *)&e->file)[i])
				return famfs_fail(EUCLEAN, "log entry %llu: a void entry with contents",
						  (unsigned long long)index);
		return 0;
	default:
		return famfs_fail(EUCLEAN, "log entry %llu: unknown type %u",
				  (unsigned long long)index, e->type);
	}
}

int famfs_log_walk(const struct famfs_omf_log *log, uint64_t log_len,
		   struct famfs_geometry *g, uint64_t from,
		   famfs_entry_fn fn, void *arg, struct famfs_walk *res)
{
	uint64_t slots = famfs_log_slots(log_len);
	struct famfs_omf_entry e;
	uint64_t i;
	int rc;

	memset(res, 0, sizeof(*res));
	/* Read once: another host may be appending while we walk. */
	res->committed = __atomic_load_n(&log->next_index, __ATOMIC_ACQUIRE);
	if (res->committed > slots) {
		res->bad = true;
		res->valid = from;
		snprintf(res->why, sizeof(res->why),
			 "log header claims %llu entries but the log has room for %llu",
			 (unsigned long long)res->committed,
			 (unsigned long long)slots);
		return famfs_fail(EUCLEAN, "%s", res->why);
	}
	for (i = from; i < res->committed; i++) {
		memcpy(&e, famfs_log_entry((struct famfs_omf_log *)log, i),
		       sizeof(e));
		rc = famfs_entry_check(&e, i, g);
		if (rc) {
			res->bad = true;
			res->valid = i;
			snprintf(res->why, sizeof(res->why), "%s",
				 famfs_errmsg());
			return rc;
		}
		if (e.type == FAMFS_ENTRY_ADD_DAXDEV)
			famfs_geo_add(g, &e.daxdev);
		if (fn) {
			rc = fn(&e, i, arg);
			if (rc) {
				res->valid = i;
				return rc;
			}
		}
	}
	res->valid = res->committed;
	return 0;
}

int famfs_log_append(struct famfs_dev *dev, struct famfs_omf_entry *e)
{
	if (!dev->log)
		return famfs_fail(EROFS, "%s is open read-only", dev->path);
	famfs_dev_invalidate(dev, dev->log, sizeof(*dev->log));
	return famfs_log_append_at(dev, e, dev->log->next_index);
}

int famfs_log_append_at(struct famfs_dev *dev, struct famfs_omf_entry *e,
			uint64_t expect)
{
	struct famfs_omf_log *log = dev->log;
	struct famfs_omf_entry *slot;
	struct famfs_geometry g;
	uint64_t index;
	int rc;

	if (!dev->writable || !log)
		return famfs_fail(EROFS, "%s is open read-only", dev->path);
	if (famfs_role(dev) != FAMFS_ROLE_MASTER)
		return famfs_fail(EPERM, "this host is not the famfs master of %s; only the master may change the log",
				  dev->path);

	famfs_dev_invalidate(dev, log, sizeof(*log));
	index = log->next_index;
	/*
	 * The tail is where this writer last saw it, or someone appended
	 * without our lock: writing now would overwrite their entry.
	 */
	if (index != expect)
		return famfs_fail(EBUSY, "the log of %s moved under the writers' lock: entry %llu is there, entry %llu was expected; another writer appended without the lock, nothing was written (run famfs fsck, then retry)",
				  dev->path, (unsigned long long)index,
				  (unsigned long long)expect);
	if (index >= famfs_log_slots(dev->log_len))
		return famfs_fail(ENOSPC, "the log is full (%llu entries); no more files or directories can be created",
				  (unsigned long long)index);

	e->seqnum = index;
	e->crc = famfs_entry_crc(e);
	/* Never write what a reader would reject. */
	famfs_dev_geometry(dev, &g);
	rc = famfs_entry_check(e, index, &g);
	if (rc)
		return rc;
	slot = famfs_log_entry(log, index);
	memcpy(slot, e, sizeof(*e));
	famfs_dev_flush(dev, slot, sizeof(*slot));

	/* Only now does the entry become part of the log. */
	log->next_seqnum = index + 1;
	__atomic_store_n(&log->next_index, index + 1, __ATOMIC_RELEASE);
	famfs_dev_flush(dev, log, sizeof(*log));
	return 0;
}

int famfs_dev_log_walk(struct famfs_dev *dev, famfs_entry_fn fn, void *arg,
		       struct famfs_walk *res)
{
	struct famfs_geometry g;
	int rc;

	if (!dev->log)
		return famfs_fail(EINVAL, "%s has no valid famfs", dev->path);
	famfs_dev_invalidate(dev, dev->log, dev->log_len);
	rc = famfs_log_check_header(dev->log, dev->log_len);
	if (rc)
		return rc;
	famfs_sb_geometry(dev->sb, &g);
	return famfs_log_walk(dev->log, dev->log_len, &g, 0, fn, arg, res);
}

/*
 * The devices are known only from the log, so a device's geometry is kept
 * with it and brought up to date with the entries appended since: each
 * append checks its entry against it, and must not cost a walk of the
 * whole log. Only ADD_DAXDEV entries change it; the scan stops at the
 * first one that fails its checks, as a walk would.
 */
void famfs_dev_geometry(struct famfs_dev *dev, struct famfs_geometry *g)
{
	uint64_t next, slots;
	struct famfs_omf_entry e;

	if (!dev->geo_valid) {
		famfs_sb_geometry(dev->sb, &dev->geo);
		dev->geo_next = 0;
		dev->geo_stuck = false;
		dev->geo_valid = true;
	}
	if (dev->log && !dev->geo_stuck) {
		slots = famfs_log_slots(dev->log_len);
		next = __atomic_load_n(&dev->log->next_index, __ATOMIC_ACQUIRE);
		if (next > slots)
			next = slots;
		if (next > dev->geo_next)
			famfs_dev_invalidate(dev,
					     famfs_log_entry(dev->log,
							     dev->geo_next),
					     (next - dev->geo_next) *
						     sizeof(struct famfs_omf_entry));
		for (; dev->geo_next < next; dev->geo_next++) {
			memcpy(&e, famfs_log_entry(dev->log, dev->geo_next),
			       sizeof(e));
			if (e.type != FAMFS_ENTRY_ADD_DAXDEV)
				continue;
			if (famfs_entry_check(&e, dev->geo_next, &dev->geo)) {
				dev->geo_stuck = true;
				break;
			}
			famfs_geo_add(&dev->geo, &e.daxdev);
		}
	}
	*g = dev->geo;
}

int famfs_dev_lock_log(struct famfs_dev *dev)
{
	int rc = famfs_dev_lock(dev);

	if (rc)
		return rc;
	/* Read afresh under the lock: another host may have appended. */
	famfs_dev_invalidate(dev, dev->log, dev->log_len);
	rc = famfs_log_check_header(dev->log, dev->log_len);
	if (rc)
		famfs_dev_unlock(dev);
	return rc;
}
