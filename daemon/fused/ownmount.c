// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which mount on our mount point is ours. After umount -l with files
 * still open the file system lives on, and the path may hold another
 * mount: the daemon knows its own by the major:minor the kernel gave it,
 * read once, and leaves any other alone.
 */
#include <string.h>

#include "fused.h"
#include "mountinfo.h"

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
