// SPDX-License-Identifier: GPL-2.0-or-later
/* Whether a device (or image file) is the source of a mounted file system. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bool famfs_dev_mounted(const char *path, char *where, size_t len)
{
	char real[PATH_MAX], line[8192], src[PATH_MAX], mnt[PATH_MAX];
	bool found = false;
	FILE *f;

	if (!realpath(path, real))
		return false;
	f = fopen("/proc/self/mounts", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char rsrc[PATH_MAX];

		if (sscanf(line, "%4095s %4095s", src, mnt) != 2)
			continue;
		if (!strcmp(src, real) ||
		    (realpath(src, rsrc) && !strcmp(rsrc, real))) {
			snprintf(where, len, "%s", mnt);
			found = true;
		}
	}
	fclose(f);
	return found;
}
