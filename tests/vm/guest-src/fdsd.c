// SPDX-License-Identifier: GPL-2.0
/*
 * fdsd: what systemd does for famfs@.service across restarts, in the
 * guest (static, no libraries), with a load that must never notice.
 *
 *   fdsd MNT HELD RESTARTS KILLS -- DAEMON [ARG...]
 *
 * HELD is created (2 MiB) unless it exists.
 * Starts DAEMON with NOTIFY_SOCKET, keeps the fds it stores (FDSTORE=1,
 * FDNAME=...), waits for READY=1; then RESTARTS times hands it over
 * (SIGUSR1, every few a SIGKILL instead, KILLS in all) and starts it again
 * with the stored fds (LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID), as
 * systemd's restart does. Meanwhile a child creates files with
 * "famfs creat" and another keeps HELD open and mapped and, in a loop,
 * stats the mount, reads HELD through read(2) and the mapping, and stats,
 * opens and reads the newest file. At the end the daemon gets SIGTERM
 * (a stop: it must unmount and empty the store). Prints key=value lines:
 * failures, same_mount, blackout median/max (the longest operation that
 * overlaps a restart, from the signal to READY=1), longest operation.
 * Exits 0 when nothing failed and the mount never changed.
 * Each operation (stat, read, open) is timed on its own; the reader keeps
 * the longest one that overlapped each restart as it goes, so a run of
 * any length needs no record of every operation. $FDSD_SOCK names the
 * notify socket (default /run/fdsd.sock; bench/restart.sh runs this on
 * the host).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The notify socket: $FDSD_SOCK, or this. */
#define SOCK "/run/fdsd.sock"
#define MAXFD 4
#define MAXWIN 256

/*
 * Shared by the parent and its load children. A restart's window opens
 * when the parent signals the daemon (win_start, then nwin) and closes at
 * the new daemon's READY=1 (win_end, 0 while open).
 */
struct shared {
	volatile int stop;
	volatile int newest; /* index of the newest file created, or -1 */
	volatile long failures;
	volatile long nops;
	int nwin;
	volatile double win_start[MAXWIN], win_end[MAXWIN];
	volatile double black[MAXWIN]; /* longest operation overlapping each */
	volatile double longest;
};

static struct shared *sh;
static int nstore;
static int store_fd[MAXFD];
static char store_name[MAXFD][64];
static int readies;
static const char *sock_path = SOCK;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One notification: READY=1, FDSTORE=1 with an fd, FDSTOREREMOVE=1. */
static int notify_one(int s, double timeout)
{
	char buf[4096], cbuf[CMSG_SPACE(sizeof(int) * MAXFD)];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct timeval tv = { (time_t)timeout,
			      (long)((timeout - (time_t)timeout) * 1e6) };
	int fds[MAXFD], nfds = 0;
	char name[64] = "stored";
	ssize_t n;

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), (size_t)nfds * sizeof(int));
		}
	char *p = strstr(buf, "FDNAME=");

	if (p)
		sscanf(p + 7, "%63[^\n]", name);
	if (strstr(buf, "READY=1"))
		readies++;
	int add = strstr(buf, "FDSTORE=1") && nfds;
	int remove = strstr(buf, "FDSTOREREMOVE=1") != NULL;

	/* A name stored again replaces the old fd, as in systemd. */
	for (int i = 0; (add || remove) && i < nstore; i++)
		if (!strcmp(store_name[i], name)) {
			close(store_fd[i]);
			store_fd[i] = store_fd[--nstore];
			strcpy(store_name[i], store_name[nstore]);
			break;
		}
	for (int i = 0; i < nfds; i++) {
		if (i == 0 && add && nstore < MAXFD) {
			store_fd[nstore] = fds[0];
			strcpy(store_name[nstore++], name);
		} else {
			close(fds[i]);
		}
	}
	return 0;
}

static pid_t start(char **argv)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	char names[256] = "", v[32];
	int hi[MAXFD];

	for (int i = 0; i < nstore; i++) {
		hi[i] = fcntl(store_fd[i], F_DUPFD, 64);
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "%s%s", i ? ":" : "", store_name[i]);
	}
	for (int i = 0; i < nstore; i++)
		dup2(hi[i], 3 + i); /* dup2 clears FD_CLOEXEC */
	if (nstore) {
		snprintf(v, sizeof(v), "%d", nstore);
		setenv("LISTEN_FDS", v, 1);
		setenv("LISTEN_FDNAMES", names, 1);
		snprintf(v, sizeof(v), "%d", (int)getpid());
		setenv("LISTEN_PID", v, 1);
	}
	setenv("NOTIFY_SOCKET", sock_path, 1);
	execv(argv[0], argv);
	_exit(127);
}

static long mount_id(const char *mnt)
{
	char line[4096], where[4096];
	long id, found = -1;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%ld %*d %*s %*s %4095s", &id, where) == 2 &&
		    !strcmp(where, mnt))
			found = id;
	if (f)
		fclose(f);
	return found;
}

/* One operation that began at @t0 has ended, @ok or not. */
static void op(double t0, int ok)
{
	double t1 = now(), d = t1 - t0;
	int n = __atomic_load_n(&sh->nwin, __ATOMIC_ACQUIRE);

	if (!ok)
		sh->failures++;
	sh->nops++;
	if (d > sh->longest)
		sh->longest = d;
	/*
	 * The restarts it overlapped: from the newest back to the first
	 * one that had ended before it began.
	 */
	for (int k = n - 1; k >= 0; k--) {
		double end = sh->win_end[k];

		if (end && end < t0)
			break;
		if (sh->win_start[k] <= t1 && d > sh->black[k])
			sh->black[k] = d;
	}
}

static void timed_ops(const char *mnt, int fd, const unsigned char *map,
		      const unsigned char *first)
{
	unsigned char buf[4096];
	char path[4096];
	struct stat st;
	double t0 = now();
	int f;

	op(t0, stat(mnt, &st) == 0);
	t0 = now();
	op(t0, pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf) &&
		       !memcmp(buf, first, sizeof(buf)) &&
		       !memcmp(map, first, 4096));
	if (sh->newest < 0)
		return;
	snprintf(path, sizeof(path), "%s/tko%02d", mnt, sh->newest);
	t0 = now();
	op(t0, stat(path, &st) == 0);
	t0 = now();
	f = open(path, O_RDONLY);
	op(t0, f >= 0);
	if (f < 0)
		return;
	t0 = now();
	op(t0, read(f, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	close(f);
}

static void reader(const char *mnt, const char *held)
{
	static unsigned char first[4096];
	int fd = open(held, O_RDONLY);
	unsigned char *map = fd < 0 ? MAP_FAILED :
			     mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	if (map == MAP_FAILED || pread(fd, first, 4096, 0) != 4096) {
		sh->failures++;
		_exit(1);
	}
	while (!sh->stop)
		timed_ops(mnt, fd, map, first);
	_exit(0);
}

/*
 * famfs creat -s 2m -r -S SEED PATH; 0 when it worked. A creat that hangs
 * is killed after 60 s (SIGALRM) and fails like any other.
 */
static int famfs_creat(const char *path, int seed)
{
	char s[16];
	int status;
	pid_t p;

	snprintf(s, sizeof(s), "%d", seed);
	p = fork();
	if (!p) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		alarm(60);
		execlp("famfs", "famfs", "creat", "-s", "2m", "-r", "-S", s,
		       path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(p, &status, 0) != p || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "fdsd: famfs creat %s failed\n", path);
		return -1;
	}
	return 0;
}

static void creator(const char *mnt)
{
	for (int i = 0; i < 40 && !sh->stop; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/tko%02d", mnt, i);
		if (famfs_creat(path, i + 1))
			sh->failures++;
		else
			sh->newest = i;
		usleep(100000);
	}
	_exit(0);
}

/* READY=1 from @d (and its two fds the first time), unless it dies. */
static int wait_ready(int s, pid_t d, int want, double timeout)
{
	double end = now() + timeout;

	while (readies < want || (want == 1 && nstore < 2)) {
		double left = end - now();
		int status;

		if (left <= 0 || waitpid(d, &status, WNOHANG) == d)
			return -1;
		notify_one(s, left < 0.2 ? left + 0.001 : 0.2);
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int restarts, kills, s, status, same = 1, rc = 0, nwin;
	double black[MAXWIN];
	pid_t d, rd, cr;
	long id0;

	if (argc < 7 || strcmp(argv[5], "--")) {
		fprintf(stderr, "usage: fdsd MNT HELD RESTARTS KILLS -- DAEMON [ARG...]\n");
		return 2;
	}
	restarts = atoi(argv[3]);
	kills = atoi(argv[4]);
	if (restarts < 1 || restarts > MAXWIN || kills < 0 || kills > restarts)
		return 2;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	sh->newest = -1;
	if (getenv("FDSD_SOCK"))
		sock_path = getenv("FDSD_SOCK");
	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return 2;
	unlink(sock_path);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, sock_path);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("fdsd: notify socket");
		return 1;
	}
	d = start(argv + 6);
	if (wait_ready(s, d, 1, 60) < 0) {
		fprintf(stderr, "fdsd: no READY=1 and two stored fds\n");
		kill(d, SIGKILL);
		return 1;
	}
	printf("stored=%d\n", nstore);
	id0 = mount_id(argv[1]);
	if (access(argv[2], F_OK) && famfs_creat(argv[2], 7)) {
		kill(d, SIGTERM);
		return 1;
	}
	rd = fork();
	if (!rd)
		reader(argv[1], argv[2]);
	cr = fork();
	if (!cr)
		creator(argv[1]);
	sleep(1);
	for (int i = 0; i < restarts; i++) {
		int kill9 = kills && i % (restarts / kills) == restarts / kills / 2 &&
			    i / (restarts / kills) < kills;
		int want = readies + 1;

		sh->win_start[i] = now();
		__atomic_store_n(&sh->nwin, i + 1, __ATOMIC_RELEASE);
		kill(d, kill9 ? SIGKILL : SIGUSR1);
		waitpid(d, &status, 0);
		if (!kill9 && !(WIFEXITED(status) && WEXITSTATUS(status) == 75)) {
			fprintf(stderr, "fdsd: restart %d: the daemon exited with %#x, not 75\n",
				i, status);
			rc = 1;
		}
		d = start(argv + 6);
		if (wait_ready(s, d, want, 60) < 0) {
			fprintf(stderr, "fdsd: restart %d: no READY=1\n", i);
			rc = 1;
			break;
		}
		sh->win_end[i] = now();
		if (mount_id(argv[1]) != id0)
			same = 0;
		usleep(300000);
	}
	sh->stop = 1;
	waitpid(cr, &status, 0);
	alarm(60); /* an operation that never returns must not hang the guest */
	waitpid(rd, &status, 0);
	alarm(0);
	/* Restarts that never finished (no READY=1) are left out. */
	nwin = sh->nwin && !sh->win_end[sh->nwin - 1] ? sh->nwin - 1 : sh->nwin;
	for (int i = 0; i < nwin; i++)
		black[i] = sh->black[i];
	qsort(black, (size_t)nwin, sizeof(double), cmp);
	printf("restarts=%d kills=%d ops=%ld files=%d failures=%ld same_mount=%d\n",
	       nwin, kills, sh->nops, sh->newest + 1, sh->failures, same);
	printf("blackout_median_ms=%.1f blackout_max_ms=%.1f longest_op_ms=%.1f\n",
	       nwin ? black[nwin / 2] * 1000 : -1,
	       nwin ? black[nwin - 1] * 1000 : -1, sh->longest * 1000);
	/* A stop: SIGTERM unmounts and empties the store. */
	kill(d, SIGTERM);
	waitpid(d, &status, 0);
	for (double end = now() + 10; nstore && now() < end;)
		notify_one(s, 1);
	printf("stop_exit=%d store_left=%d mounted_after_stop=%d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1, nstore,
	       mount_id(argv[1]) >= 0);
	/* The load really ran: files were made and operations done. */
	if (sh->newest < 0 || sh->nops <= 0) {
		fprintf(stderr, "fdsd: no load: %d files made, %ld operations\n",
			sh->newest + 1, sh->nops);
		rc = 1;
	}
	if (sh->failures || !same || nstore || mount_id(argv[1]) >= 0 ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		rc = 1;
	return rc;
}
