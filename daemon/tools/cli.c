// SPDX-License-Identifier: GPL-2.0-or-later
/* Helpers the famfs subcommands share; see cli.h. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tool_util.h"

const char *cli_device;
const char *cli_cmd;
char cli_open_dev[4096];
bool cli_dryrun;

/* ---- option values ------------------------------------------------------ */

bool cli_help_asked(int c)
{
	return c == 'h' || (c == '?' && optopt == '?');
}

int cli_usage(void (*usage)(FILE *), int c, int ok, int bad)
{
	if (cli_help_asked(c)) {
		usage(stdout);
		return ok;
	}
	return cli_usage_error(bad);
}

int cli_usage_error(int code)
{
	fprintf(stderr, "Try 'famfs%s%s --help' for more information.\n",
		cli_cmd ? " " : "", cli_cmd ? cli_cmd : "");
	return code;
}

int cli_parse_size(const char *what, const char *s, uint64_t *out)
{
	if (famfs_parse_size(s, out)) {
		fprintf(stderr, "famfs: %s: %s\n", what, famfs_errmsg());
		return -1;
	}
	return 0;
}

int cli_parse_number(const char *what, const char *s, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	if (famfs_parse_number(s, min, max, out)) {
		fprintf(stderr, "famfs: %s: %s\n", what, famfs_errmsg());
		return -1;
	}
	return 0;
}

int cli_parse_mode(const char *what, const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || !*s || *end || v > 07777) {
		fprintf(stderr, "famfs: %s: \"%s\" is not an octal mode (0 to 7777)\n",
			what, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_u32(const char *what, const char *s, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_number(what, s, 0, UINT32_MAX, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cli_owner_opt(struct cli_owner *o, int c, const char *arg)
{
	switch (c) {
	case 'm':
		return cli_parse_mode("-m", arg, &o->mode) ? -1 : 1;
	case 'u':
		return cli_parse_u32("-u", arg, &o->uid) ? -1 : 1;
	case 'g':
		return cli_parse_u32("-g", arg, &o->gid) ? -1 : 1;
	}
	return 0;
}

int cli_interleave_opt(struct cli_interleave *il, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'N':
		il->set = true;
		if (cli_parse_number("-N (strips)", arg, 1, FAMFS_MAX_STRIPS, &v))
			return -1;
		il->nstrips = (uint32_t)v;
		return 1;
	case 'B':
		il->set = true;
		return cli_parse_u32("-B (buckets)", arg, &il->nbuckets) ? -1 : 1;
	case 'C':
		il->set = true;
		return cli_parse_size("-C (chunk size)", arg, &il->chunk_size) ?
			       -1 : 1;
	}
	return 0;
}

int cli_interleave_finish(struct cli_interleave *il,
			  struct famfs_interleave *buf,
			  const struct famfs_interleave **out)
{
	*out = NULL;
	if (!il->set)
		return 0;
	/*
	 * Upstream can stripe across several devices with -N alone; we have
	 * one device, so strips always come from buckets of it, one bucket
	 * per strip unless -B asks for more.
	 */
	if (!il->nstrips) {
		fprintf(stderr, "famfs: -B and -C describe an interleaved layout and need -N (the number of strips)\n");
		return -1;
	}
	buf->nstrips = il->nstrips;
	buf->nbuckets = il->nbuckets ? il->nbuckets : il->nstrips;
	buf->chunk_size = il->chunk_size ? il->chunk_size : FAMFS_ALLOC_UNIT;
	*out = buf;
	return 0;
}

/* ---- finding the famfs --------------------------------------------------- */

/* Make @path absolute and tidy: no repeated or trailing slashes. */
static int absolute(const char *path, char *out, size_t len)
{
	char cwd[PATH_MAX], tmp[PATH_MAX * 2];
	size_t j = 0;

	if (path[0] == '/') {
		snprintf(tmp, sizeof(tmp), "%s", path);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		snprintf(tmp, sizeof(tmp), "%s/%s", cwd, path);
	}
	for (size_t i = 0; tmp[i] && j < len - 1; i++) {
		if (tmp[i] == '/' && j && out[j - 1] == '/')
			continue;
		out[j++] = tmp[i];
	}
	while (j > 1 && out[j - 1] == '/')
		j--;
	out[j] = '\0';
	return strlen(tmp) >= len ? -ENAMETOOLONG : 0;
}

/*
 * Split @abs into the real path of its longest existing prefix and the
 * rest, which does not exist yet.
 */
static int split_existing(const char *abs, char *real, char *rest,
			  size_t len)
{
	char head[PATH_MAX];

	snprintf(head, sizeof(head), "%s", abs);
	rest[0] = '\0';
	for (;;) {
		char *slash, tmp[PATH_MAX];

		if (realpath(head, real))
			return 0;
		if (errno != ENOENT)
			return -errno;
		slash = strrchr(head, '/');
		if (!slash || slash == head) {
			/* Even "/x" is missing: the prefix is "/". */
			snprintf(tmp, sizeof(tmp), "%s%s%s", head + 1,
				 rest[0] ? "/" : "", rest);
			snprintf(rest, len, "%s", tmp);
			snprintf(real, len, "/");
			return 0;
		}
		snprintf(tmp, sizeof(tmp), "%s%s%s", slash + 1,
			 rest[0] ? "/" : "", rest);
		snprintf(rest, len, "%s", tmp);
		*slash = '\0';
	}
}

/*
 * The existing directory that is or holds @path (which need not exist):
 * the library opens a regular file as a device image, so it gets this.
 */
static int existing_dir(const char *path, char real[PATH_MAX])
{
	char abs[PATH_MAX], rest[PATH_MAX];
	struct stat st;
	int rc;

	rc = absolute(path, abs, sizeof(abs));
	if (rc == 0)
		rc = split_existing(abs, real, rest, PATH_MAX);
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	if (stat(real, &st) == 0 && !S_ISDIR(st.st_mode))
		*(strrchr(real, '/') == real ? real + 1 : strrchr(real, '/')) =
			'\0';
	return 0;
}

int cli_mount_open(struct cli_fs *fs, const char *path)
{
	char real[PATH_MAX];

	memset(fs, 0, sizeof(*fs));
	fs->dev.fd = -1;
	if (existing_dir(path, real))
		return -1;
	if (famfs_mount_root(real, fs->root, sizeof(fs->root))) {
		fprintf(stderr, "famfs: %s: not in a mounted famfs\n", path);
		return -ENOENT;
	}
	fs->mounted = true;
	return 0;
}

static int open_mounted(struct cli_fs *fs, const char *path, bool rw)
{
	char real[PATH_MAX];
	int rc;

	if (existing_dir(path, real))
		return -1;
	rc = famfs_dev_open_fs(real, rw ? FAMFS_OPEN_RW : 0, &fs->dev);
	if (rc && rw && (rc == -EACCES || rc == -EROFS || rc == -EPERM)) {
		/*
		 * The daemon serves the log read-only on a client: say that
		 * rather than "permission denied". The client may be this
		 * host (its identity differs from the superblock's master) or
		 * the mount (mounted with role=client).
		 */
		char msg[512], role[32] = "";
		bool client = false;

		snprintf(msg, sizeof(msg), "%s", famfs_errmsg());
		if (famfs_dev_open_fs(real, 0, &fs->dev) == 0) {
			client = famfs_role(&fs->dev) == FAMFS_ROLE_CLIENT;
			if (!client &&
			    cli_mount_status(fs->dev.path, "role", role,
					     sizeof(role)) == 0)
				client = !strcmp(role, "client");
			famfs_dev_close(&fs->dev);
		}
		if (client) {
			fprintf(stderr, "famfs: %s: this host is a client of this famfs%s; only the master host can create files and directories\n",
				path, role[0] ? " (the mount has role=client)" : "");
			return -EPERM;
		}
		fprintf(stderr, "famfs: %s: %s\n", path, msg);
		return rc;
	}
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", path,
			rc == -ENOENT || rc == -ENOTDIR ?
				"not in a mounted famfs (give --device DEV to work on an unmounted device)" :
				famfs_errmsg());
		return rc;
	}
	if (fs->dev.kind != FAMFS_DEV_META) {
		fprintf(stderr, "famfs: %s: not in a mounted famfs\n", path);
		famfs_dev_close(&fs->dev);
		return -ENOENT;
	}
	fs->mounted = true;
	snprintf(fs->root, sizeof(fs->root), "%s", fs->dev.path);
	return 0;
}

int cli_mount_status(const char *root, const char *key, char *val,
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

int cli_fs_open(struct cli_fs *fs, const char *device, const char *path,
		bool rw)
{
	int rc;

	memset(fs, 0, sizeof(*fs));
	fs->dev.fd = -1;
	snprintf(cli_open_dev, sizeof(cli_open_dev), "%s",
		 device ? device : path);
	if (!device)
		return open_mounted(fs, path, rw);
	fs->by_device = true;
	rc = famfs_dev_open_fs(device, rw ? FAMFS_OPEN_RW : 0, &fs->dev);
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", device,
			rc == -ENOENT && access(device, F_OK) == 0 ?
				"no famfs on this device (run mkfs.famfs)" :
				famfs_errmsg());
		return rc;
	}
	if (fs->dev.kind == FAMFS_DEV_META) {
		/* --device /mnt/famfs: fine, treat it as the mount. */
		fs->mounted = true;
		snprintf(fs->root, sizeof(fs->root), "%s", fs->dev.path);
	}
	return 0;
}

void cli_fs_close(struct cli_fs *fs)
{
	famfs_dev_close(&fs->dev);
}

static int check_components(const char *orig, const char *rel)
{
	const char *p = rel;

	while (*p) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2))) {
			fprintf(stderr, "famfs: %s: \".\" and \"..\" cannot name something that does not exist yet\n",
				orig);
			return -1;
		}
		p += n;
		if (*p)
			p++;
	}
	if (strlen(rel) >= FAMFS_PATH_LEN) {
		fprintf(stderr, "famfs: %s: the path inside the famfs (%zu bytes) is longer than the %d bytes famfs allows\n",
			orig, strlen(rel), FAMFS_PATH_LEN - 1);
		return -1;
	}
	return 0;
}

bool cli_reserved(const char *rel)
{
	return !strcmp(rel, ".meta") || !strncmp(rel, ".meta/", 6);
}

int cli_relpath_new(const struct cli_fs *fs, const char *path,
		    char rel[FAMFS_PATH_LEN])
{
	if (cli_relpath(fs, path, rel))
		return -1;
	if (cli_reserved(rel)) {
		fprintf(stderr, "famfs: %s: .meta holds the file system's metadata (the daemon serves it); nothing can be made there\n",
			path);
		return -1;
	}
	return 0;
}

int cli_relpath(const struct cli_fs *fs, const char *path,
		char rel[FAMFS_PATH_LEN])
{
	char abs[PATH_MAX], real[PATH_MAX], rest[PATH_MAX], full[PATH_MAX * 2];
	size_t rl = strlen(fs->root);
	const char *r;
	int rc;

	if (fs->by_device) {
		/* A path inside the famfs: tidy it lexically. */
		char tmp[PATH_MAX * 2];
		size_t j = 0;

		for (size_t i = 0; path[i] && j < sizeof(tmp) - 1; i++) {
			if (path[i] == '/' && (!j || tmp[j - 1] == '/'))
				continue;
			tmp[j++] = path[i];
		}
		while (j && tmp[j - 1] == '/')
			j--;
		tmp[j] = '\0';
		if (!strcmp(tmp, "."))
			tmp[0] = '\0';
		if (check_components(path, tmp))
			return -1;
		snprintf(rel, FAMFS_PATH_LEN, "%s", tmp);
		return 0;
	}

	rc = absolute(path, abs, sizeof(abs));
	if (rc == 0)
		rc = split_existing(abs, real, rest, sizeof(real));
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	snprintf(full, sizeof(full), "%s%s%s", strcmp(real, "/") ? real : "",
		 rest[0] ? "/" : "", rest);
	if (!full[0])
		snprintf(full, sizeof(full), "/");
	if (strncmp(full, fs->root, rl) ||
	    (full[rl] != '/' && full[rl] != '\0' && strcmp(fs->root, "/"))) {
		fprintf(stderr, "famfs: %s: not in the famfs mounted at %s\n",
			path, fs->root);
		return -1;
	}
	r = full + rl;
	while (*r == '/')
		r++;
	if (check_components(path, r))
		return -1;
	snprintf(rel, FAMFS_PATH_LEN, "%s", r);
	return 0;
}

void cli_mount_path(const struct cli_fs *fs, const char *rel, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s%s%s", fs->root, rel[0] ? "/" : "", rel);
}

const char *cli_show(const struct cli_fs *fs, const char *rel, char *buf,
		     size_t len)
{
	char raw[PATH_MAX + 96];

	if (fs->mounted)
		cli_mount_path(fs, rel, raw, sizeof(raw));
	else
		snprintf(raw, sizeof(raw), "%s:/%s", fs->dev.path, rel);
	return famfs_escape(raw, buf, len);
}

int cli_writer_begin(struct cli_fs *fs, struct famfs_writer *w,
		     const char *cmd)
{
	int rc = famfs_writer_begin(w, &fs->dev);

	if (rc)
		fprintf(stderr, "famfs %s: %s\n", cmd, famfs_errmsg());
	return rc;
}

int cli_ns_load(struct cli_fs *fs, struct famfs_ns *ns, const char *cmd)
{
	struct famfs_walk walk;
	int rc = famfs_ns_load(&fs->dev, ns, &walk, NULL);

	if (rc)
		fprintf(stderr, "famfs %s: %s: %s%s\n", cmd, fs->dev.path,
			famfs_errmsg(),
			walk.bad ? " (run famfs fsck)" : "");
	return rc;
}

/* ---- file bytes ---------------------------------------------------------- */

int cli_file_open(struct cli_file *f, const struct cli_fs *fs,
		  const struct famfs_ns *ns, const char *rel, bool write)
{
	memset(f, 0, sizeof(*f));
	f->fs = fs;
	f->fd = -1;
	cli_show(fs, rel, f->name, sizeof(f->name));
	if (fs->mounted) {
		char path[PATH_MAX + 96];
		struct stat st;

		/* f->name is escaped for messages: open the real name */
		cli_mount_path(fs, rel, path, sizeof(path));
		f->fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		if (f->fd < 0) {
			int err = errno;

			fprintf(stderr, "famfs: cannot open %s: %s\n", f->name,
				strerror(err));
			return -err;
		}
		if (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "famfs: %s is not a regular file\n",
				f->name);
			cli_file_close(f);
			return -EISDIR;
		}
		f->size = (uint64_t)st.st_size;
		return 0;
	}

	const struct famfs_node *n = famfs_ns_resolve(ns, rel);

	if (!n) {
		fprintf(stderr, "famfs: %s: no such file in the log\n", f->name);
		return -ENOENT;
	}
	if (n->is_dir) {
		fprintf(stderr, "famfs: %s is a directory\n", f->name);
		return -EISDIR;
	}
	f->fmap = n->fmap;
	f->size = n->size;
	return 0;
}

ssize_t cli_file_pread(struct cli_file *f, void *buf, size_t len,
		       uint64_t off)
{
	size_t done = 0;

	if (f->fd < 0) {
		ssize_t n = famfs_data_read(&f->fs->dev, &f->fmap, f->size,
					    off, buf, len);

		if (n < 0)
			fprintf(stderr, "famfs: %s: %s\n", f->name,
				famfs_errmsg());
		return n;
	}
	while (done < len) {
		ssize_t n = pread(f->fd, (char *)buf + done, len - done,
				  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			fprintf(stderr, "famfs: read %s at %llu: %s\n", f->name,
				(unsigned long long)(off + done), strerror(err));
			return -err;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t cli_file_pwrite(struct cli_file *f, const void *buf, size_t len,
			uint64_t off)
{
	size_t done = 0;

	if (f->fd < 0) {
		ssize_t n = famfs_data_write(&f->fs->dev, &f->fmap, f->size,
					     off, buf, len);

		if (n < 0)
			fprintf(stderr, "famfs: %s: %s\n", f->name,
				famfs_errmsg());
		return n;
	}
	while (done < len) {
		ssize_t n = pwrite(f->fd, (const char *)buf + done, len - done,
				   (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : ENOSPC;

			fprintf(stderr, "famfs: write %s at %llu: %s\n", f->name,
				(unsigned long long)(off + done), strerror(err));
			return -err;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

void cli_file_close(struct cli_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* ---- progress ------------------------------------------------------------ */

struct cli_progress {
	pthread_mutex_t lock;
	const char *verb;
	uint64_t total, done;
	double start, last;
	bool shown;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct cli_progress *cli_progress_start(const char *verb, uint64_t total)
{
	struct cli_progress *p;

	if (!isatty(STDERR_FILENO) || !total)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->verb = verb;
	p->total = total;
	p->start = p->last = now();
	return p;
}

static void show(struct cli_progress *p, double t)
{
	char a[32], b[32], r[32];
	double secs = t - p->start;

	fprintf(stderr, "\r%s %s of %s (%3.0f%%), %s/s   ", p->verb,
		human_size(p->done, a, sizeof(a)),
		human_size(p->total, b, sizeof(b)),
		100.0 * (double)p->done / (double)p->total,
		human_size(secs > 0 ? (uint64_t)((double)p->done / secs) : 0,
			   r, sizeof(r)));
	p->shown = true;
	p->last = t;
}

void cli_progress_add(struct cli_progress *p, uint64_t bytes)
{
	double t;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->done += bytes;
	t = now();
	/* Quick operations stay quiet; long ones update 4 times a second. */
	if (t - p->start >= 1.0 && t - p->last >= 0.25)
		show(p, t);
	pthread_mutex_unlock(&p->lock);
}

void cli_progress_end(struct cli_progress *p)
{
	if (!p)
		return;
	if (p->shown) {
		show(p, now());
		fputc('\n', stderr);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* ---- worker threads ------------------------------------------------------ */

struct par {
	int (*fn)(unsigned int i, void *arg);
	void *arg;
	unsigned int n, next, failed;
};

static void *par_worker(void *arg)
{
	struct par *p = arg;
	unsigned int i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n)
		if (p->fn(i, p->arg))
			__atomic_fetch_add(&p->failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

unsigned int cli_parallel(unsigned int threads, unsigned int n,
			  int (*fn)(unsigned int i, void *arg), void *arg)
{
	struct par p = { .fn = fn, .arg = arg, .n = n };
	pthread_t tid[64];
	unsigned int started = 0;

	if (threads > 64)
		threads = 64;
	if (threads > n)
		threads = n;
	for (; started + 1 < threads; started++)
		if (pthread_create(&tid[started], NULL, par_worker, &p))
			break;
	par_worker(&p); /* this thread works too */
	for (unsigned int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	return p.failed;
}

/* ---- the test pattern ---------------------------------------------------- */

/*
 * Upstream famfs fills test files from a xoroshiro128+ generator seeded
 * through splitmix64, taking the low 32 bits of each output, and truncates
 * the seed to 32 bits. We produce the same bytes so that files made by
 * either tool family verify with the other. (Both algorithms are public
 * domain, by Blackman and Vigna.)
 */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint32_t next32(struct cli_pattern *p)
{
	uint64_t s0 = p->s[0], s1 = p->s[1], r = s0 + s1;

	s1 ^= s0;
	p->s[0] = rotl(s0, 55) ^ s1 ^ (s1 << 14);
	p->s[1] = rotl(s1, 36);
	return (uint32_t)r;
}

void cli_pattern_init(struct cli_pattern *p, uint64_t seed)
{
	uint64_t x = (uint32_t)seed;

	p->s[0] = splitmix64(&x);
	p->s[1] = splitmix64(&x);
}

void cli_pattern_fill(struct cli_pattern *p, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t v = next32(p);

		memcpy(b + i, &v, 4);
	}
	if (i < len) {
		uint32_t v = next32(p);

		memcpy(b + i, &v, len - i);
	}
}

int64_t cli_pattern_check(struct cli_pattern *p, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t v = next32(p);

		if (memcmp(b + i, &v, 4))
			return (int64_t)i;
	}
	if (i < len) {
		uint32_t v = next32(p);

		if (memcmp(b + i, &v, len - i))
			return (int64_t)i;
	}
	return -1;
}

const char *cli_errno_name(int err)
{
	return strerror(err < 0 ? -err : err);
}
