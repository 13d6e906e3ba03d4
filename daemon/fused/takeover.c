// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Restart without unmounting. Once the kernel's INIT is answered, a
 * daemon run by systemd (NOTIFY_SOCKET) stores a duplicate of its FUSE
 * connection in the service's fd store (FDNAME=famfs-conn) and, in a
 * memfd stored beside it (FDNAME=famfs-state), what a successor needs:
 * the INIT exchange (the kernel's request and our reply: flags, protocol
 * minor, max_write), mode, device, mount point, role, the log length,
 * the mount time (file times are derived from it), counters.
 *
 * A daemon started with both (LISTEN_FDS) takes the connection over: no
 * mount(2) and no INIT to the kernel. libfuse has no way to adopt a
 * connection, so we replay the stored INIT request through our custom
 * read hook; libfuse and our init handler set themselves up exactly as
 * for the kernel's, and the reply goes nowhere (the custom writev drops
 * it after comparing it with the stored one). Then FUSE_NOTIFY_RESEND
 * (when the kernel offered FUSE_HAS_RESEND) puts the requests that the
 * predecessor read and never answered back on the queue.
 *
 * The state is shared memory: a counter in it of takeovers begun and not
 * finished survives a daemon that dies while taking over, and the third
 * in a row makes the next daemon mount anew instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "fused.h"
#include "mountinfo.h"
#include "takeover.h"

/* Linux 6.9 (protocol 7.40); bookworm's headers predate them. */
#ifndef FUSE_HAS_RESEND
#define FUSE_HAS_RESEND (1ULL << 39)
#endif
#define NOTIFY_RESEND 7

#define CONN_NAME "famfs-conn"
#define STATE_NAME "famfs-state"
#define META_SB_NAME "famfs-sb"
#define META_LOG_NAME "famfs-log"
#define STATE_MAGIC "famfsTKO"
#define STATE_VERSION 1
#define MAX_FAILED 3

/*
 * The state a successor reads, version 1. Only a daemon of the same
 * version reads it; any other refuses it and mounts anew. Fixed-width
 * fields; it never leaves this host.
 */
struct tko_state {
	char magic[8];
	uint32_t version;
	uint32_t size;
	uint32_t failed;    /* takeovers begun and not finished, in a row */
	uint32_t takeovers; /* finished, over the mount's life */
	int64_t mount_time;
	uint64_t log_entries;
	uint32_t famfs_mode, direct_reads, readonly, role;
	uint32_t init_in_len, init_out_len;
	uint8_t init_in[256];  /* the kernel's INIT request, header included */
	uint8_t init_out[128]; /* our reply's body (struct fuse_init_out) */
	char devno[32];	       /* of the mount, "major:minor" */
	char devpath[PATH_MAX];
	char mountpoint[PATH_MAX];
	char fuse_dev[PATH_MAX];
};

/* /dev/fuse: misc device 10:229, fixed by the kernel */
#define FUSE_MISC_MAJOR 10
#define FUSE_MISC_MINOR 229

static struct tko_state st;
static int state_fd = -1;
static bool stored;	   /* our connection is in the fd store */
static bool adopting;	   /* we were handed one and take it over */
static bool feed_init;	   /* the next read returns the stored INIT */
static bool local_pending; /* the next INIT reply goes nowhere */
static int meta_sb_fd = -1, meta_log_fd = -1; /* handed to us (metamap.c) */

static void save_state(void)
{
	if (state_fd >= 0 && pwrite(state_fd, &st, sizeof(st), 0) !=
				     (ssize_t)sizeof(st))
		fused_log(L_WARN, "cannot write the takeover state: %s",
			  strerror(errno));
}

void fused_takeover_forget_meta(void)
{
	sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=" META_SB_NAME);
	sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=" META_LOG_NAME);
}

static void forget_store(void)
{
	sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=" CONN_NAME);
	sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=" STATE_NAME);
	fused_takeover_forget_meta();
	stored = false;
}

static void close_meta(void)
{
	if (meta_sb_fd >= 0)
		close(meta_sb_fd);
	if (meta_log_fd >= 0)
		close(meta_log_fd);
	meta_sb_fd = meta_log_fd = -1;
}

bool fused_takeover_meta_kept(void)
{
	return adopting && meta_sb_fd >= 0 && meta_log_fd >= 0;
}

bool fused_takeover_meta_fds(int *sbfd, int *logfd)
{
	if (!fused_takeover_meta_kept())
		return false;
	*sbfd = meta_sb_fd;
	*logfd = meta_log_fd;
	meta_sb_fd = meta_log_fd = -1;
	return true;
}

void fused_takeover_store_meta(int sbfd, int logfd)
{
	if (!stored)
		return;
	if (sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=" META_SB_NAME,
				   &sbfd, 1) <= 0 ||
	    sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=" META_LOG_NAME,
				   &logfd, 1) <= 0)
		fused_log(L_WARN, "cannot store the open .meta files with the service manager: a restart will fail and need a new mount");
}

/*
 * A stored connection we will not serve: detach the mount it serves
 * (@detach: it is the famfs mount at @mountpoint, one unit per mount
 * point) and drop every copy of it, so that nothing waits for a daemon
 * that never comes.
 */
static void drop(struct fused *fs, const char *mountpoint, const char *why,
		 bool detach)
{
	fused_log(L_WARN, "not taking over the FUSE connection kept for %s: %s; mounting anew",
		  mountpoint, why);
	if (detach && famfs_mount_at(mountpoint) &&
	    umount2(mountpoint, MNT_DETACH) < 0)
		fused_log(L_WARN, "cannot detach %s: %s", mountpoint,
			  strerror(errno));
	forget_store();
	close_meta();
	if (fs->fuse_fd >= 0)
		close(fs->fuse_fd);
	if (state_fd >= 0)
		close(state_fd);
	fs->fuse_fd = state_fd = -1;
	fs->mount_time = 0;
	adopting = false;
	/* The new mount starts its own state: no failures, no takeovers. */
	memset(&st, 0, sizeof(st));
}

/* Is @fd open on a FUSE device: the stock /dev/fuse or the famfs module's? */
static bool fuse_device_fd(int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0 || !S_ISCHR(sb.st_mode))
		return false;
	return sb.st_rdev == makedev(FUSE_MISC_MAJOR, FUSE_MISC_MINOR) ||
	       famfs_ext_module_fd(fd);
}

/* Does every string of the state end inside its field? */
static bool state_strings_ok(void)
{
	return memchr(st.devno, 0, sizeof(st.devno)) &&
	       memchr(st.devpath, 0, sizeof(st.devpath)) &&
	       memchr(st.mountpoint, 0, sizeof(st.mountpoint)) &&
	       memchr(st.fuse_dev, 0, sizeof(st.fuse_dev));
}

/*
 * Why the state cannot be used, or NULL. @detach is cleared when the
 * mount at @mountpoint, if any, is not the one the connection serves.
 */
static const char *state_problem(int conn, const char *mountpoint, char *buf,
				 size_t len, bool *detach)
{
	struct pollfd pfd = { .fd = conn, .events = POLLIN };
	ssize_t got = pread(state_fd, &st, sizeof(st), 0);
	char devno[32];

	/*
	 * The store is root's, but what is in it is checked like any input:
	 * a connection that is no FUSE device, or a state whose strings run
	 * past their fields, is not taken over (as for any state we cannot
	 * use, a famfs left at the mount point is detached).
	 */
	if (!fuse_device_fd(conn))
		return "the stored connection is not a FUSE device";
	if (got < (ssize_t)offsetof(struct tko_state, failed) ||
	    memcmp(st.magic, STATE_MAGIC, sizeof(st.magic)))
		return "its state is not ours";
	if (st.version != STATE_VERSION || st.size != sizeof(st)) {
		snprintf(buf, len,
			 "it was kept by an incompatible famfs-fused (state version %u, size %u; this one reads version %u, size %zu)",
			 st.version, st.size, STATE_VERSION, sizeof(st));
		return buf;
	}
	if (got != (ssize_t)sizeof(st) || !state_strings_ok())
		return "its state is damaged (short, or a name runs past its field)";
	if (strcmp(st.mountpoint, mountpoint)) {
		snprintf(buf, len, "it serves %s", st.mountpoint);
		return buf;
	}
	if (st.failed >= MAX_FAILED) {
		snprintf(buf, len,
			 "%u takeovers in a row failed (a daemon died or gave up while taking over)",
			 st.failed);
		return buf;
	}
	if (st.init_in_len < sizeof(struct fuse_in_header) ||
	    st.init_in_len > sizeof(st.init_in) ||
	    st.init_out_len > sizeof(st.init_out))
		return "its state is damaged";
	/* The kernel ends a connection at umount: it polls as an error. */
	*detach = false;
	if (poll(&pfd, 1, 0) < 0 || (pfd.revents & (POLLERR | POLLHUP)))
		return "the connection has ended (unmounted)";
	if (!famfs_mount_devno(mountpoint, devno, sizeof(devno)) ||
	    strcmp(devno, st.devno)) {
		snprintf(buf, len, "the famfs mount it served (%s) is no longer at %s",
			 st.devno, mountpoint);
		return buf;
	}
	return NULL;
}

bool fused_takeover_begin(struct fused *fs, const char *mountpoint)
{
	char **names = NULL, why[PATH_MAX + 128];
	const char *problem;
	int n = sd_listen_fds_with_names(1, &names), conn = -1;
	bool detach = true;

	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;

		if (names && !strcmp(names[i], CONN_NAME))
			conn = fd;
		else if (names && !strcmp(names[i], STATE_NAME))
			state_fd = fd;
		else if (names && !strcmp(names[i], META_SB_NAME))
			meta_sb_fd = fd;
		else if (names && !strcmp(names[i], META_LOG_NAME))
			meta_log_fd = fd;
		else
			close(fd); /* nothing else is ours to keep */
		if (names)
			free(names[i]);
	}
	free(names);
	if (conn < 0 && state_fd < 0) {
		close_meta();
		return false;
	}
	fs->fuse_fd = conn;
	fs->module_dev = famfs_ext_module_fd(conn);
	adopting = true;
	if (conn < 0 || state_fd < 0)
		problem = conn < 0 ? "the connection is missing" :
				     "its state is missing";
	else
		problem = state_problem(conn, mountpoint, why, sizeof(why),
					&detach);
	/* Without them we could not read the log (metamap.c). */
	if (!problem && st.famfs_mode && !famfs_kernel_dax_node_maps() &&
	    (meta_sb_fd < 0 || meta_log_fd < 0))
		problem = "the open .meta files were not kept with it (the previous daemon had not mapped them yet)";
	if (problem) {
		drop(fs, mountpoint, problem, detach);
		return false;
	}
	/* Counted until we serve: a daemon dying here counts as a failure. */
	st.failed++;
	save_state();
	stored = true;
	snprintf(fs->mountpoint, sizeof(fs->mountpoint), "%s", st.mountpoint);
	snprintf(fs->fuse_dev, sizeof(fs->fuse_dev), "%s", st.fuse_dev);
	fs->mount_time = st.mount_time;
	fs->takeovers = st.takeovers;
	return true;
}

bool fused_takeover_verify(struct fused *fs)
{
	char why[2 * PATH_MAX + 128];

	if (!adopting)
		return false;
	if (strcmp(fs->devpath, st.devpath))
		snprintf(why, sizeof(why), "it serves %s, not %s", st.devpath,
			 fs->devpath);
	else if (fs->ns.nindex < st.log_entries)
		snprintf(why, sizeof(why),
			 "the log on %s has %llu entries, fewer than the %llu it served (not the same famfs)",
			 fs->devpath, (unsigned long long)fs->ns.nindex,
			 (unsigned long long)st.log_entries);
	else if (fs->readonly != (bool)st.readonly ||
		 fs->role != (enum famfs_role)st.role)
		snprintf(why, sizeof(why),
			 "it was served as %s%s, we would serve it as %s%s",
			 famfs_role_name((enum famfs_role)st.role),
			 st.readonly ? " (read-only)" : "",
			 famfs_role_name(fs->role),
			 fs->readonly ? " (read-only)" : "");
	else
		return true;
	drop(fs, fs->mountpoint, why, true);
	fs->fuse_dev[0] = '\0';
	return false;
}

ssize_t fused_takeover_feed(void *buf, size_t len)
{
	if (!feed_init || len < st.init_in_len)
		return 0;
	feed_init = false;
	local_pending = true;
	memcpy(buf, st.init_in, st.init_in_len);
	return st.init_in_len;
}

void fused_takeover_note_init(const void *req, size_t len)
{
	if (len > sizeof(st.init_in))
		return; /* a future INIT too large for version 1: never stored */
	memcpy(st.init_in, req, len);
	st.init_in_len = (uint32_t)len;
}

static uint64_t init_in_flags(void)
{
	struct fuse_init_in in;
	size_t body = st.init_in_len - sizeof(struct fuse_in_header);

	memset(&in, 0, sizeof(in));
	memcpy(&in, st.init_in + sizeof(struct fuse_in_header),
	       body < sizeof(in) ? body : sizeof(in));
	return in.flags | ((in.flags & FUSE_INIT_EXT) ?
				   (uint64_t)in.flags2 << 32 :
				   0);
}

/* Keep the connection and the state in the service manager's fd store. */
static void store(struct fused *fs)
{
	int sfd;

	if (!getenv("NOTIFY_SOCKET") || !st.init_in_len)
		return;
	memcpy(st.magic, STATE_MAGIC, sizeof(st.magic));
	st.version = STATE_VERSION;
	st.size = sizeof(st);
	st.mount_time = fs->mount_time;
	st.log_entries = fs->ns.nindex;
	st.famfs_mode = fs->famfs_mode;
	st.direct_reads = fs->direct_reads;
	st.readonly = fs->readonly;
	st.role = fs->role;
	if (!fused_mount_devno(fs))
		return;
	snprintf(st.devno, sizeof(st.devno), "%s", fs->mount_devno);
	snprintf(st.devpath, sizeof(st.devpath), "%s", fs->devpath);
	snprintf(st.mountpoint, sizeof(st.mountpoint), "%s", fs->mountpoint);
	snprintf(st.fuse_dev, sizeof(st.fuse_dev), "%s", fs->fuse_dev);
	sfd = memfd_create(STATE_NAME, MFD_CLOEXEC);
	if (sfd < 0) {
		fused_log(L_WARN, "no takeover state (memfd: %s): a restart will mount anew",
			  strerror(errno));
		return;
	}
	state_fd = sfd;
	save_state();
	if (sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=" CONN_NAME,
				   &fs->fuse_fd, 1) <= 0 ||
	    sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=" STATE_NAME,
				   &sfd, 1) <= 0) {
		fused_log(L_WARN, "cannot store the FUSE connection with the service manager: a restart will mount anew");
		return;
	}
	stored = true;
	fused_log(L_INFO, "FUSE connection kept in the service manager's fd store: a restart takes it over");
}

ssize_t fused_takeover_init_reply(struct fused *fs, int fd,
				  const struct iovec *iov, int count)
{
	size_t total = 0, body = count > 1 ? iov[1].iov_len : 0;
	ssize_t n;

	for (int i = 0; i < count; i++)
		total += iov[i].iov_len;
	if (!local_pending) {
		n = writev(fd, iov, count);
		if (n == (ssize_t)total && body <= sizeof(st.init_out)) {
			memcpy(st.init_out, iov[1].iov_base, body);
			st.init_out_len = (uint32_t)body;
			store(fs);
		}
		return n;
	}
	local_pending = false;
	if (body != st.init_out_len ||
	    memcmp(iov[1].iov_base, st.init_out, body)) {
		struct fuse_init_out now, then;

		memset(&now, 0, sizeof(now));
		memset(&then, 0, sizeof(then));
		memcpy(&now, iov[1].iov_base,
		       body < sizeof(now) ? body : sizeof(now));
		memcpy(&then, st.init_out,
		       st.init_out_len < sizeof(then) ? st.init_out_len :
							sizeof(then));
		/* Larger requests than we can read would fail in the kernel. */
		if (then.max_write > now.max_write) {
			fused_log(L_ERR, "the kernel agreed to writes of %u bytes, we read only %u: cannot take over",
				  then.max_write, now.max_write);
			fuse_session_exit(fs->se);
			return (ssize_t)total;
		}
		fused_set_io_size(fs, then.max_write);
		fused_log(L_NOTICE, "our INIT reply differs from the one the kernel keeps (flags 0x%x/0x%x, now 0x%x/0x%x): the kernel's stands",
			  then.flags, then.flags2, now.flags, now.flags2);
	}
	/*
	 * What the kernel agreed to decides how we serve (famfs mode: it
	 * never sends READ; direct reads), even if our options changed.
	 */
	if (fs->famfs_mode != (bool)st.famfs_mode ||
	    fs->direct_reads != (bool)st.direct_reads)
		fused_log(L_NOTICE, "the kernel keeps %s mode%s from the first INIT: serving it so",
			  st.famfs_mode ? "famfs" : "fallback",
			  st.direct_reads ? " with direct reads" : "");
	fs->famfs_mode = st.famfs_mode;
	fs->direct_reads = st.direct_reads;
	return (ssize_t)total;
}

int fused_takeover_attach(struct fused *fs)
{
	struct fuse_out_header resend = {
		.len = sizeof(resend),
		.error = NOTIFY_RESEND,
	};
	struct fuse_buf buf = { 0 };
	bool can_resend = init_in_flags() & FUSE_HAS_RESEND;
	int res;

	feed_init = true;
	res = fuse_session_receive_buf(fs->se, &buf);
	if (res > 0)
		fuse_session_process_buf(fs->se, &buf);
	free(buf.mem);
	if (res <= 0 || !fs->initialized || fuse_session_exited(fs->se))
		return -1;
	if (can_resend &&
	    write(fs->fuse_fd, &resend, sizeof(resend)) != sizeof(resend))
		fused_log(L_WARN, "FUSE_NOTIFY_RESEND refused (%s): requests the previous daemon read and never answered stay unanswered",
			  strerror(errno));
	st.failed = 0;
	st.takeovers++;
	fs->takeovers = st.takeovers;
	save_state();
	fused_log(L_NOTICE, "took over the FUSE connection of %s (takeover %u of this mount)%s",
		  fs->mountpoint, st.takeovers,
		  can_resend ? "; unanswered requests queued again" :
			       "; the kernel cannot queue unanswered requests again (no FUSE_HAS_RESEND)");
	return 0;
}

/*
 * Is a restart of our unit under way (systemctl restart, try-restart,
 * a package upgrade)? systemd sends SIGTERM for a stop and for a restart
 * alike; only the job it runs on the unit tells them apart. We ask it
 * (the system bus; $DBUS_SYSTEM_BUS_ADDRESS names another, for tests)
 * which unit we belong to, that unit's job, and the job's type. Any
 * doubt (no bus, no unit, no job, a slow answer) means a stop: we
 * unmount, as before.
 */
static bool restart_queued(void)
{
	static const char *sd1 = "org.freedesktop.systemd1";
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *unit = NULL, *job = NULL;
	const char *unit_path, *job_path;
	char *type = NULL;
	sd_bus *bus = NULL;
	uint32_t id = 0;
	bool yes = false;

	if (sd_bus_open_system(&bus) < 0)
		return false;
	sd_bus_set_method_call_timeout(bus, 2 * 1000 * 1000);
	if (sd_bus_call_method(bus, sd1, "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager",
			       "GetUnitByPID", &err, &unit, "u",
			       (uint32_t)getpid()) >= 0 &&
	    sd_bus_message_read(unit, "o", &unit_path) > 0 &&
	    sd_bus_get_property(bus, sd1, unit_path,
				"org.freedesktop.systemd1.Unit", "Job", &err,
				&job, "(uo)") >= 0 &&
	    sd_bus_message_read(job, "(uo)", &id, &job_path) > 0 && id &&
	    sd_bus_get_property_string(bus, sd1, job_path,
				       "org.freedesktop.systemd1.Job",
				       "JobType", &err, &type) >= 0)
		yes = !strcmp(type, "restart") || !strcmp(type, "try-restart");
	if (sd_bus_error_is_set(&err))
		fused_log(L_INFO, "asking systemd whether this is a restart: %s",
			  err.message ? err.message : err.name);
	free(type);
	sd_bus_message_unref(job);
	sd_bus_message_unref(unit);
	sd_bus_error_free(&err);
	sd_bus_flush_close_unref(bus);
	return yes;
}

bool fused_takeover_leave(struct fused *fs, bool signalled, bool handover)
{
	if (!stored)
		return false;
	if (signalled && fs->initialized &&
	    (handover || restart_queued())) {
		fused_log(L_NOTICE, "restarting: the FUSE connection of %s stays in the service manager's fd store for the next daemon",
			  fs->mountpoint);
		return true;
	}
	forget_store();
	return false;
}
