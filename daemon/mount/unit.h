/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running a mount's daemon as famfs@MOUNT.service (see unit.c). */
#ifndef FAMFS_MOUNT_UNIT_H
#define FAMFS_MOUNT_UNIT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * systemd runs this host and famfs@.service is installed, and
 * $FAMFS_NO_SYSTEMD is not set.
 */
bool famfs_unit_wanted(void);
/* The instance name of mount point @path, as systemd-escape --path. */
int famfs_unit_instance(const char *path, char *out, size_t len);
/*
 * Start famfs@INSTANCE.service for @dev on @mnt with daemon options
 * @opts; returns once it is mounted (0) or failed (-1, reason in @err).
 */
int famfs_unit_mount(const char *dev, const char *mnt, const char *opts,
		     char *err, size_t errlen);

#endif
