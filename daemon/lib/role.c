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

int famfs_system_uuid(uint8_t uuid[FAMFS_UUID_LEN], bool create)
{
	const char *path = uuid_file();
	char text[64] = "";
	FILE *f;
	int rc;

	if (create && access(path, F_OK) < 0) {
		rc = create_uuid_file(path);
		if (rc)
			return rc;
	}
	f = fopen(path, "r");
	if (!f)
		return famfs_fail(errno, "cannot read this host's famfs identity %s: %s",
				  path, strerror(errno));
	rc = fscanf(f, "%63s", text);
	fclose(f);
	if (rc != 1 || uuid_parse(text, uuid) < 0)
		return famfs_fail(EINVAL, "%s does not hold a UUID", path);
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
