// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening what holds a famfs: a devdax character device, a regular file
 * standing in for one, or a mounted famfs reached through its .meta files.
 * The memory is mapped shared; what we write is flushed so that other
 * hosts mapping the same memory see it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal.h"

#define META_DIR ".meta"
#define META_SB ".meta/.superblock"
#define META_LOG ".meta/.log"

static int dax_size(const struct stat *st, const char *path, uint64_t *size)
{
	char sys[128];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/size",
		 major(st->st_rdev), minor(st->st_rdev));
	f = fopen(sys, "r");
	if (!f)
		return famfs_fail(ENODEV, "%s is a character device but not a dax device (no %s)",
				  path, sys);
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return famfs_fail(EIO, "cannot read the size of %s from %s",
				  path, sys);
	*size = v;
	return 0;
}

int famfs_device_size(int fd, const char *path, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return famfs_fail(errno, "cannot stat %s: %s", path,
				  strerror(errno));
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	if (S_ISCHR(st.st_mode))
		return dax_size(&st, path, size);
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size) < 0)
			return famfs_fail(errno, "cannot get the size of %s: %s",
					  path, strerror(errno));
		return 0;
	}
	return famfs_fail(ENODEV, "%s is not a dax device, block device or regular file",
			  path);
}

void famfs_dev_exposure(const char *path,
			void (*warn)(const char *msg, void *arg), void *arg)
{
	mode_t perm;
	struct stat st;
	char msg[PATH_MAX * 2 + 200];

	if (stat(path, &st) < 0)
		return;
	perm = st.st_mode & 07777;
	if (st.st_uid != 0) {
		snprintf(msg, sizeof(msg),
			 "%s is owned by uid %u: that user can rewrite its log, and with it every file, owner and mode the mount serves",
			 path, (unsigned int)st.st_uid);
		warn(msg, arg);
	}
	if (perm & 022) {
		snprintf(msg, sizeof(msg),
			 "%s can be written by users other than root (mode %04o): any of them can rewrite its log",
			 path, (unsigned int)perm);
		warn(msg, arg);
	}
	if (perm & 044) {
		snprintf(msg, sizeof(msg),
			 "%s can be read by users other than root (mode %04o): they can read every file in it, whatever the file's mode; chmod 600 %s",
			 path, (unsigned int)perm, path);
		warn(msg, arg);
	}
}

/* Is @fd's file in a file system that only ever lives in memory? */
static bool in_memory_fs(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && (sfs.f_type == TMPFS_MAGIC ||
					  sfs.f_type == RAMFS_MAGIC);
}

static void *map(int fd, size_t len, bool rw, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | (rw ? PROT_WRITE : 0),
		       MAP_SHARED, fd, off);

	return p == MAP_FAILED ? NULL : p;
}

int famfs_mount_root(const char *path, char *root, size_t len)
{
	char buf[PATH_MAX], probe[PATH_MAX + 32];

	if (!realpath(path, buf))
		return famfs_fail(errno, "%s: %s", path, strerror(errno));
	for (;;) {
		snprintf(probe, sizeof(probe), "%s/%s",
			 strcmp(buf, "/") ? buf : "", META_SB);
		if (access(probe, F_OK) == 0) {
			snprintf(root, len, "%s", buf);
			return 0;
		}
		if (!strcmp(buf, "/"))
			return famfs_fail(ENOENT, "%s is not inside a mounted famfs (no %s found above it)",
					  path, META_SB);
		*(strrchr(buf, '/') == buf ? buf + 1 : strrchr(buf, '/')) = '\0';
	}
}

int famfs_sb_read_file(const char *path, struct famfs_omf_superblock *sb)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t got;

	if (fd < 0)
		return famfs_fail(errno, "%s: %s", path, strerror(errno));
	got = pread(fd, sb, sizeof(*sb), 0);
	err = errno;
	close(fd);
	if (got < 0)
		return famfs_fail(err, "%s: %s", path, strerror(err));
	if ((size_t)got < sizeof(*sb))
		return famfs_fail(EUCLEAN, "%s: %zd bytes, not a superblock",
				  path, got);
	return 0;
}

/* Map the superblock file @sbfd (closed here); @logfd becomes dev->fd. */
static int map_meta(const char *root, int sbfd, int logfd, bool rw,
		    struct famfs_dev *dev)
{
	struct statx st;

	snprintf(dev->path, sizeof(dev->path), "%s", root);
	dev->kind = FAMFS_DEV_META;
	dev->fd = logfd;
	dev->writable = rw;
	/*
	 * The size the kernel has, never asked of the daemon: a daemon
	 * taking a connection over maps its .meta files before anyone
	 * serves the mount (and their size never changes).
	 */
	if (statx(sbfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_SIZE,
		  &st) < 0 ||
	    st.stx_size < sizeof(*dev->sb)) {
		close(sbfd);
		return famfs_fail(EUCLEAN, "%s/%s is too small to be a famfs superblock",
				  root, META_SB);
	}
	dev->meta_sb_map = map(sbfd, sizeof(*dev->sb), false, 0);
	close(sbfd);
	if (!dev->meta_sb_map)
		return famfs_fail(errno, "cannot map %s/%s: %s", root, META_SB,
				  strerror(errno));
	dev->sb = dev->meta_sb_map;
	dev->size = dev->sb->daxdev.size;
	return 0;
}

static int open_meta(const char *path, bool rw, struct famfs_dev *dev)
{
	char root[PATH_MAX], p[PATH_MAX + 32];
	int sbfd, logfd, rc;

	rc = famfs_mount_root(path, root, sizeof(root));
	if (rc)
		return rc;
	snprintf(p, sizeof(p), "%s/%s", root, META_SB);
	sbfd = open(p, O_RDONLY | O_CLOEXEC);
	if (sbfd < 0 && errno == EACCES)
		return famfs_fail(EACCES, "%s/%s is root's: run this as root",
				  root, META_DIR);
	if (sbfd < 0)
		return famfs_fail(errno, "cannot open %s: %s", p, strerror(errno));
	snprintf(p, sizeof(p), "%s/%s", root, META_LOG);
	logfd = open(p, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (logfd < 0) {
		rc = famfs_fail(errno, "cannot open %s%s: %s", p,
				rw ? " for writing" : "", strerror(errno));
		close(sbfd);
		return rc;
	}
	return map_meta(root, sbfd, logfd, rw, dev);
}

static int open_raw(const char *path, bool rw, bool rebind,
		    struct famfs_dev *dev)
{
	struct stat st;
	int rc = rebind ? famfs_dax_make_readable(path) : 0;

	if (rc)
		return rc;
	snprintf(dev->path, sizeof(dev->path), "%s", path);
	dev->fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (dev->fd < 0) {
		if (rw && (errno == EROFS || errno == EACCES || errno == EPERM))
			return famfs_fail(errno, "%s is read-only (%s)", path,
					  strerror(errno));
		return famfs_fail(errno, "cannot open %s: %s", path,
				  strerror(errno));
	}
	dev->writable = rw;
	if (fstat(dev->fd, &st) < 0)
		return famfs_fail(errno, "cannot stat %s: %s", path,
				  strerror(errno));
	dev->kind = S_ISCHR(st.st_mode) ? FAMFS_DEV_DAX : FAMFS_DEV_FILE;
	dev->in_memory = S_ISREG(st.st_mode) && in_memory_fs(dev->fd);
	rc = famfs_device_size(dev->fd, path, &dev->size);
	if (rc)
		return rc;
	if (dev->size < sizeof(struct famfs_omf_superblock))
		return famfs_fail(ENOSPC, "%s is too small (%llu bytes) to hold a famfs superblock",
				  path, (unsigned long long)dev->size);
	dev->base = map(dev->fd, dev->size, rw, 0);
	if (!dev->base)
		return famfs_fail(errno, "cannot map %s (%llu bytes): %s", path,
				  (unsigned long long)dev->size,
				  strerror(errno));
	dev->sb = (struct famfs_omf_superblock *)dev->base;
	return 0;
}

/* Map the log once the superblock is known to be good. */
static int map_log(struct famfs_dev *dev)
{
	char p[PATH_MAX + 32];

	dev->log_len = dev->sb->log_len;
	if (dev->kind != FAMFS_DEV_META) {
		dev->log = (struct famfs_omf_log *)(dev->base +
						    dev->sb->log_offset);
		return 0;
	}
	dev->meta_log_map = map(dev->fd, dev->log_len, dev->writable, 0);
	if (!dev->meta_log_map) {
		snprintf(p, sizeof(p), "%s/%s", dev->path, META_LOG);
		return famfs_fail(errno, "cannot map %s: %s", p, strerror(errno));
	}
	dev->log = dev->meta_log_map;
	return 0;
}

static int map_log_if_valid(struct famfs_dev *dev)
{
	famfs_dev_invalidate(dev, dev->sb, sizeof(*dev->sb));
	return famfs_sb_check(dev->sb, dev->size) == 0 ? map_log(dev) : 0;
}

int famfs_dev_open(const char *path, unsigned int flags, struct famfs_dev *dev)
{
	bool rw = flags & FAMFS_OPEN_RW;
	struct stat st;
	int rc;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	if (stat(path, &st) < 0) {
		rc = famfs_fail(errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	rc = S_ISDIR(st.st_mode) ?
		     open_meta(path, rw, dev) :
		     open_raw(path, rw, !(flags & FAMFS_OPEN_NO_REBIND), dev);
	if (rc)
		goto fail;
	rc = map_log_if_valid(dev);
	if (rc)
		goto fail;
	return 0;
fail:
	famfs_dev_close(dev);
	return rc;
}

/* A famfs, not just a device: a valid superblock and log header. */
static int check_fs(const char *path, struct famfs_dev *dev)
{
	int rc = famfs_sb_check(dev->sb, dev->size);

	if (rc) {
		famfs_dev_close(dev);
		return rc;
	}
	famfs_dev_invalidate(dev, dev->log, sizeof(*dev->log));
	rc = famfs_log_check_header(dev->log, dev->log_len);
	if (rc) {
		/* The superblock is a famfs's: never send anyone to mkfs. */
		rc = famfs_fail(EUCLEAN, "the famfs log is damaged (%s); the superblock is valid: run famfs fsck %s",
				famfs_errmsg(), path);
		famfs_dev_close(dev);
	}
	return rc;
}

int famfs_dev_open_fs(const char *path, unsigned int flags,
		      struct famfs_dev *dev)
{
	int rc = famfs_dev_open(path, flags, dev);

	return rc ? rc : check_fs(path, dev);
}

int famfs_dev_open_meta_fds(const char *root, int sbfd, int logfd,
			    struct famfs_dev *dev)
{
	int fl = fcntl(logfd, F_GETFL);
	int rc;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	rc = map_meta(root, sbfd, logfd, fl >= 0 && (fl & O_ACCMODE) == O_RDWR,
		      dev);
	if (!rc)
		rc = map_log_if_valid(dev);
	if (rc) {
		famfs_dev_close(dev);
		return rc;
	}
	dev->own_mount = true;
	return check_fs(root, dev);
}

void famfs_dev_close(struct famfs_dev *dev)
{
	famfs_dev_close_members(dev);
	if (dev->base)
		munmap(dev->base, dev->size);
	if (dev->meta_sb_map)
		munmap(dev->meta_sb_map, sizeof(*dev->sb));
	if (dev->meta_log_map)
		munmap(dev->meta_log_map, dev->log_len);
	if (dev->fd >= 0)
		close(dev->fd);
	dev->base = NULL;
	dev->meta_sb_map = dev->meta_log_map = NULL;
	dev->sb = NULL;
	dev->log = NULL;
	dev->fd = -1;
	/*
	 * A writer that never unlocked: the lock goes last, so whoever
	 * waits for it finds the device let go (famfs_dev_wait_writers()).
	 */
	if (dev->id_locked)
		close(dev->id_lock_fd);
	dev->id_locked = false;
}

/*
 * Other hosts write shared memory with no cache-coherence protocol
 * between us, so the log and the data written through a device are
 * written back and dropped by hand (libfamfs-cache, famfs_cache(3)).
 * Image files are coherent through the page cache; msync makes them
 * durable, unless they live in memory anyway.
 */
void famfs_dev_flush(const struct famfs_dev *dev, const void *addr, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~((uintptr_t)page - 1);

	if (dev->kind != FAMFS_DEV_FILE)
		famfs_cache_flush(addr, len);
	if (dev->kind != FAMFS_DEV_DAX && !dev->own_mount && !dev->in_memory)
		msync((void *)start, (uintptr_t)addr + len - start, MS_SYNC);
}

void famfs_dev_invalidate(const struct famfs_dev *dev, const void *addr,
			  size_t len)
{
	if (dev->kind != FAMFS_DEV_FILE)
		famfs_cache_invalidate(addr, len);
}

/*
 * The writers' lock: one per device, whatever path reaches it (the
 * device, an image file by any link or bind mount, a mount's .meta/.log),
 * and one a reader cannot hold.
 *
 * Root locks a file in a directory only root can write, named by the
 * device's identity: /run/famfs/lock/f<st_dev>-<st_ino> for an image,
 * c<rdev> for a devdax node; through a mount, the identity of the
 * mount's source. A lock on the device itself would not do: an
 * open-file-description read lock needs only read access, and any
 * reader of the image would hold every writer off.
 *
 * Others cannot create files there; they write only devices they may
 * write, and lock the device itself (F_OFD_SETLK, a write lock). Root
 * takes that lock too when users other than root can write the device,
 * so root and such a user still exclude each other. Waiting is bounded:
 * FAMFS_LOCK_TIMEOUT seconds.
 */
#define LOCK_TIMEOUT_DEFAULT 30
#define LOCK_PARENT "/run/famfs"
#define LOCK_DIR LOCK_PARENT "/lock"

static int ofd_lock(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };

	return fcntl(fd, F_OFD_SETLK, &fl);
}

/* $FAMFS_LOCK_TIMEOUT, seconds; a value that is not one is refused. */
static int lock_timeout(unsigned int *secs)
{
	const char *env = getenv("FAMFS_LOCK_TIMEOUT");
	char *end;
	unsigned long v;

	*secs = LOCK_TIMEOUT_DEFAULT;
	if (!env || !*env)
		return 0;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || v > 86400 || *env < '0' || *env > '9')
		return famfs_fail(EINVAL, "FAMFS_LOCK_TIMEOUT=%s: give whole seconds, 0 to 86400",
				  env);
	*secs = (unsigned int)v;
	return 0;
}

/*
 * Who holds a lock on the file behind @fd: "pid N (comm)". OFD locks show
 * pid -1 in /proc/locks, so look for the lock in every process's fdinfo
 * (root sees all; others their own processes).
 */
static void lock_holder(int fd, char *out, size_t len)
{
	char key[64], path[600], line[256];
	struct dirent *p, *f;
	struct stat st;
	DIR *proc, *fds;

	snprintf(out, len, "a process this user cannot see");
	if (fstat(fd, &st) < 0 || !(proc = opendir("/proc")))
		return;
	snprintf(key, sizeof(key), " %02x:%02x:%llu ", major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino);
	while ((p = readdir(proc))) {
		bool hit = false;

		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    atoi(p->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		fds = opendir(path);
		while (fds && !hit && (f = readdir(fds))) {
			FILE *in;

			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s",
				 p->d_name, f->d_name);
			in = fopen(path, "r");
			while (in && !hit && fgets(line, sizeof(line), in))
				hit = !strncmp(line, "lock:", 5) &&
				      !strstr(line, "FLOCK") &&
				      strstr(line, key);
			if (in)
				fclose(in);
		}
		if (fds)
			closedir(fds);
		if (hit) {
			char comm[64] = "?";
			FILE *c;

			snprintf(path, sizeof(path), "/proc/%s/comm",
				 p->d_name);
			c = fopen(path, "r");
			if (c && fgets(comm, sizeof(comm), c))
				comm[strcspn(comm, "\n")] = '\0';
			if (c)
				fclose(c);
			snprintf(out, len, "pid %d (%.64s)", atoi(p->d_name),
				 comm);
			break;
		}
	}
	closedir(proc);
}

/* Take the write lock on @fd, waiting at most @limit seconds. */
static int wait_lock(int fd, const char *path, unsigned int limit)
{
	struct timespec start, now;
	long delay_ms = 5;
	bool told = false;
	char who[128];
	double waited;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (ofd_lock(fd, F_WRLCK) == 0)
			return 0;
		if (errno != EAGAIN && errno != EACCES && errno != EINTR)
			return famfs_fail(errno,
					  "cannot lock the log of %s: %s", path,
					  strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (double)(now.tv_sec - start.tv_sec) +
			 (double)(now.tv_nsec - start.tv_nsec) / 1e9;
		if (waited >= limit) {
			lock_holder(fd, who, sizeof(who));
			return famfs_fail(ETIMEDOUT, "gave up after %u s waiting for the log lock of %s, held by %s (FAMFS_LOCK_TIMEOUT sets the wait)",
					  limit, path, who);
		}
		if (!told && waited >= 1.0) {
			/* Never wait silently: say for whom. */
			lock_holder(fd, who, sizeof(who));
			fprintf(stderr, "famfs: waiting up to %u s for the log lock of %s, held by %s\n",
				limit, path, who);
			told = true;
		}
		usleep((useconds_t)delay_ms * 1000);
		if (delay_ms < 100)
			delay_ms *= 2;
	}
}

struct root_arg {
	const char *root;
	struct famfs_dev_id *id;
	bool found;
};

static bool root_fn(const struct famfs_mount_ent *m, void *arg)
{
	struct root_arg *a = arg;
	struct stat st;

	if (!m->famfs || strcmp(m->dir, a->root) || m->src[0] != '/' ||
	    stat(m->src, &st) < 0)
		return false;
	famfs_dev_id_of(&st, a->id);
	a->found = true;
	return true;
}

/* The device behind @dev: its own identity, or a mount's source's. */
static bool dev_identity(const struct famfs_dev *dev, struct famfs_dev_id *id)
{
	struct root_arg a = { dev->path, id, false };
	struct stat st;

	if (dev->kind == FAMFS_DEV_META) {
		famfs_mounts_each(root_fn, &a);
		return a.found;
	}
	if (fstat(dev->fd, &st) < 0)
		return false;
	famfs_dev_id_of(&st, id);
	return true;
}

/* /run/famfs/lock, made if missing; refused unless root's alone. */
static int lock_dir(void)
{
	struct stat st;
	int fd;

	if (mkdir(LOCK_PARENT, 0755) < 0 && errno != EEXIST)
		return famfs_fail(errno, "cannot make %s: %s", LOCK_PARENT,
				  strerror(errno));
	if (mkdir(LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return famfs_fail(errno, "cannot make %s: %s", LOCK_DIR,
				  strerror(errno));
	fd = open(LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return famfs_fail(errno, "cannot open %s: %s", LOCK_DIR,
				  strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) {
		close(fd);
		return famfs_fail(EPERM, "%s is not root's alone (owner, or writable by others): no writer trusts its locks",
				  LOCK_DIR);
	}
	return fd;
}

/* Root's lock file for the device @id, open for writing. */
static int id_lock_file(const struct famfs_dev_id *id)
{
	char name[96];
	int dir = lock_dir(), fd;

	if (dir < 0)
		return dir;
	if (id->kind == 'f')
		snprintf(name, sizeof(name), "f%u:%u-%llu", major(id->dev),
			 minor(id->dev), (unsigned long long)id->ino);
	else
		snprintf(name, sizeof(name), "%c%u:%u", id->kind,
			 major(id->dev), minor(id->dev));
	fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		fd = famfs_fail(errno, "cannot open the lock %s/%s: %s",
				LOCK_DIR, name, strerror(errno));
	close(dir);
	return fd;
}

/* Can users other than root write the device? */
static bool others_write(const struct famfs_dev *dev)
{
	struct stat st;

	if (dev->kind == FAMFS_DEV_META || fstat(dev->fd, &st) < 0)
		return false;
	return st.st_uid != 0 || (st.st_mode & 022);
}

/* A device under a mount is the mount's: writers go through it. */
static int check_unmounted(const struct famfs_dev *dev,
			   const struct famfs_dev_id *id)
{
	char where[PATH_MAX];

	if (dev->kind == FAMFS_DEV_META ||
	    !famfs_id_mounted(id, false, where, sizeof(where), NULL))
		return 0;
	return famfs_fail(EBUSY, "%s is mounted at %s (EBUSY): its log is the mount's; write through %s, never to the device under it",
			  dev->path, where, where);
}

/* One try at the lock on @fd: -EBUSY, naming the holder, if it is taken. */
static int try_lock(int fd, const char *path)
{
	char who[128];

	if (ofd_lock(fd, F_WRLCK) == 0)
		return 0;
	if (errno != EAGAIN && errno != EACCES && errno != EINTR)
		return famfs_fail(errno, "cannot lock the log of %s: %s", path,
				  strerror(errno));
	lock_holder(fd, who, sizeof(who));
	return famfs_fail(EBUSY, "the log of %s is being written by %s", path,
			  who);
}

/*
 * famfs_dev_lock(), or for @mount_writer the daemon of the device's mount:
 * one try at each lock, and the mount is no reason to refuse.
 */
static int lock_log(struct famfs_dev *dev, bool mount_writer)
{
	struct famfs_dev_id id;
	unsigned int limit;
	bool known, have_id;
	int rc;

	if (!dev->writable)
		return famfs_fail(EBADF, "the log of %s is open read-only: only a writer takes its lock",
				  dev->path);
	if (lock_timeout(&limit))
		return -EINVAL;
	dev->id_locked = dev->dev_locked = false;
	have_id = dev_identity(dev, &id);
	known = have_id && !mount_writer; /* its mount is checked */
	/* Before waiting behind the mount's writers, and again after. */
	rc = known ? check_unmounted(dev, &id) : 0;
	if (rc)
		return rc;
	if (have_id && geteuid() == 0) {
		dev->id_lock_fd = id_lock_file(&id);
		/*
		 * A system without a writable /run (a bare container): every
		 * writer there falls back to the device's own lock alike.
		 */
		if (dev->id_lock_fd == -ENOENT || dev->id_lock_fd == -EROFS)
			goto device_lock;
		if (dev->id_lock_fd < 0)
			return dev->id_lock_fd;
		rc = mount_writer ? try_lock(dev->id_lock_fd, dev->path) :
				    wait_lock(dev->id_lock_fd, dev->path, limit);
		if (rc) {
			close(dev->id_lock_fd);
			return rc;
		}
		dev->id_locked = true;
	}
device_lock:
	if (!dev->id_locked || others_write(dev)) {
		rc = mount_writer ? try_lock(dev->fd, dev->path) :
				    wait_lock(dev->fd, dev->path, limit);
		if (rc) {
			famfs_dev_unlock(dev);
			return rc;
		}
		dev->dev_locked = true;
	}
	/* Under the lock: a mount made meanwhile is seen. */
	rc = known ? check_unmounted(dev, &id) : 0;
	if (rc)
		famfs_dev_unlock(dev);
	return rc;
}

int famfs_dev_lock(struct famfs_dev *dev)
{
	return lock_log(dev, false);
}

int famfs_dev_trylock(struct famfs_dev *dev)
{
	return lock_log(dev, true);
}

/* Root's lock file of @path's device with its lock taken: the fd, or -errno. */
static int path_lock(const char *path, bool wait)
{
	struct famfs_dev_id id;
	unsigned int limit;
	struct stat st;
	int fd, rc;

	if (lock_timeout(&limit))
		return -EINVAL;
	if (stat(path, &st) < 0)
		return famfs_fail(errno, "cannot stat %s: %s", path,
				  strerror(errno));
	famfs_dev_id_of(&st, &id);
	fd = id_lock_file(&id);
	if (fd < 0)
		return fd;
	rc = wait ? wait_lock(fd, path, limit) : try_lock(fd, path);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int famfs_dev_wait_writers(const char *path)
{
	int fd;

	if (geteuid() != 0)
		return 0; /* root's lock file is the one a daemon holds */
	fd = path_lock(path, true);
	if (fd == -ENOENT || fd == -EROFS)
		return 0; /* no /run to lock in: no daemon locked there */
	if (fd < 0)
		return fd;
	close(fd); /* and the lock with it */
	return 0;
}

int famfs_dev_hold_writers(const char *path)
{
	if (geteuid() != 0)
		return famfs_fail(EPERM, "only root holds the log lock of %s by its name",
				  path);
	return path_lock(path, false);
}

void famfs_dev_unlock(struct famfs_dev *dev)
{
	if (dev->dev_locked)
		ofd_lock(dev->fd, F_UNLCK);
	if (dev->id_locked)
		close(dev->id_lock_fd);
	dev->id_locked = dev->dev_locked = false;
}
