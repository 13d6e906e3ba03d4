// SPDX-License-Identifier: GPL-2.0
/*
 * fvt: the famfs VM tests' helper, run in the guest (static, no libraries).
 *
 *   fvt devcmp FILE DEV MAP        FILE (read(2) and mmap) == device bytes
 *   fvt mmapread FILE [STATUS]     fault in and read all of FILE by mmap
 *   fvt touch FILE [STATUS]        touch one byte per page; count faults
 *                                  With STATUS (the mount's .meta/.status),
 *                                  also count the daemon's requests while
 *                                  doing it ("upcalls", net of what reading
 *                                  STATUS itself costs).
 *   fvt pwrite FILE OFF LEN SEED   write a pattern with write(2)
 *   fvt mwrite FILE OFF LEN SEED   write a pattern through a shared mapping
 *   fvt check FILE OFF LEN SEED    the pattern is there (read(2))
 *   fvt devcheck DEV OFF LEN SEED  the pattern is in the raw device
 *   fvt expect ERRNO OP FILE       OP (otrunc, ftrunc, falloc, splice-read,
 *                                  splice-write, read, write, write-end
 *                                  (at EOF), mmapread, mmap-private-read
 *                                  (MAP_PRIVATE, PROT_READ, one byte read),
 *                                  mmap-private-write (MAP_PRIVATE with
 *                                  PROT_WRITE), mprotect-write (a private
 *                                  read-only mapping made writable),
 *                                  copyrange (copy_file_range of 4 bytes
 *                                  within FILE), msync (a byte of a shared
 *                                  mapping rewritten, then MS_SYNC)) fails
 *                                  with ERRNO (a
 *                                  number or name; 0: works)
 *   fvt hwpoison FILE OFF          poison the page at OFF through a mapping
 *   fvt holdmap FILE READY GO      map FILE, sum it, create READY, wait for
 *                                  GO to exist, sum again: equal sums pass
 *                                  (the page faults of the second sum are
 *                                  printed: 0 if nothing unmapped FILE)
 *   fvt pinpage FILE READY GO      map FILE, vmsplice its first page into a
 *                                  pipe (the pipe holds a page reference),
 *                                  unmap and close FILE, create READY, wait
 *                                  for GO to exist, then drain the pipe
 *   fvt pinfault FILE READY GO DONE DRAIN
 *                                  map FILE (at least 2 MiB), touch its first
 *                                  page, vmsplice that page into a pipe,
 *                                  write our pid to READY, wait for GO, touch
 *                                  offset 1 MiB (not faulted in yet), write
 *                                  "sigbus" or "mapped" to DONE, wait for
 *                                  DRAIN, then drain the pipe
 *   fvt bench FILE DEV DEVOFF SIZE PASSES
 *                                  famfs mmap vs raw device mmap, A/B passes
 *   fvt now                        CLOCK_MONOTONIC in seconds (for scripts)
 *   fvt msum FILE...               a checksum of each FILE read by mmap
 *   fvt openrace COPIES SEED FILE...
 *                                  COPIES processes per FILE, held at one
 *                                  barrier, then all open at once; each
 *                                  checks that the whole file holds pattern
 *                                  SEED+k (k: the FILE's index), even ones
 *                                  by read(2), odd ones by mmap; fails
 *                                  unless every one of them did
 *   fvt names DIR...               DIR/NAME for each entry of each DIR, from
 *                                  readdir alone (no lookup, no stat)
 *   fvt watchmap FILE LEN SEED1 SEED2 READY GO
 *                                  map FILE, check pattern SEED1 in its first
 *                                  LEN bytes, create READY, wait for GO, then
 *                                  check SEED2 through the same mapping
 *   fvt visible LOG PATH STATUS|- READY SECONDS
 *                                  create READY, wait for another host to
 *                                  commit a log entry (LOG: the mount's
 *                                  .meta/.log), then for PATH to show: with
 *                                  "-" by stat(2) (a lookup), with STATUS by
 *                                  the daemon's log_entries only (its poll);
 *                                  prints the delay from the commit
 *
 * MAP describes where FILE lives, as "famfs getmap" prints it:
 *   s:OFF:LEN[,s:OFF:LEN...]           simple extents, in file order
 *   i:CHUNK:OFF1,OFF2,...               one interleaved extent (strips)
 * Numbers may be decimal or 0x hex. Output: one line of key=value facts.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif

static void die(const char *fmt, const char *a)
{
	fprintf(stderr, "fvt: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, "\n");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	if (*end && *end != ':' && *end != ',')
		die("bad number '%s'", s);
	return v;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int openf(const char *p, int fl)
{
	int fd = open(p, fl);

	if (fd < 0) {
		fprintf(stderr, "fvt: %s: %s\n", p, strerror(errno));
		exit(1);
	}
	return fd;
}

static off_t fsize(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("%s", "fstat");
	return st.st_size;
}

static void *mapf(int fd, size_t len, int prot, off_t off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p == MAP_FAILED) {
		fprintf(stderr, "fvt: mmap %zu at %lld: %s\n", len,
			(long long)off, strerror(errno));
		exit(1);
	}
	return p;
}

/* The byte at file offset @o of a pattern from @seed. */
static uint8_t pat(uint64_t seed, uint64_t o)
{
	uint64_t x = (o >> 3) * 0x9e3779b97f4a7c15ULL + seed * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 31;
	return (uint8_t)(x >> ((o & 7) * 8));
}

static uint64_t sum(const volatile uint64_t *p, size_t len)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < len / 8; i++)
		s += p[i] ^ i;
	return s;
}

/* ---- devcmp ---- */
struct ext {
	uint64_t off, len;
};

static int devcmp(const char *file, const char *dev, const char *map)
{
	int fd = openf(file, O_RDONLY), dfd = openf(dev, O_RDONLY);
	off_t size = fsize(fd);
	struct ext ex[64];
	int n = 0, il = 0, bad = 0;
	uint64_t chunk = 0, o;
	char *m = strdup(map), *tok, *save;
	uint8_t *f, *buf;
	struct stat st;
	int dev_is_chr;

	if (fstat(dfd, &st))
		die("%s", "fstat");
	dev_is_chr = S_ISCHR(st.st_mode);
	if (m[0] == 'i') {
		il = 1;
		chunk = num(m + 2);
		tok = strchr(m + 2, ':');
		if (!tok)
			die("bad map %s", map);
		for (tok = strtok_r(tok + 1, ",", &save); tok && n < 64;
		     tok = strtok_r(NULL, ",", &save))
			ex[n++].off = num(tok);
	} else {
		for (tok = strtok_r(m, ",", &save); tok && n < 64;
		     tok = strtok_r(NULL, ",", &save)) {
			char *c = strchr(tok + 2, ':');

			if (tok[0] != 's' || !c)
				die("bad map %s", map);
			ex[n].off = num(tok + 2);
			ex[n++].len = num(c + 1);
		}
	}
	if (!n || !size)
		die("empty map or file: %s", map);
	f = mapf(fd, size, PROT_READ, 0);
	buf = malloc(size);
	if (pread(fd, buf, size, 0) != size)
		die("%s: short read", file);
	/* Map the device piecewise: 2 MiB windows around what we need. */
	for (o = 0; o < (uint64_t)size; ) {
		uint64_t devoff, run;

		if (il) {
			uint64_t c = o / chunk, r = o % chunk;

			devoff = ex[c % n].off + (c / n) * chunk + r;
			run = chunk - r;
		} else {
			uint64_t fo = o;
			int i;

			for (i = 0; i < n && fo >= ex[i].len; i++)
				fo -= ex[i].len;
			if (i == n)
				die("%s: map shorter than the file", file);
			devoff = ex[i].off + fo;
			run = ex[i].len - fo;
		}
		if (run > (uint64_t)size - o)
			run = size - o;
		{
			uint64_t base = devoff & ~((1ULL << 21) - 1);
			uint64_t mlen = devoff - base + run;
			uint8_t *d;

			/* device_dax maps whole 2 MiB units only. */
			if (dev_is_chr)
				mlen = (mlen + (1ULL << 21) - 1) & ~((1ULL << 21) - 1);
			d = mapf(dfd, mlen, PROT_READ, base);

			if (memcmp(d + (devoff - base), f + o, run) ||
			    memcmp(buf + o, f + o, run)) {
				fprintf(stderr, "fvt: %s: mismatch in [%llu, +%llu) (device %#llx)\n",
					file, (unsigned long long)o,
					(unsigned long long)run,
					(unsigned long long)devoff);
				bad = 1;
			}
			munmap(d, mlen);
		}
		o += run;
	}
	printf("devcmp %s size=%lld extents=%d interleaved=%d %s\n", file,
	       (long long)size, n, il, bad ? "MISMATCH" : "equal");
	return bad;
}

/* ---- simple commands ---- */

/* KEY's value in the daemon's .meta/.status (KEY= at a line start). */
/*
 * One descriptor of the status file, kept open: every read then costs the
 * daemon the same requests (a READ; the file is direct_io), however long
 * since the last one. Opening it each time would cost a LOOKUP or GETATTR
 * whenever the kernel's entry and attribute caches had expired, as they do
 * during a long run, and those would be counted as upcalls.
 */
static long long status_value(const char *status, const char *key)
{
	static const char *path;
	static int fd = -1;
	char buf[8192], *p;
	size_t klen = strlen(key);
	ssize_t n;

	if (fd < 0 || strcmp(path, status)) {
		if (fd >= 0)
			close(fd);
		fd = openf(status, O_RDONLY);
		path = status;
	}
	n = pread(fd, buf + 1, sizeof(buf) - 2, 0);
	if (n <= 0)
		die("%s: empty", status);
	buf[0] = '\n';
	buf[n + 1] = 0;
	for (p = buf; (p = strchr(p, '\n')); p++)
		if (!strncmp(p + 1, key, klen) && p[1 + klen] == '=')
			return atoll(p + 2 + klen);
	die("no such key in the status: %s", key);
	return -1;
}

/* The daemon's request counter; -1 without a status file. */
static long long requests(const char *status)
{
	return status ? status_value(status, "requests") : -1;
}

/* Requests that reading STATUS itself costs (the same every time). */
static long long status_cost(const char *status)
{
	long long a, b;

	if (!status)
		return 0;
	a = requests(status);
	b = requests(status);
	return b - a;
}

static int mmapread(const char *file, const char *status)
{
	int fd = openf(file, O_RDONLY);
	off_t size = fsize(fd);
	long long cost = status_cost(status), r0, r1;
	long f0;
	double t0;
	uint64_t s;
	void *p;

	p = mapf(fd, size, PROT_READ, 0);
	r0 = requests(status);
	f0 = minflt();
	t0 = now();
	s = sum(p, size);
	t0 = now() - t0;
	f0 = minflt() - f0;
	r1 = requests(status);
	printf("mmapread size=%lld faults=%ld seconds=%.3f sum=%llx upcalls=%lld\n",
	       (long long)size, f0, t0, (unsigned long long)s,
	       status ? r1 - r0 - cost : -1);
	return status && r1 - r0 - cost ? 1 : 0;
}

static int touch(const char *file, const char *status)
{
	int fd = openf(file, O_RDONLY);
	off_t size = fsize(fd), o;
	long long cost = status_cost(status), r0, r1;
	volatile uint8_t *p;
	long f0;
	unsigned int x = 0;

	p = mapf(fd, size, PROT_READ, 0);
	r0 = requests(status);
	f0 = minflt();
	for (o = 0; o < size; o += 4096)
		x += p[o];
	f0 = minflt() - f0;
	r1 = requests(status);
	printf("touch size=%lld pages=%lld faults=%ld faults_per_gib=%.0f x=%u upcalls=%lld\n",
	       (long long)size, (long long)(size / 4096), f0,
	       f0 * (double)(1 << 30) / size, x,
	       status ? r1 - r0 - cost : -1);
	return status && r1 - r0 - cost ? 1 : 0;
}

static int patwrite(const char *file, uint64_t off, uint64_t len,
		    uint64_t seed, int viamap)
{
	int fd = openf(file, O_RDWR);
	uint8_t *b = malloc(len);
	uint64_t i;

	for (i = 0; i < len; i++)
		b[i] = pat(seed, off + i);
	if (viamap) {
		uint64_t base = off & ~4095ULL;
		uint8_t *p = mapf(fd, off - base + len, PROT_READ | PROT_WRITE,
				  base);

		memcpy(p + (off - base), b, len);
		if (msync(p, off - base + len, MS_SYNC))
			perror("msync");
		munmap(p, off - base + len);
	} else if (pwrite(fd, b, len, off) != (ssize_t)len) {
		perror("pwrite");
		return 1;
	}
	printf("%s off=%llu len=%llu ok\n", viamap ? "mwrite" : "pwrite",
	       (unsigned long long)off, (unsigned long long)len);
	return 0;
}

/* The first of @len bytes at @p not in pattern @seed (from @patoff); @len if none. */
static uint64_t patdiff(const volatile uint8_t *p, uint64_t len, uint64_t seed,
			uint64_t patoff)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, patoff + i))
			break;
	return i;
}

static int patcheck(const char *path, uint64_t off, uint64_t len,
		    uint64_t seed, int dev, uint64_t patoff)
{
	int fd = openf(path, O_RDONLY);
	uint8_t *b;
	uint64_t i, base = off & ~((1ULL << 21) - 1);

	if (dev) {
		/* Whole 2 MiB pages: device_dax refuses other lengths. */
		b = mapf(fd, (off - base + len + (1ULL << 21) - 1) & ~((1ULL << 21) - 1),
			 PROT_READ, base);
		b += off - base;
	} else {
		b = malloc(len);
		if (pread(fd, b, len, off) != (ssize_t)len) {
			perror("pread");
			return 1;
		}
	}
	i = patdiff(b, len, seed, patoff);
	if (i < len) {
		printf("check %s: byte %llu differs\n", path,
		       (unsigned long long)(off + i));
		return 1;
	}
	printf("check %s off=%llu len=%llu ok\n", path, (unsigned long long)off,
	       (unsigned long long)len);
	return 0;
}

static int errnum(const char *s)
{
	static const struct { const char *n; int e; } t[] = {
		{ "EIO", EIO }, { "EPERM", EPERM }, { "EINVAL", EINVAL },
		{ "EOPNOTSUPP", EOPNOTSUPP }, { "ENOSPC", ENOSPC },
		{ "EACCES", EACCES }, { "ENOTCONN", ENOTCONN },
		{ "EROFS", EROFS }, { "ENXIO", ENXIO }, { "SIGBUS", -SIGBUS },
		{ "EUCLEAN", EUCLEAN }, { "ENOENT", ENOENT },
		{ "0", 0 },
	};
	unsigned int i;
	char *end;
	long n;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].n))
			return t[i].e;
	/* A misspelt name must not turn into 0 ("expect success"). */
	n = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || n <= 0)
		die("unknown errno %s", s);
	return (int)n;
}

static sigjmp_buf jb;
static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

/* Run @op on @file; returns 0 on success, errno, or -SIGBUS. */
static int do_op(const char *op, const char *file)
{
	int fd, p[2], rc = 0;
	char b[4096];

	if (!strcmp(op, "otrunc")) {
		fd = open(file, O_RDWR | O_TRUNC);
		return fd < 0 ? errno : 0;
	}
	fd = open(file, strcmp(op, "read") && strcmp(op, "splice-read") &&
			  strncmp(op, "mmap", 4) && strcmp(op, "mprotect-write") ?
			  O_RDWR : O_RDONLY);
	if (fd < 0)
		return errno;
	if (!strcmp(op, "ftrunc")) {
		rc = ftruncate(fd, fsize(fd) + 4096) ? errno : 0;
	} else if (!strcmp(op, "falloc")) {
		rc = fallocate(fd, 0, 0, 4096) ? errno : 0;
	} else if (!strcmp(op, "splice-read")) {
		if (pipe(p))
			return errno;
		rc = splice(fd, NULL, p[1], NULL, 4096, 0) < 0 ? errno : 0;
	} else if (!strcmp(op, "splice-write")) {
		if (pipe(p) || write(p[1], b, sizeof(b)) < 0)
			return errno;
		rc = splice(p[0], NULL, fd, NULL, 4096, 0) < 0 ? errno : 0;
	} else if (!strcmp(op, "read")) {
		rc = pread(fd, b, sizeof(b), 0) < 0 ? errno : 0;
	} else if (!strcmp(op, "write")) {
		memset(b, 0x5a, sizeof(b));
		rc = pwrite(fd, b, sizeof(b), 0) < 0 ? errno : 0;
	} else if (!strcmp(op, "write-end")) {
		memset(b, 0x5a, sizeof(b));
		rc = pwrite(fd, b, sizeof(b), fsize(fd)) < 0 ? errno : 0;
	} else if (!strcmp(op, "copyrange")) {
		loff_t in = 0, out = 8;

		rc = copy_file_range(fd, &in, fd, &out, 4, 0) < 0 ? errno : 0;
	} else if (!strcmp(op, "msync")) {
		volatile uint8_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					   MAP_SHARED, fd, 0);

		if (m == MAP_FAILED)
			return errno;
		m[0] = m[0];
		rc = msync((void *)m, 4096, MS_SYNC) ? errno : 0;
	} else if (!strcmp(op, "mmap-private-write")) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			       fd, 0);

		rc = m == MAP_FAILED ? errno : 0;
	} else if (!strcmp(op, "mmap-private-read") ||
		   !strcmp(op, "mprotect-write")) {
		volatile uint8_t *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE,
					   fd, 0);

		if (m == MAP_FAILED)
			return errno;
		rc = m[0] & 0;
		if (op[1] == 'p' && mprotect((void *)m, 4096,
					     PROT_READ | PROT_WRITE))
			rc = errno;
	} else if (!strcmp(op, "mmapread")) {
		volatile uint8_t *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED,
					   fd, 0);

		if (m == MAP_FAILED)
			return errno;
		signal(SIGBUS, on_bus);
		if (sigsetjmp(jb, 1))
			rc = -SIGBUS;
		else
			rc = m[0] & 0;
	} else {
		die("unknown op %s", op);
	}
	return rc;
}

static int expect(const char *want, const char *op, const char *file)
{
	int e = errnum(want), got = do_op(op, file);

	printf("expect %s %s: got %s%s (%d), want %s\n", op, file,
	       got < 0 ? "signal " : "", got < 0 ? strsignal(-got) :
	       strerror(got), got, want);
	return got == e ? 0 : 1;
}

/*
 * Poison the page at @off of @file through a shared mapping, in a child.
 * Prints how the child ended.
 */
static int hwpoison(const char *file, uint64_t off)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		int fd = openf(file, O_RDONLY);
		volatile uint8_t *p = mapf(fd, fsize(fd), PROT_READ, 0);
		uint8_t x = p[off];

		(void)x;
		if (madvise((void *)(p + off), 4096, MADV_HWPOISON)) {
			printf("hwpoison madvise failed: %s\n", strerror(errno));
			_exit(3);
		}
		x = p[off];
		printf("hwpoison: page still readable after madvise\n");
		_exit(0);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("hwpoison child killed by %s\n", strsignal(WTERMSIG(st)));
	else
		printf("hwpoison child exit %d\n", WEXITSTATUS(st));
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS ? 0 : 1;
}

static int holdmap(const char *file, const char *ready, const char *go)
{
	int fd = openf(file, O_RDONLY);
	off_t size = fsize(fd);
	void *p = mapf(fd, size, PROT_READ, 0);
	struct rusage r0, r1;
	uint64_t a, b;

	close(fd);
	a = sum(p, size);
	close(open(ready, O_CREAT | O_WRONLY, 0644));
	while (access(go, F_OK))
		usleep(100000);
	getrusage(RUSAGE_SELF, &r0);
	b = sum(p, size);
	getrusage(RUSAGE_SELF, &r1);
	/* faults=0: nothing unmapped the file while it was held */
	printf("holdmap %s before=%llx after=%llx %s faults=%ld\n", file,
	       (unsigned long long)a, (unsigned long long)b,
	       a == b ? "same" : "DIFFERENT",
	       (r1.ru_minflt - r0.ru_minflt) + (r1.ru_majflt - r0.ru_majflt));
	return a == b ? 0 : 1;
}

/*
 * A page of FILE held by nothing but a pipe: what an O_DIRECT in flight
 * or a vmsplice() leaves behind when the mapping and the file are gone.
 */
static int pinpage(const char *file, const char *ready, const char *go)
{
	int fd = openf(file, O_RDONLY), pfd[2];
	char *p = mapf(fd, 4096, PROT_READ, 0), buf[4096];
	struct iovec iov = { .iov_base = p, .iov_len = 4096 };
	ssize_t n;

	if (pipe(pfd) || fcntl(pfd[0], F_SETPIPE_SZ, 65536) < 0 ||
	    vmsplice(pfd[1], &iov, 1, 0) != 4096) {
		perror("fvt: vmsplice");
		return 1;
	}
	munmap(p, 4096);
	close(fd);
	close(open(ready, O_CREAT | O_WRONLY, 0644));
	while (access(go, F_OK))
		usleep(100000);
	n = read(pfd[0], buf, sizeof(buf));
	printf("pinpage %s: drained %zd bytes\n", file, n);
	return n == 4096 ? 0 : 1;
}

static void waitfor(const char *path)
{
	while (access(path, F_OK))
		usleep(100000);
}

static void put(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		die("cannot write %s", path);
}

static int pinfault(const char *file, const char *ready, const char *go,
		    const char *done, const char *drain)
{
	int fd = openf(file, O_RDONLY), pfd[2];
	volatile char *p = mapf(fd, 2 << 20, PROT_READ, 0);
	struct iovec iov = { .iov_base = (void *)p, .iov_len = 4096 };
	char buf[4096];
	ssize_t n;

	(void)p[0];
	if (pipe(pfd) || fcntl(pfd[0], F_SETPIPE_SZ, 65536) < 0 ||
	    vmsplice(pfd[1], &iov, 1, 0) != 4096) {
		perror("fvt: vmsplice");
		return 1;
	}
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	put(ready, buf);
	waitfor(go);
	signal(SIGBUS, on_bus);
	if (sigsetjmp(jb, 1)) {
		put(done, "sigbus\n");
	} else {
		(void)p[1 << 20];
		put(done, "mapped\n");
	}
	waitfor(drain);
	n = read(pfd[0], buf, sizeof(buf));
	printf("pinfault %s: drained %zd bytes\n", file, n);
	return n == 4096 ? 0 : 1;
}

/* ---- two hosts ---- */

static void create(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	if (fd < 0)
		die("cannot create %s", path);
	close(fd);
}

/* A position-dependent 64-bit hash of each file's bytes, read by mmap. */
static int msum(char **files, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		int fd = openf(files[i], O_RDONLY);
		off_t size = fsize(fd), o;
		const volatile uint8_t *p =
			size ? mapf(fd, size, PROT_READ, 0) : NULL;
		uint64_t h = 0xcbf29ce484222325ULL;

		close(fd);
		for (o = 0; o + 8 <= size; o += 8)
			h = (h ^ *(const volatile uint64_t *)(p + o)) *
			    0x100000001b3ULL;
		for (; o < size; o++)
			h = (h ^ p[o]) * 0x100000001b3ULL;
		printf("%s %lld %016llx\n", files[i], (long long)size,
		       (unsigned long long)h);
		if (size)
			munmap((void *)p, size);
	}
	return 0;
}

/* One opener of openrace: wait at the barrier, open, check the pattern. */
static int race_one(int barrier, const char *file, uint64_t seed, int bymap)
{
	char c;
	int fd;
	off_t size;
	uint8_t *b;
	uint64_t i;

	/* The parent closes the write end: every child wakes at once. */
	while (read(barrier, &c, 1) < 0 && errno == EINTR)
		;
	fd = open(file, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "openrace: open %s: %s\n", file, strerror(errno));
		return 1;
	}
	size = fsize(fd);
	if (bymap) {
		b = size ? mapf(fd, size, PROT_READ, 0) : NULL;
	} else {
		b = malloc(size ? size : 1);
		if (!b || pread(fd, b, size, 0) != size) {
			fprintf(stderr, "openrace: read %s: %s\n", file,
				strerror(errno));
			return 1;
		}
	}
	i = patdiff(b, size, seed, 0);
	if (i < (uint64_t)size) {
		fprintf(stderr, "openrace: %s by %s: byte %llu differs\n", file,
			bymap ? "mmap" : "read(2)", (unsigned long long)i);
		return 1;
	}
	return 0;
}

static int openrace(int copies, uint64_t seed, char **files, int n)
{
	int barrier[2], i, k, ok = 0, opens = copies * n, st;
	pid_t pid;

	if (copies < 1 || pipe(barrier))
		die("%s", "openrace: bad COPIES or no pipe");
	for (k = 0; k < n; k++) {
		for (i = 0; i < copies; i++) {
			pid = fork();
			if (pid < 0)
				die("%s", "openrace: fork");
			if (pid == 0) {
				close(barrier[1]);
				_exit(race_one(barrier[0], files[k], seed + k,
					       i & 1));
			}
		}
	}
	close(barrier[0]);
	close(barrier[1]);
	while ((pid = wait(&st)) > 0)
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("openrace files=%d opens=%d ok=%d\n", n, opens, ok);
	return ok == opens ? 0 : 1;
}

static int names(char **dirs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		if (!d) {
			fprintf(stderr, "fvt: %s: %s\n", dirs[i], strerror(errno));
			return 1;
		}
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				printf("%s/%s\n", dirs[i], e->d_name);
		closedir(d);
	}
	return 0;
}

/* One mapping sees what another host writes: no page cache between. */
static int watchmap(const char *file, uint64_t len, uint64_t s1, uint64_t s2,
		    const char *ready, const char *go)
{
	int fd = openf(file, O_RDONLY);
	const volatile uint8_t *p = mapf(fd, len, PROT_READ, 0);
	uint64_t a, b;

	close(fd);
	a = patdiff(p, len, s1, 0);
	create(ready);
	while (access(go, F_OK))
		usleep(20000);
	b = patdiff(p, len, s2, 0);
	printf("watchmap %s len=%llu: seed %llu %s, then seed %llu %s\n", file,
	       (unsigned long long)len, (unsigned long long)s1,
	       a == len ? "ok" : "WRONG", (unsigned long long)s2,
	       b == len ? "ok" : "WRONG");
	return a == len && b == len ? 0 : 1;
}

/*
 * How long after another host commits a log entry this mount shows @path.
 * The commit is seen in the log header (next_index at byte 40) through a
 * mapping of the mount's .meta/.log, which in famfs mode is the device
 * memory itself. With @status, only the daemon's own poll may find the
 * entry: nothing here looks up a name until its log_entries has it.
 */
static int visible(const char *log, const char *path, const char *status,
		   const char *ready, double seconds)
{
	int fd = openf(log, O_RDONLY);
	const volatile uint64_t *hdr = mapf(fd, 4096, PROT_READ, 0);
	uint64_t n0 = hdr[5], n = n0;
	double start = now(), t0 = 0, t1 = 0;
	struct stat st;

	close(fd);
	create(ready);
	while (now() - start < seconds) {
		n = __atomic_load_n(&hdr[5], __ATOMIC_ACQUIRE);
		if (!t0 && n != n0)
			t0 = now();
		if (!status && !stat(path, &st)) {
			t1 = now();
			break;
		}
		if (status && t0 &&
		    status_value(status, "log_entries") >= (long long)n) {
			t1 = now();
			break;
		}
		usleep(500);
	}
	if (!t1 || (status && stat(path, &st))) {
		printf("visible %s: not seen in %.0f s (log index %llu -> %llu)\n",
		       path, seconds, (unsigned long long)n0,
		       (unsigned long long)n);
		return 1;
	}
	if (!t0)
		t0 = t1; /* the name showed before the header was read */
	printf("visible %s via=%s delay_ms=%.1f index=%llu\n", path,
	       status ? "poll" : "lookup", (t1 - t0) * 1000,
	       (unsigned long long)n);
	return 0;
}

/* ---- bench ---- */
static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double seqpass(const void *p, size_t len, uint64_t *s)
{
	double t = now();

	*s += sum(p, len);
	return now() - t;
}

static double randpass(const uint8_t *p, size_t len, unsigned int n,
		       uint64_t *s)
{
	uint64_t x = 88172645463325252ULL, acc = 0;
	double t = now();
	unsigned int i;

	for (i = 0; i < n; i++) {
		const volatile uint64_t *q;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		q = (const volatile uint64_t *)(p + (x % (len / 64)) * 64);
		acc += q[0] + q[1] + q[2] + q[3] + q[4] + q[5] + q[6] + q[7];
	}
	*s += acc;
	return now() - t;
}

static int bench(const char *file, const char *dev, uint64_t devoff,
		 uint64_t size, int passes)
{
	int fd = openf(file, O_RDONLY), dfd = openf(dev, O_RDONLY);
	double fs[64], rs[64], fr[64], rr[64], ratio_s[64], ratio_r[64];
	unsigned int nrand = 1 << 20;
	const uint8_t *f, *r;
	uint64_t s = 0;
	long f0, ff, rf;
	int i;

	if (passes > 64)
		passes = 64;
	if ((uint64_t)fsize(fd) < size)
		size = fsize(fd);
	f = mapf(fd, size, PROT_READ, 0);
	f0 = minflt();
	seqpass(f, size, &s);		/* warm-up: faults the file in */
	ff = minflt() - f0;
	r = mapf(dfd, size, PROT_READ, devoff);
	f0 = minflt();
	seqpass(r, size, &s);
	rf = minflt() - f0;
	for (i = 0; i < passes; i++) {
		/* A B, then B A: neither side always goes first. */
		if (i % 2) {
			rs[i] = seqpass(r, size, &s);
			fs[i] = seqpass(f, size, &s);
			rr[i] = randpass(r, size, nrand, &s);
			fr[i] = randpass(f, size, nrand, &s);
		} else {
			fs[i] = seqpass(f, size, &s);
			rs[i] = seqpass(r, size, &s);
			fr[i] = randpass(f, size, nrand, &s);
			rr[i] = randpass(r, size, nrand, &s);
		}
		/* ratio: famfs throughput / raw throughput = raw time / famfs time */
		ratio_s[i] = rs[i] / fs[i];
		ratio_r[i] = rr[i] / fr[i];
	}
	{
		double ms = median(ratio_s, passes), mr = median(ratio_r, passes);
		double gib = (double)size / (1 << 30);

		printf("bench size=%llu passes=%d\n", (unsigned long long)size,
		       passes);
		printf("seq-read ratio famfs/raw median=%.3f min=%.3f max=%.3f famfs-median-s=%.4f raw-median-s=%.4f\n",
		       ms, ratio_s[0], ratio_s[passes - 1], median(fs, passes),
		       median(rs, passes));
		printf("rand-64B ratio famfs/raw median=%.3f min=%.3f max=%.3f famfs-median-s=%.4f raw-median-s=%.4f reads=%u\n",
		       mr, ratio_r[0], ratio_r[passes - 1], median(fr, passes),
		       median(rr, passes), nrand);
		printf("faults per GiB: famfs=%.0f raw=%.0f (checksum %llx)\n",
		       ff / gib, rf / gib, (unsigned long long)s);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "devcmp") && argc == 5)
		return devcmp(argv[2], argv[3], argv[4]);
	if (!strcmp(c, "mmapread") && (argc == 3 || argc == 4))
		return mmapread(argv[2], argc == 4 ? argv[3] : NULL);
	if (!strcmp(c, "touch") && (argc == 3 || argc == 4))
		return touch(argv[2], argc == 4 ? argv[3] : NULL);
	if ((!strcmp(c, "pwrite") || !strcmp(c, "mwrite")) && argc == 6)
		return patwrite(argv[2], num(argv[3]), num(argv[4]),
				num(argv[5]), c[0] == 'm');
	if (!strcmp(c, "check") && argc == 6)
		return patcheck(argv[2], num(argv[3]), num(argv[4]),
				num(argv[5]), 0, num(argv[3]));
	if (!strcmp(c, "devcheck") && argc == 7)
		return patcheck(argv[2], num(argv[3]), num(argv[4]),
				num(argv[5]), 1, num(argv[6]));
	if (!strcmp(c, "expect") && argc == 5)
		return expect(argv[2], argv[3], argv[4]);
	if (!strcmp(c, "hwpoison") && argc == 4)
		return hwpoison(argv[2], num(argv[3]));
	if (!strcmp(c, "holdmap") && argc == 5)
		return holdmap(argv[2], argv[3], argv[4]);
	if (!strcmp(c, "pinfault") && argc == 7)
		return pinfault(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (!strcmp(c, "pinpage") && argc == 5)
		return pinpage(argv[2], argv[3], argv[4]);
	if (!strcmp(c, "now") && argc == 2)
		return printf("%.6f\n", now()) < 0;
	if (!strcmp(c, "msum") && argc >= 3)
		return msum(argv + 2, argc - 2);
	if (!strcmp(c, "openrace") && argc >= 5)
		return openrace(atoi(argv[2]), num(argv[3]), argv + 4, argc - 4);
	if (!strcmp(c, "names") && argc >= 3)
		return names(argv + 2, argc - 2);
	if (!strcmp(c, "watchmap") && argc == 8)
		return watchmap(argv[2], num(argv[3]), num(argv[4]),
				num(argv[5]), argv[6], argv[7]);
	if (!strcmp(c, "visible") && argc == 7)
		return visible(argv[2], argv[3],
			       strcmp(argv[4], "-") ? argv[4] : NULL, argv[5],
			       atof(argv[6]));
	if (!strcmp(c, "bench") && argc == 7)
		return bench(argv[2], argv[3], num(argv[4]), num(argv[5]),
			     atoi(argv[6]));
	fprintf(stderr, "usage: see the comment at the top of fvt.c\n");
	return 2;
}
