/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which famfs mounts this host has, from /proc/self/mountinfo. */
#ifndef FAMFS_MOUNTINFO_H
#define FAMFS_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

/* Is @path (a canonical path) the mount point of a famfs? */
bool famfs_mount_at(const char *path);
/*
 * Is @path the mount point of a famfs whose daemon is gone (the kernel
 * answers ENOTCONN there)? A new daemon may take such a mount's place.
 */
bool famfs_mount_dead(const char *path);
/*
 * Is the device @dev (any path to it) mounted as a famfs? Compares the
 * device's identity with each mount's source, never their names. Says
 * where the first such mount is and whether it is read-write.
 */
bool famfs_mount_of(const char *dev, char *where, size_t len, bool *rw);

/*
 * "major:minor" of the file system mounted at @path, without touching it:
 * the daemon must never stat its own mount (it would wait for itself).
 */
bool famfs_mount_devno(const char *path, char *out, size_t len);
/* Is the file system @devno ("major:minor") mounted on @path, at any depth? */
bool famfs_mount_with_devno(const char *path, const char *devno);

#endif
