// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The monitoring socket upstream famfs's scripts query: HTTP over a unix
 * socket at SHADOW/sock, where SHADOW is what the user.famfs.shadow xattr
 * of the mount says (getxattr in ops.c). libmicrohttpd parses the
 * requests; it runs in our poll loop (external epoll mode), so the
 * handlers read the daemon's state from the loop's own thread.
 *
 *   GET /icache_stats   YAML: upstream's three lookup figures, then every
 *                       .meta/.status key with the same values
 *   GET /icache_dump    logs the namespace (one line per node)
 *   GET /log_level      the log level (syslog numbers, 0-7)
 *   POST|PUT /log_level body "N" or "level=N": set it
 *   GET /pid            "pid: N"
 *
 * Root only: the socket is 0600 (in a 0700 directory when we make it) and
 * each connection's peer credentials must be uid 0.
 */
#include <dirent.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fused.h"

#define BODY_MAX 64

struct req {
	char body[BODY_MAX];
	size_t len;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     const char *type, const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result res;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	res = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return res;
}

static bool peer_is_root(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return ci && getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED,
				&cred, &len) == 0 && cred.uid == 0;
}

/* "icache_stats:" with upstream's keys, then .status's key=value lines. */
static enum MHD_Result icache_stats(struct fused *fs, struct MHD_Connection *c)
{
	char status[4096], out[8192];
	size_t n;
	int len;

	fused_status(fs, status, sizeof(status));
	len = snprintf(out, sizeof(out),
		       "icache_stats:\n"
		       "  search_count:   %llu\n"
		       "  nodes_scanned:  %llu\n"
		       "  search_fail_ct: %llu\n",
		       (unsigned long long)fs->lookups,
		       (unsigned long long)(fs->lookups - fs->lookup_misses),
		       (unsigned long long)fs->lookup_misses);
	n = (size_t)len;
	for (char *save = NULL, *l = strtok_r(status, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');

		if (!eq || n >= sizeof(out))
			continue;
		*eq = '\0';
		/* single-quoted YAML scalars: any value stays a string */
		n += (size_t)snprintf(out + n, sizeof(out) - n, "  %s: ", l);
		if (n >= sizeof(out))
			break;
		if (eq[1] && strspn(eq + 1, "0123456789") == strlen(eq + 1))
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s\n",
					      eq + 1);
		else {
			n += (size_t)snprintf(out + n, sizeof(out) - n, "'");
			for (const char *v = eq + 1; *v && n < sizeof(out); v++)
				n += (size_t)snprintf(out + n, sizeof(out) - n,
						      *v == '\'' ? "''" : "%c",
						      *v);
			if (n < sizeof(out))
				n += (size_t)snprintf(out + n,
						      sizeof(out) - n, "'\n");
		}
	}
	if (n >= sizeof(out))
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
			     "status too long\n");
	return reply(c, MHD_HTTP_OK, "text/yaml", out);
}

/* The namespace into the daemon's log, one line per node. */
static void dump_ns(struct fused *fs)
{
	static char path[4096];

	fused_log(L_NOTICE, "namespace: %llu files, %llu directories, %llu log entries",
		  (unsigned long long)fs->ns.files,
		  (unsigned long long)fs->ns.dirs,
		  (unsigned long long)fs->ns.nindex);
	for (uint64_t i = 0; i < fs->ns.nindex; i++) {
		const struct famfs_node *n = fs->ns.by_index[i];

		if (!n)
			continue;
		famfs_ns_path(n, path, sizeof(path));
		fused_log(L_NOTICE, "  ino %llu %s %s mode 0%o uid %u gid %u size %llu%s",
			  (unsigned long long)n->ino, n->is_dir ? "dir " : "file",
			  path, n->mode,
			  n->uid, n->gid, (unsigned long long)n->size,
			  n->overlaps ? " (refused: overlaps)" : "");
	}
}

static enum MHD_Result log_level(struct MHD_Connection *c, const char *method,
				 struct req *rq)
{
	char out[96];
	const char *v = rq->body;
	int was = fused_log_get_level();
	char *end;
	long want;

	if (!strcmp(method, "GET")) {
		snprintf(out, sizeof(out), "%d\n", was);
		return reply(c, MHD_HTTP_OK, "text/plain", out);
	}
	if (strcmp(method, "POST") && strcmp(method, "PUT"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			     "Method Not Allowed\n");
	rq->body[rq->len] = '\0';
	if (!strncmp(v, "level=", 6))
		v += 6;
	want = strtol(v, &end, 10);
	while (*end == '\n' || *end == '\r' || *end == ' ')
		end++;
	if (end == v || *end || want < 0 || want > L_DEBUG) {
		snprintf(out, sizeof(out), "Failed to set log level to %.16s\n",
			 v);
		return reply(c, MHD_HTTP_OK, "text/plain", out);
	}
	fused_log_set_level((int)want);
	fused_log(L_NOTICE, "log level %d (was %d), asked on the monitoring socket",
		  (int)want, was);
	snprintf(out, sizeof(out), "log level set to %ld (from %d)\n", want,
		 was);
	return reply(c, MHD_HTTP_OK, "text/plain", out);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *data,
			      size_t *data_size, void **con_cls)
{
	struct fused *fs = cls;
	struct req *rq = *con_cls;
	char out[64];

	(void)version;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		return MHD_YES; /* the body, if any, comes in the next calls */
	}
	if (*data_size) {
		size_t take = *data_size;

		if (take > BODY_MAX - 1 - rq->len)
			take = BODY_MAX - 1 - rq->len;
		memcpy(rq->body + rq->len, data, take);
		rq->len += take;
		*data_size = 0;
		return MHD_YES;
	}
	if (!peer_is_root(c))
		return reply(c, MHD_HTTP_FORBIDDEN, "text/plain",
			     "Forbidden: famfs monitoring is root's\n");
	fused_log(L_DEBUG, "monitoring request %s %s", method, url);
	if (!strcmp(url, "/log_level"))
		return log_level(c, method, rq);
	if (strcmp(method, "GET"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			     "Method Not Allowed\n");
	if (!strcmp(url, "/icache_stats"))
		return icache_stats(fs, c);
	if (!strcmp(url, "/icache_dump")) {
		dump_ns(fs);
		return reply(c, MHD_HTTP_OK, "text/yaml",
			     "icache: dumping icache to syslog\n");
	}
	if (!strcmp(url, "/pid")) {
		snprintf(out, sizeof(out), "pid: %d\n", (int)getpid());
		return reply(c, MHD_HTTP_OK, "text/yaml", out);
	}
	return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "Not Found\n");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode why)
{
	(void)cls;
	(void)c;
	(void)why;
	free(*con_cls);
	*con_cls = NULL;
}

/*
 * Remove the directories of daemons that were killed before they could:
 * older than a minute, with no socket anyone listens on. A listener that
 * does not accept (a stopped daemon) keeps its directory.
 */
static void sweep_stale(const char *run)
{
	DIR *d = opendir(run);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char dir[PATH_MAX];
		struct stat st;
		int fd, rc;

		if (strncmp(de->d_name, "shadow-", 7))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", run, de->d_name);
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    time(NULL) - st.st_mtime < 60)
			continue;
		if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock",
				     dir) >= sizeof(sa.sun_path))
			continue;
		/*
		 * Never blocking: a stopped daemon's socket accepts nothing
		 * and its full queue would hold a blocking connect() for
		 * ever (EAGAIN: someone listens, so it is not stale).
		 */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		if (fd < 0)
			continue;
		rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		if (rc < 0 && (errno == ECONNREFUSED || errno == ENOENT)) {
			unlink(sa.sun_path);
			rmdir(dir);
		}
		close(fd);
	}
	if (d)
		closedir(d);
}

/* A directory of our own for the socket when none was given. */
static int make_shadow(struct fused *fs)
{
	const char *run = getenv("FAMFS_RUN_DIR");
	char dir[PATH_MAX];
	int fd;

	if (!run || !*run)
		run = "/run/famfs";
	if (mkdir(run, 0755) < 0 && errno != EEXIST)
		return -errno;
	/* Where we remove and make what others trust: root's alone. */
	fd = famfs_private_dir_open(run, "socket directory");
	if (fd < 0) {
		fused_log(L_WARN, "%s", famfs_errmsg());
		return fd;
	}
	close(fd);
	sweep_stale(run);
	snprintf(dir, sizeof(dir), "%s/shadow-XXXXXX", run);
	if (!mkdtemp(dir))
		return -errno;
	snprintf(fs->shadow, sizeof(fs->shadow), "%s", dir);
	fs->shadow_made = true;
	return 0;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	/* A stale socket of an earlier daemon; nothing else is removed. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlink(path);
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* created 0600 (umask), then made sure of */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));

	umask(old);
	if (rc < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

void fused_monitor_start(struct fused *fs)
{
	const union MHD_DaemonInfo *di;
	int rc, fd;

	fs->monitor_fd = -1;
	if (!fs->shadow[0] && (rc = make_shadow(fs)) < 0) {
		fused_log(L_WARN, "no monitoring socket: cannot make a directory for it: %s",
			  strerror(-rc));
		return;
	}
	snprintf(fs->monitor_sock, sizeof(fs->monitor_sock), "%s/sock",
		 fs->shadow);
	fd = listen_unix(fs->monitor_sock);
	if (fd < 0) {
		fused_log(L_WARN, "no monitoring socket at %s: %s",
			  fs->monitor_sock, strerror(-fd));
		fs->monitor_sock[0] = '\0';
		return;
	}
	fs->mhd = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, handle, fs,
				   MHD_OPTION_LISTEN_SOCKET, fd,
				   MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				   MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				   MHD_OPTION_CONNECTION_LIMIT, 16u,
				   MHD_OPTION_END);
	di = fs->mhd ? MHD_get_daemon_info(fs->mhd,
					   MHD_DAEMON_INFO_EPOLL_FD) :
		       NULL;
	if (!di) {
		fused_log(L_WARN, "no monitoring socket: libmicrohttpd would not start");
		if (!fs->mhd)
			close(fd);
		fused_monitor_stop(fs); /* MHD_stop_daemon closes fd */
		return;
	}
	fs->monitor_fd = di->epoll_fd;
	fused_log(L_DEBUG, "monitoring on %s", fs->monitor_sock);
}

void fused_monitor_run(struct fused *fs)
{
	if (fs->mhd)
		MHD_run(fs->mhd);
}

int fused_monitor_timeout_ms(struct fused *fs)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (!fs->mhd || MHD_get_timeout(fs->mhd, &t) != MHD_YES)
		return -1;
	return t > 60000 ? 60000 : (int)t;
}

void fused_monitor_stop(struct fused *fs)
{
	if (fs->mhd) {
		MHD_stop_daemon(fs->mhd); /* closes the listening socket */
		fs->mhd = NULL;
	}
	fs->monitor_fd = -1;
	if (fs->monitor_sock[0])
		unlink(fs->monitor_sock);
	fs->monitor_sock[0] = '\0';
	if (fs->shadow_made && rmdir(fs->shadow) == 0)
		fs->shadow_made = false;
}
