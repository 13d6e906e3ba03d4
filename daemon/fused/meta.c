// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The .meta directory: the superblock and the log as files, so the famfs
 * CLI can work through a mount exactly as on a raw device (root only:
 * they show every file's name, owner and memory); .superblock.N, the
 * superblock of each added device, so that fsck of a mount can check
 * devices the host's driver hides (fsdev_dax); and .status, a key=value
 * report for "famfs status", readable by all (key names are a contract
 * with the CLI: add keys, never rename them; device_health is health.c's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "famfs_fuse_abi.h"
#include "fused.h"

bool fused_is_meta(uint64_t ino)
{
	return ino >= FUSED_META_DIR_INO && ino <= FUSED_META_LAST_INO;
}

int fused_meta_sb_index(const struct fused *fs, uint64_t ino)
{
	if (ino == FUSED_META_SB_INO)
		return 0;
	if (ino <= FUSED_META_SECONDARY_INO(0) || ino > FUSED_META_LAST_INO ||
	    ino - FUSED_META_SECONDARY_INO(0) >= famfs_geo_ndevs(&fs->g))
		return -1;
	return (int)(ino - FUSED_META_SECONDARY_INO(0));
}

/* N of ".superblock.N", written as the listing writes it, or 0. */
static uint64_t secondary_named(const char *name)
{
	static const char prefix[] = FUSED_META_SB ".";
	const char *digits = name + sizeof(prefix) - 1;
	char *end;
	unsigned long n;

	if (strncmp(name, prefix, sizeof(prefix) - 1) || *digits < '1' ||
	    *digits > '9')
		return 0;
	n = strtoul(digits, &end, 10);
	return *end || n >= FAMFS_MAX_DEVS ? 0 : n;
}

uint64_t fused_meta_lookup(struct fused *fs, uint64_t parent,
			   const char *name)
{
	uint64_t n;

	if (parent == FAMFS_ROOT_INO)
		return strcmp(name, FUSED_META_DIR) ? 0 : FUSED_META_DIR_INO;
	if (parent != FUSED_META_DIR_INO)
		return 0;
	if (!strcmp(name, FUSED_META_SB))
		return FUSED_META_SB_INO;
	if (!strcmp(name, FUSED_META_LOG))
		return FUSED_META_LOG_INO;
	if (!strcmp(name, FUSED_META_STATUS))
		return FUSED_META_STATUS_INO;
	n = secondary_named(name);
	/* a device added a moment ago is in the log's tail */
	if (n && n >= famfs_geo_ndevs(&fs->g))
		fused_refresh(fs);
	if (n && n < famfs_geo_ndevs(&fs->g))
		return FUSED_META_SECONDARY_INO(n);
	return 0;
}

bool fused_meta_dirent(const struct fused *fs, unsigned int i,
		       const char **name, char *namebuf, size_t namelen,
		       uint64_t *ino, mode_t *mode)
{
	static const struct {
		const char *name;
		uint64_t ino;
		mode_t mode;
	} fixed[] = {
		{ ".", FUSED_META_DIR_INO, S_IFDIR },
		{ "..", FAMFS_ROOT_INO, S_IFDIR },
		{ FUSED_META_SB, FUSED_META_SB_INO, S_IFREG },
		{ FUSED_META_LOG, FUSED_META_LOG_INO, S_IFREG },
		{ FUSED_META_STATUS, FUSED_META_STATUS_INO, S_IFREG },
	};
	const unsigned int nfixed = sizeof(fixed) / sizeof(fixed[0]);
	unsigned int dev;

	if (i < nfixed) {
		*name = fixed[i].name;
		*ino = fixed[i].ino;
		*mode = fixed[i].mode;
		return true;
	}
	dev = i - nfixed + 1; /* then .superblock.1, .2, … */
	if (dev >= famfs_geo_ndevs(&fs->g))
		return false;
	snprintf(namebuf, namelen, "%s.%u", FUSED_META_SB, dev);
	*name = namebuf;
	*ino = FUSED_META_SECONDARY_INO(dev);
	*mode = S_IFREG;
	return true;
}

int fused_meta_fmap(struct fused *fs, uint64_t ino, struct famfs_omf_fmap *fm,
		    uint64_t *size)
{
	int dev = fused_meta_sb_index(fs, ino);

	memset(fm, 0, sizeof(*fm));
	fm->ext_type = FAMFS_EXT_SIMPLE;
	fm->simple.nextents = 1;
	if (dev >= 0) {
		/* a secondary's superblock starts its device, as the primary's */
		fm->simple.se[0].devindex = (uint64_t)dev;
		fm->simple.se[0].offset = 0;
		fm->simple.se[0].len = FAMFS_SB_REGION;
	} else if (ino == FUSED_META_LOG_INO) {
		fm->simple.se[0].offset = fs->dev.sb->log_offset;
		fm->simple.se[0].len = fs->dev.log_len;
	} else {
		return -ENODATA;
	}
	*size = fm->simple.se[0].len;
	return 0;
}

int fused_meta_attr(struct fused *fs, uint64_t ino, struct stat *st)
{
	char buf[4096];
	uint64_t size;
	struct famfs_omf_fmap fm;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_blksize = 4096;
	st->st_atime = st->st_mtime = st->st_ctime = fs->mount_time;
	switch (ino) {
	case FUSED_META_DIR_INO:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	case FUSED_META_STATUS_INO:
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)fused_status(fs, buf, sizeof(buf));
		return 0;
	default:
		if (fused_meta_fmap(fs, ino, &fm, &size))
			return -ENOENT;
		/*
		 * Root's alone (ops.c refuses others' opens as well). Only the
		 * master's log is writable; the superblock never is.
		 */
		st->st_mode = S_IFREG |
			      (ino == FUSED_META_LOG_INO && !fs->readonly ?
				       0600 :
				       0400);
		st->st_nlink = 1;
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)(size / 512);
		return 0;
	}
}

size_t fused_status(struct fused *fs, char *buf, size_t len)
{
	uint64_t slots = famfs_log_slots(fs->dev.log_len);
	const struct famfs_alloc *a = &fs->alloc;
	int n;

	fused_health_check(fs, true);
	n = snprintf(buf, len,
		     "mode=%s\n"
		     "device=%s\n"
		     "role=%s\n"
		     "pid=%d\n"
		     "mountpoint=%s\n"
		     "fuse_device=%s\n"
		     "readonly=%d\n"
		     "requests=%llu\n"
		     "reads=%llu\n"
		     "writes=%llu\n"
		     "get_fmap=%llu\n"
		     "get_daxdev=%llu\n"
		     "log_entries=%llu\n"
		     "log_slots=%llu\n"
		     "log_damaged=%d\n"
		     "files=%llu\n"
		     "dirs=%llu\n"
		     "poll_ms=%u\n"
		     "alloc_unit=%llu\n"
		     "dev_size=%llu\n"
		     "space_used=%llu\n"
		     "version=%s\n"
		     "device_health=%s\n"
		     "direct_reads=%d\n"
		     "overlapping_files=%llu\n"
		     "started=%lld\n"
		     "takeovers=%u\n"
		     "lookups=%llu\n"
		     "lookup_misses=%llu\n"
		     "read_splice=%d\n"
		     "spliced_reads=%llu\n"
		     "data_readonly=%d\n"
		     "map_replies=%d\n"
		     "devices=%u\n"
		     "devices_missing=%u\n"
		     "files_being_written=%llu\n"
		     "commit_delay_ms=%u\n",
		     fs->famfs_mode ? "famfs" : "fallback", fs->devpath,
		     famfs_role_name(fs->role), (int)getpid(), fs->mountpoint,
		     fs->fuse_dev, fs->readonly,
		     (unsigned long long)fs->requests,
		     (unsigned long long)fs->reads,
		     (unsigned long long)fs->writes,
		     (unsigned long long)fs->get_fmaps,
		     (unsigned long long)fs->get_daxdevs,
		     (unsigned long long)fs->ns.nindex,
		     (unsigned long long)slots, fs->log_bad,
		     (unsigned long long)fs->ns.files,
		     (unsigned long long)fs->ns.dirs, fs->poll_ms,
		     (unsigned long long)fs->g.alloc_unit,
		     (unsigned long long)fs->g.dev_size,
		     (unsigned long long)(a->used * a->alloc_unit),
		     FAMFS_VERSION, fs->health, fs->direct_reads,
		     (unsigned long long)fs->overlapping,
		     (long long)fs->start_time, fs->takeovers,
		     (unsigned long long)fs->lookups,
		     (unsigned long long)fs->lookup_misses, fs->splice_reads,
		     (unsigned long long)fs->spliced_reads, fs->data_ro,
		     fs->map_replies, famfs_geo_ndevs(&fs->g),
		     fs->members_missing, (unsigned long long)fs->npending,
		     fs->commit_delay_ms);
	if (n >= 0 && (size_t)n < len && fs->unit[0])
		n += snprintf(buf + n, len - (size_t)n, "unit=%s\n", fs->unit);
	/* where this host found each added device: what fsck of the mount
	 * reports on a kernel whose driver hides them (fsdev_dax) */
	for (uint32_t i = 1; i < famfs_geo_ndevs(&fs->g); i++) {
		const struct famfs_dev *d = famfs_dev_member(&fs->dev, i);

		if (n >= 0 && (size_t)n < len && d)
			n += snprintf(buf + n, len - (size_t)n,
				      "member.%u=%s\n", i, d->path);
	}
	if (n < 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}
