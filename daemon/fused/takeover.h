/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A FUSE connection that outlives its daemon (takeover.c): kept in the
 * service manager's fd store with the state a successor needs, and taken
 * over by the next daemon without a new mount.
 */
#ifndef FAMFS_FUSED_TAKEOVER_H
#define FAMFS_FUSED_TAKEOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

struct fused;

/* Exit status of a daemon that handed its connection over (SIGUSR1). */
#define FUSED_EXIT_HANDOVER 75

/*
 * At start, before anything touches @mountpoint: were we handed a stored
 * connection (LISTEN_FDS famfs-conn and famfs-state) that we can take
 * over? Then fs->fuse_fd, mountpoint, fuse_dev and mount_time are set and
 * true is returned. A connection we must not take over is ended (its
 * mount detached, the store emptied), the journal says why, and we mount
 * anew as without one.
 */
bool fused_takeover_begin(struct fused *fs, const char *mountpoint);
/*
 * Once the device is open and the log read: does it agree with the state
 * the predecessor left? If not, the connection is ended as above.
 */
bool fused_takeover_verify(struct fused *fs);
/*
 * Take the connection over: libfuse answers the predecessor's INIT
 * locally (nothing reaches the kernel), then the kernel is asked to queue
 * again what the predecessor read and never answered. Returns 0 or -1.
 */
int fused_takeover_attach(struct fused *fs);

/*
 * The open .meta/.superblock and .meta/.log of a mount whose superblock
 * and log the daemon reads through the mount (metamap.c) go with the
 * connection (FDNAME famfs-sb, famfs-log).
 */
/* Were they handed to us with a connection we take over? */
bool fused_takeover_meta_kept(void);
/* Those fds (ours now), or false. */
bool fused_takeover_meta_fds(int *sbfd, int *logfd);
/* Keep copies beside our stored connection (nothing if it is not). */
void fused_takeover_store_meta(int sbfd, int logfd);
/* Drop them from the store: the mount they belong to is gone. */
void fused_takeover_forget_meta(void);

/* ---- hooks in the connection's read and writev (famfs_ext.c) ---- */
/* The local INIT request, once, instead of a read; else 0. */
ssize_t fused_takeover_feed(void *buf, size_t len);
/* The kernel's INIT request, as read, for the state. */
void fused_takeover_note_init(const void *req, size_t len);
/*
 * Send the INIT reply: to the kernel, then keep the connection in the fd
 * store; or, for the local INIT, nowhere (it is compared with the
 * predecessor's instead).
 */
ssize_t fused_takeover_init_reply(struct fused *fs, int fd,
				  const struct iovec *iov, int count);

/*
 * At exit: leave the connection to a successor? True when it is stored
 * and this is a hand-over (@handover: SIGUSR1) or a stop signal
 * (@signalled) while the service manager runs a restart of our unit.
 * Otherwise (a stop, the session ended by umount) the store is emptied
 * and false returned: the caller unmounts as before.
 */
bool fused_takeover_leave(struct fused *fs, bool signalled, bool handover);

#endif
