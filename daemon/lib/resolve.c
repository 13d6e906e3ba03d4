// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finding the other devices of a famfs on this host. The log names each
 * by the uuid its own superblock carries, since /dev/dax1.0 on one host
 * may be /dev/dax3.0 on another. A device is looked for first where this
 * host last found it (the device map, a host-local file that mkfs.famfs,
 * famfs devadd and every successful lookup keep), then among the devdax
 * nodes whose driver lets us read them. Whatever a name says, a device
 * is taken only when its superblock carries both the file system's uuid
 * and the device's, and only one device may.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "internal.h"

/* How long a mount's daemon may take to answer a read of its superblock. */
#define MOUNT_ANSWER_S 2

#define DEVMAP_DEFAULT "/var/lib/famfs/devices"

const char *famfs_devmap_path(void)
{
	const char *p = getenv("FAMFS_DEVMAP");

	return p && *p ? p : DEVMAP_DEFAULT;
}

/*
 * Only root (or we) may be able to put a device under a name we would
 * take: a file anyone could write could pose as a device, with its data.
 */
static bool trusted(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return false;
	if (S_ISREG(st->st_mode))
		return !(st->st_mode & (S_IWGRP | S_IWOTH));
	return S_ISCHR(st->st_mode);
}

/*
 * Is @path trusted, with the superblock of a secondary of @fs_uuid with
 * @dev_uuid (NULL: any)?
 */
/*
 * A node on fsdev_dax (7.3), named by the device map: a live mount's
 * record says whose it is (it is not read); with no live holder it is
 * moved back to device_dax to be read, unless a mount has it as source.
 * Devices found only by scanning /dev are never moved.
 */
static int hidden_node(const char *path, bool from_map,
		       struct famfs_omf_superblock *rec)
{
	if (!from_map)
		return -1;
	if (famfs_member_holder(path, rec->fs_uuid, rec->dev_uuid)) {
		rec->magic = FAMFS_SUPER_MAGIC;
		return 1;
	}
	return famfs_dax_make_readable(path) ? -1 : 0;
}

/* Drivers whose node we may read as it is, without moving the device. */
static bool readable_driver(const char *driver)
{
	return !strcmp(driver, FAMFS_READ_DRIVER) || !strcmp(driver, "famfs_dax");
}

/* Call @fn on each /dev/dax* node until it returns true; true if it did. */
static bool each_dax_node(bool (*fn)(const char *path, void *arg), void *arg)
{
	DIR *d = opendir("/dev");
	struct dirent *de;
	char path[PATH_MAX];
	bool stop = false;

	while (d && !stop && (de = readdir(d))) {
		if (strncmp(de->d_name, "dax", 3))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		stop = fn(path, arg);
	}
	if (d)
		closedir(d);
	return stop;
}

/*
 * Is @path trusted, with the superblock of a secondary of @fs_uuid with
 * @dev_uuid (NULL: any)? *@by_record: known from a live mount's record,
 * not read (hidden_node()); @sb then gets only the uuids.
 */
static bool candidate_matches(const char *path, const uint8_t *fs_uuid,
			      const uint8_t *dev_uuid, bool from_map,
			      struct famfs_dev_id *id,
			      struct famfs_omf_superblock *sb, bool *by_record)
{
	struct famfs_omf_superblock rec = { 0 };
	struct famfs_dev dev;
	struct stat st;
	bool ok;

	*by_record = false;
	if (stat(path, &st) < 0 || !trusted(&st))
		return false;
	famfs_dev_id_of(&st, id);
	if (S_ISCHR(st.st_mode)) {
		char driver[64];

		/* Rebinding a device we only look at is not ours to do. */
		if (famfs_dax_driver(path, driver, sizeof(driver)))
			return false;
		if (!strcmp(driver, "fsdev_dax")) {
			int h = hidden_node(path, from_map, &rec);

			if (h < 0)
				return false;
			if (h > 0) {
				*by_record = true;
				if (sb)
					*sb = rec;
				return (!fs_uuid || !memcmp(rec.fs_uuid, fs_uuid,
							    FAMFS_UUID_LEN)) &&
				       (!dev_uuid ||
					!memcmp(rec.dev_uuid, dev_uuid,
						FAMFS_UUID_LEN));
			}
		} else if (!readable_driver(driver)) {
			return false;
		}
	}
	if (famfs_dev_open(path, FAMFS_OPEN_NO_REBIND, &dev))
		return false;
	famfs_dev_invalidate(&dev, dev.sb, sizeof(*dev.sb));
	ok = famfs_sb_check_member(dev.sb, fs_uuid, dev_uuid) == 0;
	if (sb)
		*sb = *dev.sb;
	famfs_dev_close(&dev);
	return ok;
}

struct search {
	const uint8_t *fs_uuid, *dev_uuid;
	char found[PATH_MAX];
	struct famfs_dev_id id;
	bool hit, by_record;
	char other[PATH_MAX]; /* a second device with the same uuid */
};

static void consider(struct search *s, const char *path, bool from_map)
{
	struct famfs_dev_id id;
	bool by_record;

	if (!candidate_matches(path, s->fs_uuid, s->dev_uuid, from_map, &id,
			       NULL, &by_record))
		return;
	if (s->hit) {
		if (!famfs_dev_id_eq(&id, &s->id) && !s->other[0])
			snprintf(s->other, sizeof(s->other), "%s", path);
		return;
	}
	s->hit = true;
	s->by_record = by_record;
	s->id = id;
	snprintf(s->found, sizeof(s->found), "%s", path);
}

/*
 * Lines of the device map: "<device uuid> <file system uuid> <path>". A
 * map that others could have written is not read at all.
 */
static FILE *open_map(void)
{
	const char *p = famfs_devmap_path();
	struct stat st;
	FILE *f = fopen(p, "re");

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) ||
	    !trusted(&st)) {
		fclose(f);
		return NULL;
	}
	return f;
}

static bool parse_line(char *line, uint8_t dev_uuid[FAMFS_UUID_LEN],
		       uint8_t fs_uuid[FAMFS_UUID_LEN], char **path)
{
	char *du = strtok(line, " \t\n");
	char *fu = strtok(NULL, " \t\n");
	char *p = strtok(NULL, "\n");

	if (!du || !fu || !p || uuid_parse(du, dev_uuid) ||
	    uuid_parse(fu, fs_uuid))
		return false;
	*path = p;
	return true;
}

/* The device map's lines, in memory. */
struct map_line {
	uint8_t dev_uuid[FAMFS_UUID_LEN], fs_uuid[FAMFS_UUID_LEN];
	char path[PATH_MAX];
};

struct map {
	struct map_line *l;
	size_t n, cap;
};

static int map_add(struct map *m, const uint8_t *dev_uuid,
		   const uint8_t *fs_uuid, const char *path)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct map_line *l = realloc(m->l, cap * sizeof(*l));

		if (!l)
			return famfs_fail(ENOMEM, "out of memory");
		m->l = l;
		m->cap = cap;
	}
	memcpy(m->l[m->n].dev_uuid, dev_uuid, FAMFS_UUID_LEN);
	memcpy(m->l[m->n].fs_uuid, fs_uuid, FAMFS_UUID_LEN);
	snprintf(m->l[m->n].path, sizeof(m->l[m->n].path), "%s", path);
	m->n++;
	return 0;
}

static void map_read(struct map *m)
{
	uint8_t du[FAMFS_UUID_LEN], fu[FAMFS_UUID_LEN];
	char line[PATH_MAX + 96], *p;
	FILE *f = open_map();

	while (f && fgets(line, sizeof(line), f))
		if (parse_line(line, du, fu, &p))
			map_add(m, du, fu, p);
	if (f)
		fclose(f);
}

static void search_map(struct search *s)
{
	struct map m = { 0 };

	map_read(&m);
	for (size_t i = 0; i < m.n; i++)
		if (!memcmp(m.l[i].dev_uuid, s->dev_uuid, FAMFS_UUID_LEN) &&
		    !memcmp(m.l[i].fs_uuid, s->fs_uuid, FAMFS_UUID_LEN))
			consider(s, m.l[i].path, true);
	free(m.l);
}

static bool consider_node(const char *path, void *arg)
{
	struct search *s = arg;

	if (!s->hit || strcmp(path, s->found))
		consider(s, path, false);
	return false;
}

static void search_dax(struct search *s)
{
	each_dax_node(consider_node, s);
}

/* Replace the map with @m, atomically: a reader sees the old or the new. */
static int map_write(const struct map *m)
{
	const char *path = famfs_devmap_path();
	char tmp[PATH_MAX], dir[PATH_MAX], us[37], fs[37], *slash;
	FILE *out;
	int fd, rc = 0;

	/* its directory and those above it (/var/lib on a bare system) */
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return famfs_fail(errno, "cannot make %s: %s", dir,
					  strerror(errno));
		*slash = '/';
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return famfs_fail(errno, "cannot write the device map %s: %s",
				  path, strerror(errno));
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		unlink(tmp);
		return famfs_fail(ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < m->n; i++) {
		famfs_uuid_str(m->l[i].dev_uuid, us);
		famfs_uuid_str(m->l[i].fs_uuid, fs);
		fprintf(out, "%s %s %s\n", us, fs, m->l[i].path);
	}
	if (fchmod(fd, 0644) < 0 || fflush(out) || fsync(fd) < 0)
		rc = famfs_fail(errno, "cannot write the device map %s: %s",
				path, strerror(errno));
	if (fclose(out) && !rc)
		rc = famfs_fail(errno, "cannot write the device map %s: %s",
				path, strerror(errno));
	if (!rc && rename(tmp, path) < 0)
		rc = famfs_fail(errno, "cannot replace the device map %s: %s",
				path, strerror(errno));
	if (rc)
		unlink(tmp);
	return rc;
}

/* Drop @m's lines for @path, and for @dev_uuid unless it is NULL. */
static void map_forget(struct map *m, const uint8_t *dev_uuid,
		       const char *path)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++)
		if ((!dev_uuid ||
		     memcmp(m->l[i].dev_uuid, dev_uuid, FAMFS_UUID_LEN)) &&
		    strcmp(m->l[i].path, path))
			m->l[k++] = m->l[i];
	m->n = k;
}

int famfs_devmap_record(const uint8_t dev_uuid[FAMFS_UUID_LEN],
			const uint8_t fs_uuid[FAMFS_UUID_LEN],
			const char *path)
{
	struct map m = { 0 };
	char real[PATH_MAX];
	int rc;

	if (!realpath(path, real))
		return famfs_fail(errno, "%s: %s", path, strerror(errno));
	map_read(&m);
	/* where it is now, and nothing else there: a device has one place */
	map_forget(&m, dev_uuid, real);
	rc = map_add(&m, dev_uuid, fs_uuid, real);
	if (!rc)
		rc = map_write(&m);
	free(m.l);
	return rc;
}

/* The uuids of @path, a trusted device or file with a secondary's superblock */
static bool read_secondary(const char *path, bool named, uint8_t *dev_uuid,
			   uint8_t *fs_uuid)
{
	struct famfs_omf_superblock sb;
	struct famfs_dev_id id;
	bool by_record;

	if (!candidate_matches(path, NULL, NULL, named, &id, &sb, &by_record))
		return false;
	memcpy(dev_uuid, sb.dev_uuid, FAMFS_UUID_LEN);
	memcpy(fs_uuid, sb.fs_uuid, FAMFS_UUID_LEN);
	return true;
}

/* @named: the map or the caller named @path, not a scan of /dev */
static void refresh_one(struct map *m, const char *path, bool named,
			unsigned int *found)
{
	uint8_t du[FAMFS_UUID_LEN], fu[FAMFS_UUID_LEN];
	char real[PATH_MAX];

	if (!realpath(path, real) || !read_secondary(real, named, du, fu))
		return;
	/*
	 * Two places with one uuid both stay: a lookup then refuses the
	 * uuid rather than pick one (a copied device).
	 */
	map_forget(m, NULL, real);
	if (!map_add(m, du, fu, real))
		(*found)++;
}

struct refresh_arg {
	struct map *m;
	unsigned int *found;
};

static bool refresh_node(const char *path, void *arg)
{
	struct refresh_arg *a = arg;

	refresh_one(a->m, path, false, a->found);
	return false;
}

int famfs_devmap_refresh(char *const *paths, int n, unsigned int *found)
{
	struct map old = { 0 }, m = { 0 };
	int rc;

	*found = 0;
	map_read(&old);
	/* what the map had, if it is still there; then /dev; then @paths */
	for (size_t i = 0; i < old.n; i++)
		refresh_one(&m, old.l[i].path, true, found);
	each_dax_node(refresh_node, &(struct refresh_arg){ &m, found });
	for (int i = 0; i < n; i++) {
		unsigned int before = *found;

		refresh_one(&m, paths[i], true, found);
		if (*found == before) {
			rc = famfs_fail(ENOENT, "%s holds no secondary famfs superblock that this host may use (a device or file only root can write)",
					paths[i]);
			goto out;
		}
	}
	rc = map_write(&m);
out:
	free(old.l);
	free(m.l);
	return rc;
}

/* famfs_resolve_dev(), saying whether the device was known by record. */
static int resolve(const uint8_t fs_uuid[FAMFS_UUID_LEN],
		   const uint8_t dev_uuid[FAMFS_UUID_LEN], char *path,
		   size_t len, bool *by_record)
{
	struct search s = { .fs_uuid = fs_uuid, .dev_uuid = dev_uuid };
	char u[37];

	famfs_uuid_str(dev_uuid, u);
	search_map(&s);
	search_dax(&s);
	if (!s.hit)
		return famfs_fail(ENOENT, "no device with uuid %s is found on this host",
				  u);
	if (s.other[0])
		return famfs_fail(EEXIST, "two devices carry uuid %s: %s and %s (a copied device?); neither is used",
				  u, s.found, s.other);
	if (strlen(s.found) >= len)
		return famfs_fail(ENAMETOOLONG, "%s: name too long", s.found);
	memcpy(path, s.found, strlen(s.found) + 1);
	*by_record = s.by_record;
	/* Where it is now, for next time; the map is a cache only. */
	famfs_devmap_record(dev_uuid, fs_uuid, s.found);
	return 0;
}

int famfs_resolve_dev(const uint8_t fs_uuid[FAMFS_UUID_LEN],
		      const uint8_t dev_uuid[FAMFS_UUID_LEN], char *path,
		      size_t len)
{
	bool by_record;

	return resolve(fs_uuid, dev_uuid, path, len, &by_record);
}

/* Looking for what to check famfs @fs_uuid by (famfs_find_primary()). */
struct primary_search {
	const uint8_t *fs_uuid;
	char *path;
	size_t len;
};

/* The primary superblock of node @path, if we may read it as it is. */
static bool node_sb(const char *path, struct famfs_omf_superblock *sb)
{
	struct famfs_dev dev;
	char driver[64];
	struct stat st;
	bool ok;

	if (stat(path, &st) < 0 || !trusted(&st) ||
	    famfs_dax_driver(path, driver, sizeof(driver)) ||
	    !readable_driver(driver) ||
	    famfs_dev_open(path, FAMFS_OPEN_NO_REBIND, &dev))
		return false;
	famfs_dev_invalidate(&dev, dev.sb, sizeof(*dev.sb));
	ok = !famfs_sb_check(dev.sb, dev.size);
	if (ok)
		*sb = *dev.sb;
	famfs_dev_close(&dev);
	return ok;
}

/* The superblock of a mount's source, read without the mount. */
static bool source_sb(const char *src, struct famfs_omf_superblock *sb)
{
	struct stat st;

	if (stat(src, &st) < 0)
		return false;
	if (S_ISREG(st.st_mode))
		return trusted(&st) && !famfs_sb_read_file(src, sb);
	return S_ISCHR(st.st_mode) && node_sb(src, sb);
}

/* @mnt's superblock, if its daemon answers within MOUNT_ANSWER_S. */
static bool mount_sb(const char *mnt, struct famfs_omf_superblock *sb)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/.meta/.superblock", mnt);
	return famfs_read_within(path, sb, sizeof(*sb),
				 MOUNT_ANSWER_S * 1000) == (ssize_t)sizeof(*sb);
}

/* A mount of it: its mount point */
static bool primary_mounted(const struct famfs_mount_ent *m, void *arg)
{
	struct primary_search *ps = arg;
	struct famfs_omf_superblock sb;

	if (!m->famfs || m->src[0] != '/')
		return false;
	/* the source when we can read it: no daemon to wait for */
	if (!source_sb(m->src, &sb) && !mount_sb(m->dir, &sb))
		return false;
	if (memcmp(sb.fs_uuid, ps->fs_uuid, FAMFS_UUID_LEN))
		return false;
	snprintf(ps->path, ps->len, "%s", m->dir);
	return true;
}

/* A node we may read as it is, with its primary superblock */
static bool primary_node(const char *path, void *arg)
{
	struct primary_search *ps = arg;
	struct famfs_omf_superblock sb;

	if (!node_sb(path, &sb) ||
	    memcmp(sb.fs_uuid, ps->fs_uuid, FAMFS_UUID_LEN))
		return false;
	snprintf(ps->path, ps->len, "%s", path);
	return true;
}

int famfs_find_primary(const uint8_t fs_uuid[FAMFS_UUID_LEN], char *path,
		       size_t len)
{
	struct primary_search ps = { fs_uuid, path, len };
	char u[37];

	if (famfs_mounts_each(primary_mounted, &ps) ||
	    each_dax_node(primary_node, &ps))
		return 0;
	famfs_uuid_str(fs_uuid, u);
	return famfs_fail(ENOENT, "no primary device of famfs %s is mounted or found among this host's devdax nodes",
			  u);
}

const struct famfs_dev *famfs_dev_member(const struct famfs_dev *dev,
					 uint64_t i)
{
	if (i == 0)
		return dev;
	return i < FAMFS_MAX_DEVS ? dev->member[i] : NULL;
}

/* Open device @i at @path and check it is that device of @dev's famfs. */
static int open_member(struct famfs_dev *dev, const struct famfs_geometry *g,
		       uint32_t i, const char *path, unsigned int flags,
		       bool by_record)
{
	bool bind = flags & FAMFS_OPEN_BIND_DAX;
	bool node_maps = famfs_kernel_dax_node_maps();
	struct famfs_dev *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return famfs_fail(ENOMEM, "out of memory");
	/* A live mount holds it (and checked it): by name alone. */
	if (by_record) {
		m->fd = -1;
		m->kind = FAMFS_DEV_DAX;
		m->size = g->dev[i].size;
		snprintf(m->path, sizeof(m->path), "%s", path);
		famfs_member_hold(path, dev->sb->fs_uuid, g->dev[i].uuid,
				  dev->members_mount);
		dev->member[i] = m;
		return 0;
	}
	/* Before mapping it: unbinding device_dax revokes its mappings. */
	if (bind && node_maps) {
		rc = famfs_dax_bind(path);
		if (rc && rc != -ENODEV) {
			free(m);
			return rc;
		}
	}
	rc = famfs_dev_open(path, flags | FAMFS_OPEN_NO_REBIND, m);
	if (rc) {
		free(m);
		return rc;
	}
	famfs_dev_invalidate(m, m->sb, sizeof(*m->sb));
	rc = famfs_sb_check_secondary(m->sb, m->size, dev->sb, &g->dev[i]);
	if (rc) {
		rc = famfs_fail(-rc, "%s is not device %u of this famfs: %s",
				path, i, famfs_errmsg());
		famfs_dev_close(m);
		free(m);
		return rc;
	}
	/*
	 * The kernel's driver on 7.3 (fsdev_dax) serves no mmap of the node:
	 * checked on device_dax, the device is kept by name alone, for
	 * GET_DAXDEV; the kernel serves its files.
	 */
	if (bind && !node_maps && m->kind == FAMFS_DEV_DAX) {
		famfs_dev_close(m);
		rc = famfs_dax_bind(path);
		if (rc) {
			free(m);
			return rc;
		}
		/* Whose it is now that nobody can read it (holders.c). */
		famfs_member_hold(path, dev->sb->fs_uuid, g->dev[i].uuid,
				  dev->members_mount);
	}
	dev->member[i] = m;
	return 0;
}

/* Where the device map last saw device @dev_uuid, into @path. */
static bool devmap_lookup(const uint8_t dev_uuid[FAMFS_UUID_LEN], char *path,
			  size_t len)
{
	struct map m = { 0 };
	bool found = false;

	map_read(&m);
	for (size_t i = 0; i < m.n && !found; i++)
		if (!memcmp(m.l[i].dev_uuid, dev_uuid, FAMFS_UUID_LEN) &&
		    strlen(m.l[i].path) < len) {
			memcpy(path, m.l[i].path, strlen(m.l[i].path) + 1);
			found = true;
		}
	free(m.l);
	return found;
}

/*
 * Not found: say what is at the name where this host last saw the device
 * (another file system's superblock, say), or that it was never seen.
 */
static int explain_missing(struct famfs_dev *dev, const struct famfs_geometry *g,
			   uint32_t i, int rc)
{
	char path[PATH_MAX], u[37], why[512], drv[64];
	struct famfs_dev m;
	int crc;

	famfs_uuid_str(g->dev[i].uuid, u);
	if (rc != -ENOENT)
		return famfs_fail(-rc, "device %u (uuid %s): %s", i, u,
				  famfs_errmsg());
	if (!devmap_lookup(g->dev[i].uuid, path, sizeof(path)))
		return famfs_fail(ENOENT, "device %u (uuid %s) is not found on this host (an image file must be named once: famfs daxdev refresh PATH)",
				  i, u);
	if (famfs_dax_driver(path, drv, sizeof(drv)) == 0 &&
	    !strcmp(drv, "fsdev_dax"))
		return famfs_fail(ENOENT, "device %u (uuid %s): %s, where it was last seen, is on fsdev_dax, where it cannot be read, and a mount holds it as another device (or it could not be moved to device_dax)",
				  i, u, path);
	if (famfs_dev_open(path, FAMFS_OPEN_NO_REBIND, &m))
		return famfs_fail(ENOENT, "device %u (uuid %s) is not found on this host; where it was last seen: %s",
				  i, u, famfs_errmsg());
	famfs_dev_invalidate(&m, m.sb, sizeof(*m.sb));
	crc = famfs_sb_check_secondary(m.sb, m.size, dev->sb, &g->dev[i]);
	snprintf(why, sizeof(why), "%s", crc ? famfs_errmsg() :
						 "it is this device, but not trusted here (writable by others?)");
	famfs_dev_close(&m);
	return famfs_fail(ENOENT, "device %u (uuid %s) is not found on this host; %s, where it was last seen, is no longer it: %s",
			  i, u, path, why);
}

int famfs_dev_open_member(struct famfs_dev *dev, uint32_t i,
			  unsigned int flags)
{
	struct famfs_geometry g;
	char path[PATH_MAX];
	bool by_record;
	int rc;

	famfs_dev_geometry(dev, &g);
	if (i == 0 || i >= famfs_geo_ndevs(&g))
		return famfs_fail(EINVAL, "this famfs has no device %u", i);
	if (dev->member[i])
		return 0;
	rc = resolve(dev->sb->fs_uuid, g.dev[i].uuid, path, sizeof(path),
		     &by_record);
	if (rc)
		return explain_missing(dev, &g, i, rc);
	return open_member(dev, &g, i, path, flags, by_record);
}

int famfs_dev_open_members(struct famfs_dev *dev, unsigned int flags,
			   struct famfs_members *res)
{
	struct famfs_geometry g;

	memset(res, 0, sizeof(*res));
	famfs_dev_geometry(dev, &g);
	res->ndevs = famfs_geo_ndevs(&g);
	for (uint32_t i = 1; i < res->ndevs; i++) {
		int rc = famfs_dev_open_member(dev, i, flags);

		if (rc) {
			if (!res->missing++)
				res->first_missing = i;
			snprintf(res->why, sizeof(res->why), "%s",
				 famfs_errmsg());
		}
	}
	return res->missing ? -ENODEV : 0;
}

void famfs_dev_close_members(struct famfs_dev *dev)
{
	for (uint32_t i = 1; i < FAMFS_MAX_DEVS; i++) {
		if (!dev->member[i])
			continue;
		famfs_dev_close(dev->member[i]);
		free(dev->member[i]);
		dev->member[i] = NULL;
	}
}
