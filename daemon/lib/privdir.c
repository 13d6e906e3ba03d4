// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directories that root builds in (logplay's shadow tree) or puts a
 * socket in (famfs-fused's shadow=): nobody else may be able to change
 * what a name in them, or on the way to them, refers to. The path is
 * resolved once (symbolic links of the administrator's, such as
 * /var/run, are fine) and then opened again from / one component at a
 * time without following any link, each directory checked on its open
 * descriptor; the caller works relative to the descriptor returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int famfs_private_dir_check(int fd, const char *what, const char *path,
			    bool last)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return famfs_fail(errno, "%s: %s: %s", what, path,
				  strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return famfs_fail(ENOTDIR, "%s: %s is not a directory", what,
				  path);
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return famfs_fail(
			EPERM,
			"%s: %s is owned by uid %u: it must be root's (or yours), or its owner could redirect what is made there",
			what, path, (unsigned int)st.st_uid);
	/*
	 * Others may add names to a sticky directory (/tmp), but not rename
	 * or remove ours: fine on the way, never where we build.
	 */
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
	    (last || !(st.st_mode & S_ISVTX)))
		return famfs_fail(
			EPERM,
			"%s: %s is writable by %s (mode %04o): others could replace what is made there",
			what, path,
			st.st_mode & S_IWOTH ? "others" : "its group",
			(unsigned int)(st.st_mode & 07777));
	return 0;
}

int famfs_private_dir_open(const char *path, const char *what)
{
	char real[PATH_MAX], sofar[PATH_MAX], comp[NAME_MAX + 1];
	const char *p;
	int fd, next, rc;

	if (!realpath(path, real))
		return famfs_fail(errno, "%s: %s: %s", what, path,
				  strerror(errno));
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return famfs_fail(errno, "/: %s", strerror(errno));
	rc = famfs_private_dir_check(fd, what, "/", !real[1]);
	for (p = real + 1; *p && !rc;) {
		size_t n = strcspn(p, "/");

		if (n > NAME_MAX) {
			rc = famfs_fail(ENAMETOOLONG, "%s: %s: %s", what, path,
					strerror(ENAMETOOLONG));
			break;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		snprintf(sofar, sizeof(sofar), "%.*s", (int)(p - real), real);
		while (*p == '/')
			p++;
		next = openat(fd, comp,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int err = errno;

			rc = famfs_fail(
				err, "%s: %s: %s", what, sofar,
				err == ELOOP || err == ENOTDIR
					? "not a directory (a symbolic link appeared while it was checked?)"
					: strerror(err));
			break;
		}
		close(fd);
		fd = next;
		rc = famfs_private_dir_check(fd, what, sofar, !*p);
	}
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}
