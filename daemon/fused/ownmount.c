// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which mount on our mount point is ours. After umount -l with files
 * still open the file system lives on, and the path may hold another
 * mount: the daemon knows its own by the major:minor the kernel gave it,
 * read once, and leaves any other alone.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fused.h"
#include "mountinfo.h"

/*
 * The mount table, watched once something outlives our mount: the .meta
 * mapping (metamap.c) and files waiting for commit_delay= (create.c) keep
 * the file system, and so the connection, alive after umount(8).
 */
static int table_fd = -1;
static bool left; /* our mount has left the table */

const char *fused_mount_devno(struct fused *fs)
{
	if (!fs->mount_devno[0] &&
	    !famfs_mount_devno(fs->mountpoint, fs->mount_devno,
			       sizeof(fs->mount_devno)))
		fs->mount_devno[0] = '\0';
	return fs->mount_devno[0] ? fs->mount_devno : NULL;
}

bool fused_own_mount_on_top(struct fused *fs)
{
	char devno[sizeof(fs->mount_devno)];

	/* Before INIT (no major:minor yet) it can only be the one we made. */
	if (!fs->mount_devno[0])
		return true;
	return famfs_mount_devno(fs->mountpoint, devno, sizeof(devno)) &&
	       !strcmp(devno, fs->mount_devno);
}

void fused_mount_watch(struct fused *fs)
{
	if (table_fd >= 0 || left || !fused_mount_devno(fs))
		return;
	table_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	/* it may have gone before the watch began */
	fused_mount_check(fs);
}

int fused_mount_watch_fd(void)
{
	return table_fd;
}

void fused_mount_check(struct fused *fs)
{
	if (left || table_fd < 0 ||
	    famfs_mount_with_devno(fs->mountpoint, fs->mount_devno))
		return;
	left = true;
	close(table_fd);
	table_fd = -1;
}

bool fused_mount_left(void)
{
	return left;
}
