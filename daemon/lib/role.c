// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Who may write: the host whose system UUID the superblock records is the
 * master, every other host is a client.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "internal.h"

#define SYSTEM_UUID_FILE "/opt/famfs/system_uuid"

static const char *uuid_file(void)
{
	const char *env = getenv("FAMFS_SYSTEM_UUID_FILE");

	return env && *env ? env : SYSTEM_UUID_FILE;
}

static int create_uuid_file(const char *path)
{
	char dir[4096], *slash, text[38];
	uuid_t u;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		/* Every missing level, as mkdir -p: /opt may not exist. */
		for (char *p = dir + 1;; p++) {
			bool end = !*p;

			if (*p != '/' && !end)
				continue;
			*p = '\0';
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				return famfs_fail(errno, "cannot create %s: %s",
						  dir, strerror(errno));
			if (end)
				break;
			*p = '/';
		}
	}
	uuid_generate(u);
	uuid_unparse(u, text);
	text[36] = '\n';
	/* O_EXCL: if another process wins the race, use its UUID. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0)
		return errno == EEXIST ? 0 :
		       famfs_fail(errno, "cannot create %s: %s", path,
				  strerror(errno));
	if (write(fd, text, 37) != 37) {
		int err = errno ? errno : EIO;

		close(fd);
		unlink(path);
		return famfs_fail(err, "cannot write %s", path);
	}
	return close(fd) < 0 ? famfs_fail(errno, "cannot write %s", path) : 0;
}

/*
 * The file as last read, by its identity and times: the daemon checks the
 * role before every append, and a stat is a quarter of reading the file.
 */
static _Thread_local struct {
	bool valid;
	char path[256];
	struct stat st;
	uint8_t uuid[FAMFS_UUID_LEN];
} cached;

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int famfs_system_uuid(uint8_t uuid[FAMFS_UUID_LEN], bool create)
{
	const char *path = uuid_file();
	char text[64] = "";
	struct stat st;
	bool known;
	FILE *f;
	int rc;

	if (create && access(path, F_OK) < 0) {
		rc = create_uuid_file(path);
		if (rc)
			return rc;
	}
	/*
	 * A file changed in the last seconds is read again: timestamps are
	 * coarse (a tick) and a rewrite of the same size may keep them.
	 */
	known = stat(path, &st) == 0 && time(NULL) - st.st_ctim.tv_sec > 2;
	if (known && cached.valid && !strcmp(cached.path, path) &&
	    same_file(&cached.st, &st)) {
		memcpy(uuid, cached.uuid, FAMFS_UUID_LEN);
		return 0;
	}
	cached.valid = false;
	f = fopen(path, "r");
	if (!f)
		return famfs_fail(errno, "cannot read this host's famfs identity %s: %s",
				  path, strerror(errno));
	rc = fscanf(f, "%63s", text);
	fclose(f);
	if (rc != 1 || uuid_parse(text, uuid) < 0)
		return famfs_fail(EINVAL, "%s does not hold a UUID", path);
	/* as it was before the read: a change since makes the next call read */
	if (known && strlen(path) < sizeof(cached.path)) {
		snprintf(cached.path, sizeof(cached.path), "%s", path);
		cached.st = st;
		memcpy(cached.uuid, uuid, FAMFS_UUID_LEN);
		cached.valid = true;
	}
	return 0;
}

enum famfs_role famfs_role(const struct famfs_dev *dev)
{
	uint8_t me[FAMFS_UUID_LEN];

	if (!dev->sb || famfs_sb_check(dev->sb, dev->size))
		return FAMFS_ROLE_NOSUPER;
	/* A host without an identity file has never made a famfs: client. */
	if (famfs_system_uuid(me, false))
		return FAMFS_ROLE_CLIENT;
	return memcmp(me, dev->sb->system_uuid, FAMFS_UUID_LEN) ?
		       FAMFS_ROLE_CLIENT : FAMFS_ROLE_MASTER;
}

const char *famfs_role_name(enum famfs_role role)
{
	switch (role) {
	case FAMFS_ROLE_MASTER:
		return "master";
	case FAMFS_ROLE_CLIENT:
		return "client";
	default:
		return "none";
	}
}
