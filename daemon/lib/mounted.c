// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Whether a device (or image file) is mounted, and which mounts are famfs
 * mounts of ours. A device is found by its identity (an image file's
 * st_dev and st_ino, a device node's st_rdev), whatever name reached it:
 * a hard link, a bind mount of its directory, a path with a space. The
 * mount table's text never decides: its source is only a path to stat.
 *
 * Any user can make a FUSE mount (fusermount3 is set-user-ID root) and
 * name it as they like: type fuse.famfs, source the path of root's image.
 * Such a mount holds no device, so it is not ours: a FUSE mount counts
 * only when root owns it (user_id=0 in its options: the kernel sets it
 * from the mounter, fusermount3 from the caller's uid).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

void famfs_mount_unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

bool famfs_mount_type_famfs(const char *type)
{
	return !strcmp(type, "fuse.famfs") || !strncmp(type, "famfs_fuse", 10);
}

static bool is_fuse_type(const char *type)
{
	return !strncmp(type, "fuse", 4) || !strncmp(type, "famfs_fuse", 10);
}

bool famfs_mount_opts_root(const char *opts)
{
	const char *p = opts;

	for (;;) {
		if (!strncmp(p, "user_id=0", 9) &&
		    (p[9] == ',' || !p[9] || p[9] == ' ' || p[9] == '\n'))
			return true;
		p = strchr(p, ',');
		if (!p)
			return false;
		p++;
	}
}

void famfs_dev_id_of(const struct stat *st, struct famfs_dev_id *id)
{
	memset(id, 0, sizeof(*id));
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
		id->kind = S_ISCHR(st->st_mode) ? 'c' : 'b';
		id->dev = st->st_rdev;
	} else {
		id->kind = 'f';
		id->dev = st->st_dev;
		id->ino = st->st_ino;
	}
}

bool famfs_dev_id_eq(const struct famfs_dev_id *a, const struct famfs_dev_id *b)
{
	return a->kind == b->kind && a->dev == b->dev && a->ino == b->ino;
}

/* The identity of a mount's source, when it is a path that exists. */
static bool source_id(const char *src, struct famfs_dev_id *id)
{
	struct stat st;

	if (src[0] != '/' || stat(src, &st) < 0)
		return false;
	famfs_dev_id_of(&st, id);
	return true;
}

bool famfs_mounts_each(bool (*fn)(const struct famfs_mount_ent *m, void *arg),
		       void *arg)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char *line = NULL;
	size_t cap = 0;
	bool hit = false;

	if (!f)
		return false;
	while (!hit && getline(&line, &cap, f) > 0) {
		char mnt[PATH_MAX], opts[1024], type[256], src[PATH_MAX];
		char *sep = strstr(line, " - ");
		struct famfs_mount_ent m;
		int at = 0;

		if (!sep ||
		    sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mnt, opts) != 2 ||
		    sscanf(sep + 3, "%255s %4095s %n", type, src, &at) != 2)
			continue;
		/* Someone else's FUSE mount holds no device of ours. */
		if (is_fuse_type(type) &&
		    (!at || !famfs_mount_opts_root(sep + 3 + at)))
			continue;
		famfs_mount_unescape(mnt);
		famfs_mount_unescape(src);
		m.dir = mnt;
		m.src = src;
		m.type = type;
		m.rw = strncmp(opts, "ro", 2) != 0 ||
		       (opts[2] != ',' && opts[2] != '\0');
		m.famfs = famfs_mount_type_famfs(type);
		hit = fn(&m, arg);
	}
	free(line);
	fclose(f);
	return hit;
}

struct find_arg {
	struct famfs_dev_id id;
	bool famfs_only;
	char *where;
	size_t len;
	bool rw;
};

static bool find_fn(const struct famfs_mount_ent *m, void *arg)
{
	struct find_arg *a = arg;
	struct famfs_dev_id id;

	if ((a->famfs_only && !m->famfs) || !source_id(m->src, &id) ||
	    !famfs_dev_id_eq(&id, &a->id))
		return false;
	/* A read-write mount is the one that matters: keep looking for it. */
	if (!a->where[0] || m->rw)
		snprintf(a->where, a->len, "%s", m->dir);
	a->rw = a->rw || m->rw;
	return m->rw;
}

bool famfs_id_mounted(const struct famfs_dev_id *id, bool famfs_only,
		      char *where, size_t len, bool *rw)
{
	struct find_arg a = { .id = *id, .famfs_only = famfs_only,
			      .where = where, .len = len };

	where[0] = '\0';
	famfs_mounts_each(find_fn, &a);
	if (rw)
		*rw = a.rw;
	return where[0] != '\0';
}

bool famfs_dev_mounted(const char *path, char *where, size_t len)
{
	struct famfs_dev_id id;
	struct stat st;

	if (stat(path, &st) < 0)
		return false;
	famfs_dev_id_of(&st, &id);
	return famfs_id_mounted(&id, false, where, len, NULL);
}

int famfs_mount_status(const char *root, const char *key, char *val,
		       size_t len)
{
	char path[PATH_MAX + 32], line[PATH_MAX + 64];
	size_t klen = strlen(key);
	int rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/.meta/.status", root);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != '=')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(val, len, "%s", line + klen + 1);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

/* The child of famfs_read_within(): @path's bytes into @out, errno out. */
static void __attribute__((noreturn)) read_child(const char *path, size_t len,
						 int out)
{
	char buf[4096];
	int fd;

	/* it may outlive the caller's wish: hold none of its files */
	if (dup2(out, 3) < 0)
		_exit(errno & 0xff);
	out = 3;
	close_range(4, ~0U, 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(errno & 0xff);
	while (len) {
		ssize_t n = read(fd, buf, len < sizeof(buf) ? len : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			_exit(errno & 0xff);
		if (n == 0 || write(out, buf, (size_t)n) != n)
			break;
		len -= (size_t)n;
	}
	_exit(0);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * Children given up on: a request the daemon took and never answers
 * holds one even after SIGKILL. Reaped by later calls once they are free
 * (else they stay our zombies until we exit).
 */
static pid_t stuck[16];

static void reap_stuck(void)
{
	for (size_t i = 0; i < sizeof(stuck) / sizeof(stuck[0]); i++)
		if (stuck[i] > 0 && waitpid(stuck[i], NULL, WNOHANG) != 0)
			stuck[i] = 0;
}

/* Reap @pid within about @ms; -1 if it is still there (then kept). */
static int reap(pid_t pid, int ms, int *st)
{
	for (int i = 0;; i++) {
		pid_t r = waitpid(pid, st, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return r == pid ? 0 : -1;
		if (i * 10 >= ms)
			break;
		usleep(10000);
	}
	for (size_t i = 0; i < sizeof(stuck) / sizeof(stuck[0]); i++)
		if (stuck[i] <= 0) {
			stuck[i] = pid;
			break;
		}
	return -1;
}

ssize_t famfs_read_within(const char *path, void *buf, size_t len, int ms)
{
	int64_t end = now_ms() + ms;
	size_t got = 0;
	int p[2], st = 0;
	pid_t pid;

	reap_stuck();
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[0]);
		read_child(path, len, p[1]);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int64_t left = end - now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			break;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = read(p[0], (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (n > 0 && (got += (size_t)n) < len)
			continue;
		/*
		 * All of it, or the child's end: it has exited, or is closing
		 * the file (a FLUSH the daemon may never answer).
		 */
		close(p[0]);
		if (reap(pid, (int)(end - now_ms()), &st) == 0 &&
		    WIFEXITED(st) && WEXITSTATUS(st))
			return -WEXITSTATUS(st);
		return (ssize_t)got;
	}
	/* the deadline, or a pipe that fails us: give up on the child */
	close(p[0]);
	kill(pid, SIGKILL);
	reap(pid, 1000, &st);
	return -ETIMEDOUT;
}
