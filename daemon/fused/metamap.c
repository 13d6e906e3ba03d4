// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The superblock and log read through our own mount, on kernels whose
 * famfs dax driver serves no mapping of the device node (fsdev_dax, 7.3).
 *
 * Before mounting, the device is on device_dax and we read it through its
 * node as on any kernel (fused_metamap_begin(), then open_device()). Then
 * we keep a copy of the superblock, drop that mapping and move the device
 * to fsdev_dax (fused_metamap_handoff()): the mount needs it there.
 *
 * Once the kernel has answered INIT in famfs mode, a second thread clones
 * our mount (open_tree(OPEN_TREE_CLONE): a detached copy that only we
 * hold), opens .meta/.superblock and .meta/.log in it and maps them; the
 * loop serves the LOOKUP, OPEN and GET_FMAP that this takes, and the
 * kernel serves the faults. The loop then installs the mapping and only
 * then reports the mount ready (fused_metamap_finish()). Until then there
 * is no log to re-read: refreshes wait.
 *
 * The files are open in the clone, not in the mount everyone sees, so
 * umount(8) of that one is not refused as busy. They keep the file system
 * alive, though, and the kernel would never end the connection: we watch
 * the mount table and let go of it all when our mount leaves it
 * (fused_metamap_unmounted()); the connection then ends as usual. umount(8)
 * does not wait for us, so files written through the mount and closed
 * just before it may not be logged yet: then we let go once they are
 * (fused_metamap_pending_done()). From then until our connection is
 * closed, which ends the kernel's claim on the device, we hold the log
 * lock, which a new mount waits for before it moves the device
 * (famfs_dev_wait_writers()): nobody unbinds it from under us.
 *
 * A successor taking the connection over (takeover.c) can do neither: the
 * mount holds the device, and nobody serves the mount while it starts.
 * The open .meta files travel with the connection in the fd store, and
 * mapping them needs no daemon (fused_metamap_adopt()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fused.h"
#include "mountinfo.h"
#include "takeover.h"

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif

/* What the mapping thread hands the loop. */
static struct {
	pthread_t thread;
	bool running;
	int wake[2]; /* the thread writes one byte when done */
	int rc;
	char err[2 * PATH_MAX + 256];
	struct famfs_dev dev;
	int sbfd, logfd; /* copies for the fd store */
} job = {.wake = {-1, -1}, .sbfd = -1, .logfd = -1};

/* the mapping is installed and not yet let go of */
static bool mapped;
/* our mount is gone, files not yet logged keep the mapping */
static bool lingering;
/* the log lock, held from then until the connection is closed */
static int exit_lock = -1;

static char why[2 * PATH_MAX + 256];

const char *fused_metamap_begin(struct fused *fs)
{
	char where[PATH_MAX];
	bool rw, replacing;
	int rc;

	if (fused_takeover_meta_kept())
		return NULL; /* a successor: the kept files are its mapping */
	/*
	 * Readable on device_dax, as for any tool; but a dead famfs of the
	 * device at our mount point, which check_not_mounted() replaces,
	 * does not hold it back.
	 */
	replacing = famfs_mount_of(fs->devpath, where, sizeof(where), &rw) &&
		    !strcmp(where, fs->mountpoint) && famfs_mount_dead(where);
	rc = replacing ? famfs_dax_move(fs->devpath, FAMFS_READ_DRIVER) :
			 famfs_dax_make_readable(fs->devpath);
	if (rc)
		return famfs_errmsg();
	fs->meta_via_mount = true;
	return NULL;
}

/* The other devices, kept by name, outlive the mapping of the primary. */
static void move_members(struct famfs_dev *to, struct famfs_dev *from)
{
	if (to == from)
		return;
	memcpy(to->member, from->member, sizeof(to->member));
	memset(from->member, 0, sizeof(from->member));
}

const char *fused_metamap_handoff(struct fused *fs)
{
	struct famfs_dev keep = { 0 };

	fs->sb_copy = *fs->dev.sb;
	move_members(&keep, &fs->dev);
	famfs_dev_close(&fs->dev);
	move_members(&fs->dev, &keep);
	fs->dev.sb = &fs->sb_copy;
	fused_devloss_arm(fs);
	if (!famfs_dax_bind(fs->devpath))
		return NULL;
	snprintf(why, sizeof(why), "%s", famfs_errmsg());
	/* Leave it where users found it, not without a driver. */
	famfs_dax_move(fs->devpath, FAMFS_READ_DRIVER);
	return why;
}

/* The loop's mapping of @dev is ours now; its fds go to the fd store. */
static void install(struct fused *fs, struct famfs_dev *dev, int sbfd,
		    int logfd)
{
	move_members(dev, &fs->dev);
	fs->dev = *dev;
	fs->sb_copy = *dev->sb;
	fused_devloss_arm(fs);
	if (sbfd >= 0 && logfd >= 0)
		fused_takeover_store_meta(sbfd, logfd);
	mapped = true;
	fused_mount_watch(fs);
}

const char *fused_metamap_adopt(struct fused *fs)
{
	struct famfs_dev dev;
	int sbfd, logfd;

	if (!fused_takeover_meta_fds(&sbfd, &logfd))
		return "the open .meta files were not kept with the connection";
	if (famfs_dev_open_meta_fds(fs->mountpoint, sbfd, logfd, &dev))
		return famfs_errmsg();
	fs->meta_via_mount = true;
	/* the fd store has them still; the mount is in the table now */
	install(fs, &dev, -1, -1);
	return NULL;
}

static int openat_meta(int dir, const char *name, int mode)
{
	char p[64];

	snprintf(p, sizeof(p), "%s/%s", FUSED_META_DIR, name);
	return openat(dir, p, mode | O_CLOEXEC);
}

int fused_mount_clone(const struct fused *fs)
{
	return (int)syscall(SYS_open_tree, AT_FDCWD, fs->mountpoint,
			    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
}

static void *map_thread(void *arg)
{
	struct fused *fs = arg;
	int tree, sbfd = -1, logfd = -1;

	tree = fused_mount_clone(fs);
	if (tree >= 0) {
		sbfd = openat_meta(tree, FUSED_META_SB, O_RDONLY);
		/* the master's daemon appends what mkdir makes (create.c) */
		logfd = sbfd < 0 ? -1 :
				   openat_meta(tree, FUSED_META_LOG,
					       fs->readonly ? O_RDONLY : O_RDWR);
	}
	if (tree < 0 || sbfd < 0 || logfd < 0) {
		job.rc = -errno;
		snprintf(
			job.err, sizeof(job.err),
			"cannot open the superblock and log through the mount at %s (%s): %s",
			fs->mountpoint, tree < 0 ? "open_tree" : "openat",
			strerror(errno));
		if (sbfd >= 0)
			close(sbfd);
	} else {
		job.sbfd = dup(sbfd);
		job.logfd = dup(logfd);
		job.rc = famfs_dev_open_meta_fds(fs->mountpoint, sbfd, logfd,
						 &job.dev);
		if (job.rc)
			snprintf(
				job.err, sizeof(job.err),
				"cannot map the superblock and log through the mount at %s: %s",
				fs->mountpoint, famfs_errmsg());
	}
	if (tree >= 0)
		close(tree); /* the open files hold the mount */
	if (write(job.wake[1], "", 1) < 0) {
		/* the loop is gone: nobody to tell */
	}
	return NULL;
}

int fused_metamap_start(struct fused *fs)
{
	int rc;

	if (pipe2(job.wake, O_CLOEXEC) < 0)
		return -errno;
	rc = pthread_create(&job.thread, NULL, map_thread, fs);
	if (rc) {
		close(job.wake[0]);
		close(job.wake[1]);
		job.wake[0] = job.wake[1] = -1;
		return -rc;
	}
	job.running = true;
	return 0;
}

int fused_metamap_wake_fd(void)
{
	return job.running ? job.wake[0] : -1;
}

/* The same famfs as the one we read before mounting? */
static bool same_fs(const struct famfs_omf_superblock *a,
		    const struct famfs_omf_superblock *b)
{
	return !memcmp(a->fs_uuid, b->fs_uuid, sizeof(a->fs_uuid)) &&
	       a->log_offset == b->log_offset && a->log_len == b->log_len &&
	       a->daxdev.size == b->daxdev.size;
}

void fused_metamap_finish(struct fused *fs)
{
	char b;

	if (read(job.wake[0], &b, 1) < 0 && errno == EAGAIN)
		return;
	pthread_join(job.thread, NULL);
	job.running = false;
	close(job.wake[0]);
	close(job.wake[1]);
	job.wake[0] = job.wake[1] = -1;
	if (!job.rc && !same_fs(&fs->sb_copy, job.dev.sb)) {
		famfs_dev_close(&job.dev);
		job.rc = -ESTALE;
		snprintf(
			job.err, sizeof(job.err),
			"the superblock seen through the mount at %s is not the one read from %s before mounting",
			fs->mountpoint, fs->devpath);
	}
	if (job.rc) {
		if (job.sbfd >= 0)
			close(job.sbfd);
		if (job.logfd >= 0)
			close(job.logfd);
		fused_ready(fs, job.err);
		fuse_session_exit(fs->se);
		return;
	}
	install(fs, &job.dev, job.sbfd, job.logfd);
	close(job.sbfd);
	close(job.logfd);
	/* Entries logged while we mounted. */
	fused_refresh(fs);
	fused_log(L_INFO,
		  "superblock and log of %s mapped through the mount at %s",
		  fs->devpath, fs->mountpoint);
	fused_ready(fs, NULL);
}

/* Let go of the mapping: the connection then ends. */
static void let_go(struct fused *fs)
{
	mapped = false;
	/*
	 * The kernel gives up our claim on the device only when the FUSE fd
	 * is closed (fused_metamap_end()). Until then the log lock tells a
	 * new mount, which waits for it, not to unbind the device under us.
	 */
	if (fs->dev.id_locked) {
		exit_lock = fs->dev.id_lock_fd;
		fs->dev.id_locked = false;
	} else {
		exit_lock = famfs_dev_hold_writers(fs->devpath);
	}
	fused_takeover_forget_meta();
	famfs_dev_close(&fs->dev);
	fs->dev.sb = &fs->sb_copy;
	fused_devloss_arm(fs);
	fused_log(
		L_NOTICE,
		"%s was unmounted: the superblock and log mappings are released",
		fs->mountpoint);
}

void fused_metamap_unmounted(struct fused *fs)
{
	if (!mapped || lingering)
		return;
	if (!fs->pending) {
		let_go(fs);
		return;
	}
	lingering = true;
	fused_log(L_NOTICE,
		  "%s was unmounted with %llu files written through it not yet logged: they are logged first",
		  fs->mountpoint, (unsigned long long)fs->npending);
}

void fused_metamap_end(void)
{
	if (exit_lock >= 0)
		close(exit_lock);
	exit_lock = -1;
}

void fused_metamap_pending_done(struct fused *fs)
{
	if (lingering && !fs->pending) {
		lingering = false;
		let_go(fs);
	}
}
