// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs status: the famfs mounts of this host and how each is doing. The
 * daemon tells its side in <mount>/.meta/.status (key=value lines); the
 * log and the space come from reading the metadata through the mount.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "tool_util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs status [--json] [MOUNTPOINT...]\n"
		"       famfs status --watch\n"
		"\n"
		"List the famfs file systems mounted on this host (all of them, or the\n"
		"MOUNTPOINTs given) and for each say whether it is healthy, the daemon's\n"
		"mode (famfs: the kernel maps file memory directly; fallback: the daemon\n"
		"serves reads and writes itself), the device, this host's role (master\n"
		"or client), the daemon's pid, request count and start time, how many\n"
		"times a restarted daemon took over the mount without unmounting it, how\n"
		"full the log is and how much space is used and free.\n"
		"\n"
		"Set-user-ID and set-group-ID files in the log are listed as warnings,\n"
		"with whether the mount honours them (only with -o suid); they do not\n"
		"make a mount unhealthy.\n"
		"\n"
		"A mount is healthy when its daemon answers (.meta/.status can be read\n"
		"within 2 s: a stopped or hung daemon is reported, not waited for),\n"
		"its superblock and log check clean (no damaged entry, no two files\n"
		"sharing memory) and the kernel has not marked its\n"
		"device failed after a memory error (\"memory:\", the device's famfs_health\n"
		"in sysfs: ok, failed pfn=..., or unknown when the device is not served\n"
		"by the famfs_fuse module's famfs_dax driver; lost when the device went\n"
		"away under the mount). The first line says whether\n"
		"the famfs kernel module (famfs_fuse) is loaded: without it mounts run in\n"
		"fallback mode.\n"
		"\n"
		"Options:\n"
		"  -j, --json      print one JSON object: {\"kernel_module\": {...},\n"
		"                  \"mounts\": [...], \"healthy\": B}\n"
		"  -w, --watch     keep running (famfs.service does): print the status\n"
		"                  whenever the module, a mount or a daemon changes, and\n"
		"                  tell systemd a one-line summary (sd_notify STATUS=);\n"
		"                  reads only what the daemons report, not the logs\n"
		"  -h, -?, --help  show this help\n"
		"\n"
		"The mount table is read from /proc/self/mounts ($FAMFS_MOUNTS names\n"
		"another file in the same format, for tests; $FAMFS_SYSFS another /sys).\n"
		"\n"
		"Exit status:\n"
		"  0  every famfs mount listed is healthy (also when there is none)\n"
		"  1  at least one is not, or a MOUNTPOINT given is not a famfs mount\n"
		"  2  usage error\n");
}

#define KMOD_NAME "famfs_fuse"
#define WATCH_PERIOD_MS 5000
#define PROBE_MS 2000

/* The famfs kernel module, from /sys/module ($FAMFS_SYSFS for tests). */
struct kmod {
	bool loaded;
	char version[64];
};

static void read_kmod(struct kmod *k)
{
	const char *sys = getenv("FAMFS_SYSFS");
	static const char *const attrs[] = { "version", "srcversion" };
	char path[PATH_MAX];
	FILE *f;

	memset(k, 0, sizeof(*k));
	if (!sys || !*sys)
		sys = "/sys";
	snprintf(path, sizeof(path), "%s/module/%s", sys, KMOD_NAME);
	k->loaded = access(path, F_OK) == 0;
	for (size_t i = 0; k->loaded && i < 2 && !k->version[0]; i++) {
		snprintf(path, sizeof(path), "%s/module/%s/%s", sys, KMOD_NAME,
			 attrs[i]);
		f = fopen(path, "r");
		if (f && fgets(k->version, sizeof(k->version), f))
			k->version[strcspn(k->version, "\n")] = '\0';
		if (f)
			fclose(f);
	}
}

static void print_kmod(const struct kmod *k)
{
	if (k->loaded)
		printf("kernel module: %s loaded%s%s%s: mounts of devdax devices run in famfs mode\n",
		       KMOD_NAME, k->version[0] ? " (" : "", k->version,
		       k->version[0] ? ")" : "");
	else
		printf("kernel module: %s not loaded: mounts run in fallback mode\n",
		       KMOD_NAME);
	famfs_say_kernel_driver(stdout, "");
}

/* The daemon's .meta/.status has 44 lines; room for what comes next. */
#define MAX_KV 64

struct mnt {
	char source[PATH_MAX], dir[PATH_MAX], type[64];
	unsigned int nkv;
	char key[MAX_KV][32], val[MAX_KV][PATH_MAX];
	bool status_ok, fsck_ok;
	bool device_failed; /* its memory faults: do not read the log */
	struct famfs_fsck r;
	char problem[4][512];
	unsigned int nproblems;
	char unchecked[PATH_MAX + 64]; /* why the log was not read */
};

static bool famfs_type(const char *t)
{
	size_t n = strlen(t);

	/*
	 * fuse.famfs with the stock fuse; our module's famfs_fuse (as the
	 * daemon mounts it) or famfs_fuse.famfs. Same rule as
	 * daemon/fused/mountinfo.c.
	 */
	return (n > 6 && !strcmp(t + n - 6, ".famfs")) ||
	       !strncmp(t, "famfs_fuse", 10);
}

__attribute__((format(printf, 2, 3))) static void problem(struct mnt *m,
							    const char *fmt, ...)
{
	va_list ap;

	if (m->nproblems == 4)
		return;
	va_start(ap, fmt);
	vsnprintf(m->problem[m->nproblems++], sizeof(m->problem[0]), fmt, ap);
	va_end(ap);
}

static const char *kv(const struct mnt *m, const char *key)
{
	for (unsigned int i = 0; i < m->nkv; i++)
		if (!strcmp(m->key[i], key))
			return m->val[i];
	return NULL;
}

/*
 * The daemon's .meta/.status into @m, read whole within PROBE_MS: a daemon
 * that is stopped (SIGSTOP, a debugger) or wedged leaves every read of its
 * mount waiting, and status (or famfs.service's --watch) with it.
 */
static void read_status(struct mnt *m)
{
	size_t cap = MAX_KV * (PATH_MAX + 64);
	char path[PATH_MAX + 32], *text = malloc(cap + 1), *line, *rest;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/.meta/.status", m->dir);
	n = text ? famfs_read_within(path, text, cap, PROBE_MS) : -ENOMEM;
	if (n == -ETIMEDOUT) {
		problem(m, "the daemon does not answer: %s was not read within %d ms (is famfs-fused stopped or hung?)",
			path, PROBE_MS);
		free(text);
		return;
	}
	if (n < 0) {
		problem(m, "cannot read %s: %s%s", path, strerror((int)-n),
			n == -ENOTCONN ? " (the daemon is gone; umount and mount again)" : "");
		free(text);
		return;
	}
	text[n] = '\0';
	rest = text;
	while ((line = strsep(&rest, "\n")) && m->nkv < MAX_KV) {
		char *eq = strchr(line, '=');

		if (!eq || eq == line)
			continue;
		*eq = '\0';
		snprintf(m->key[m->nkv], sizeof(m->key[0]), "%.*s",
			 (int)sizeof(m->key[0]) - 1, line);
		snprintf(m->val[m->nkv], sizeof(m->val[0]), "%.*s",
			 (int)sizeof(m->val[0]) - 1, eq + 1);
		m->nkv++;
	}
	free(text);
	m->status_ok = true;
	if (!kv(m, "mode"))
		problem(m, "%s", ".meta/.status does not give the mode");
	if (kv(m, "log_damaged") && strcmp(kv(m, "log_damaged"), "0"))
		problem(m, "%s", "the daemon found a damaged log entry (run famfs fsck)");
	if (kv(m, "overlapping_files") && strcmp(kv(m, "overlapping_files"), "0"))
		problem(m, "the daemon refuses %s file(s) whose memory belongs to an earlier file (opening one gives EUCLEAN; famfs fsck names them)",
			kv(m, "overlapping_files"));
	if (kv(m, "device_health") && !strncmp(kv(m, "device_health"), "failed", 6)) {
		m->device_failed = true;
		problem(m, "the kernel marked the device failed after a memory error (famfs_health: %s): its files give EIO and SIGBUS, the log is not read; unmount, then bind the device to famfs_dax again",
			kv(m, "device_health"));
	}
	if (kv(m, "devices_missing") && strcmp(kv(m, "devices_missing"), "0"))
		problem(m, "%s of the %s devices of this famfs are missing on this host: the files on them give EIO (famfs daxdev %s names them)",
			kv(m, "devices_missing"),
			kv(m, "devices") ? kv(m, "devices") : "?", m->dir);
	if (kv(m, "device_health") && !strcmp(kv(m, "device_health"), "lost")) {
		m->device_failed = true;
		problem(m, "%s",
			"the device went away under the mount (removed, unbound or shrunk): its files give EIO, the log is not read; unmount it");
	}
}

static void read_fs(struct mnt *m)
{
	struct famfs_dev dev;
	int rc = famfs_dev_open(m->dir, 0, &dev);

	/* .meta's superblock and log are root's: not a fault of the mount. */
	if (rc == -EACCES) {
		snprintf(m->unchecked, sizeof(m->unchecked), "%s",
			 famfs_errmsg());
		return;
	}
	if (rc) {
		problem(m, "%s", famfs_errmsg());
		return;
	}
	if (famfs_fsck(&dev, &m->r)) {
		problem(m, "%s", famfs_errmsg());
	} else {
		m->fsck_ok = true;
		const char *first = NULL;

		/* each missing device, by its uuid; then the first other */
		for (unsigned int i = 0; i < m->r.nproblems; i++) {
			if (!strncmp(m->r.problems[i], "device ", 7))
				problem(m, "%s", m->r.problems[i]);
			else if (!first)
				first = m->r.problems[i];
		}
		if (famfs_fsck_status(&m->r) != FAMFS_FSCK_CLEAN &&
		    (first || !m->r.nproblems))
			problem(m, "%s", first ? first : "famfs fsck finds errors");
	}
	famfs_dev_close(&dev);
}

/* Whether this mount runs the set-user-ID files fsck names. */
static const char *setid_note(const struct mnt *m)
{
	struct statvfs v;

	if (statvfs(m->dir, &v) < 0)
		return "";
	return v.f_flag & ST_NOSUID ?
		       " (not honoured: mounted nosuid)" :
		       " (HONOURED: mounted with suid; anyone who can write the log can make such a file)";
}

static bool healthy(const struct mnt *m)
{
	return !m->nproblems;
}

/* A .status value: a number where it is one, else a string. */
static struct json_object *json_value(const char *v)
{
	size_t n = strlen(v);
	bool num = n && n < 19;

	for (size_t i = 0; i < n && num; i++)
		num = isdigit((unsigned char)v[i]);
	if (num && !(n > 1 && v[0] == '0'))
		return json_object_new_uint64(strtoull(v, NULL, 10));
	return jstr(v);
}

static void print_json(const struct kmod *k, struct mnt *ms, unsigned int n,
		       bool all_ok)
{
	struct json_object *o = json_object_new_object(), *km, *list;

	km = jadd_obj(o, "kernel_module");
	jadd_str(km, "name", KMOD_NAME);
	jadd_bool(km, "loaded", k->loaded);
	jadd_str(km, "version", k->version);
	list = jadd_array(o, "mounts");
	for (unsigned int i = 0; i < n; i++) {
		struct json_object *j = json_object_new_object(), *st, *p;
		struct mnt *m = &ms[i];

		json_object_array_add(list, j);
		jadd_str(j, "mountpoint", m->dir);
		jadd_str(j, "source", m->source);
		jadd_str(j, "fstype", m->type);
		jadd_bool(j, "healthy", healthy(m));
		if (m->unchecked[0])
			jadd_str(j, "log_not_read", m->unchecked);
		jadd_str(j, "mode", kv(m, "mode") ? kv(m, "mode") : "unknown");
		st = jadd_obj(j, "status");
		for (unsigned int k = 0; k < m->nkv; k++)
			json_object_object_add(st, m->key[k],
					       json_value(m->val[k]));
		if (m->fsck_ok) {
			jadd_str(j, "role", kv(m, "role") ? kv(m, "role") :
				 famfs_role_name(m->r.role));
			json_fs_log(jadd_obj(j, "log"), &m->r);
			json_fs_usage(j, &m->r);
			json_fs_warnings(j, &m->r);
		}
		p = jadd_array(j, "problems");
		for (unsigned int k = 0; k < m->nproblems; k++)
			jpush_str(p, m->problem[k]);
	}
	jadd_bool(o, "healthy", all_ok);
	json_print(o);
}

/*
 * When the daemon started and how often a new daemon took over the
 * mount's connection (a restart that did not unmount).
 */
static void print_daemon_life(const struct mnt *m)
{
	const char *started = kv(m, "started"), *tk = kv(m, "takeovers");
	time_t t = started ? (time_t)strtoll(started, NULL, 10) : 0;
	char when[64] = "";
	struct tm tm;

	if (!started && !tk)
		return;
	if (t && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm);
	printf("  started:   %s; restarts without unmounting: %s\n",
	       when[0] ? when : "?", tk ? tk : "?");
}

static void print_text(const struct kmod *k, struct mnt *ms, unsigned int n)
{
	print_kmod(k);
	if (!n)
		printf("no famfs file systems are mounted\n");
	for (unsigned int i = 0; i < n; i++) {
		struct mnt *m = &ms[i];
		const struct famfs_fsck *r = &m->r;
		/* paths and the problems quoting them: never raw on a tty */
		char esc[FAMFS_ESCAPED_LEN(sizeof(m->problem[0]) > PATH_MAX ?
						   sizeof(m->problem[0]) :
						   PATH_MAX)];

		printf("\n%s: %s\n", famfs_escape(m->dir, esc, sizeof(esc)),
		       healthy(m) ? "healthy" : "NOT HEALTHY");
		printf("  device:    %s\n",
		       famfs_escape(kv(m, "device") ? kv(m, "device") : m->source,
				    esc, sizeof(esc)));
		printf("  mode:      %s\n",
		       kv(m, "mode") ? kv(m, "mode") : "unknown");
		/* The daemon's word first: a mount may be role=client. */
		if (kv(m, "role"))
			printf("  role:      %s\n", kv(m, "role"));
		else if (m->fsck_ok)
			printf("  role:      %s\n", famfs_role_name(r->role));
		if (kv(m, "device_health"))
			printf("  memory:    %s\n", kv(m, "device_health"));
		if (kv(m, "pid"))
			printf("  daemon:    pid %s%s%s, %s requests served\n",
			       kv(m, "pid"), kv(m, "unit") ? ", " : "",
			       kv(m, "unit") ? kv(m, "unit") : "",
			       kv(m, "requests") ? kv(m, "requests") : "?");
		print_daemon_life(m);
		if (m->fsck_ok) {
			print_fs_usage(r, 11);
			print_fs_warnings(r, 11, setid_note(m));
		}
		if (m->unchecked[0])
			printf("  log:       not read: %s\n",
			       famfs_escape(m->unchecked, esc, sizeof(esc)));
		for (unsigned int k = 0; k < m->nproblems; k++)
			printf("  problem:   %s\n",
			       famfs_escape(m->problem[k], esc, sizeof(esc)));
	}
}

/* The famfs mounts in @table (all, or those of @want). */
static int collect(const char *table, int nwant, char **want, struct mnt **out,
		   unsigned int *count)
{
	struct mnt *ms = NULL;
	unsigned int n = 0, cap = 0;
	char line[3 * PATH_MAX];
	FILE *f = fopen(table, "r");

	if (!f) {
		fprintf(stderr, "famfs status: cannot read %s: %s\n", table,
			strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char src[PATH_MAX], dir[PATH_MAX], type[64];
		bool wanted = !nwant;
		struct mnt *m;

		char opts[1024];

		/*
		 * A FUSE mount root does not own is a user's, named as they
		 * like (fusermount3 is set-user-ID): never ours.
		 */
		if (sscanf(line, "%4095s %4095s %63s %1023s", src, dir, type,
			   opts) != 4 ||
		    !famfs_type(type) || !famfs_mount_opts_root(opts))
			continue;
		famfs_mount_unescape(src);
		famfs_mount_unescape(dir);
		for (int i = 0; i < nwant; i++) {
			char real[PATH_MAX];

			if (realpath(want[i], real) && !strcmp(real, dir))
				wanted = true;
		}
		if (!wanted)
			continue;
		if (n == cap) {
			struct mnt *p;

			cap = cap ? cap * 2 : 4;
			p = realloc(ms, cap * sizeof(*ms));
			if (!p) {
				fclose(f);
				free(ms);
				fprintf(stderr, "famfs status: out of memory\n");
				return -1;
			}
			ms = p;
		}
		m = &ms[n++];
		memset(m, 0, sizeof(*m));
		snprintf(m->source, sizeof(m->source), "%s", src);
		snprintf(m->dir, sizeof(m->dir), "%s", dir);
		snprintf(m->type, sizeof(m->type), "%s", type);
	}
	fclose(f);
	*out = ms;
	*count = n;
	return 0;
}

/*
 * One line for systemd's STATUS=: the module and every mount, escaped as
 * a whole (famfs_escape()): a newline in a name or in what a daemon
 * reports would start another sd_notify field.
 */
static void summary(const struct kmod *k, const struct mnt *ms,
		    unsigned int n, char *buf, size_t len)
{
	char raw[4096];
	size_t o = (size_t)snprintf(raw, sizeof(raw), "%s %s; %u mount%s", KMOD_NAME,
				    k->loaded ? "loaded" : "not loaded (fallback mode only)",
				    n, n == 1 ? "" : "s");

	for (unsigned int i = 0; i < n && o < sizeof(raw); i++) {
		const struct mnt *m = &ms[i];
		const char *tk = kv(m, "takeovers");

		o += (size_t)snprintf(raw + o, sizeof(raw) - o, "%s %s (%s mode, %s, %s%s%s)",
				      i ? "," : ":", m->dir,
				      kv(m, "mode") ? kv(m, "mode") : "unknown",
				      kv(m, "role") ? kv(m, "role") : "role unknown",
				      healthy(m) ? "healthy" : "NOT HEALTHY",
				      tk && strcmp(tk, "0") ? ", restarts without unmounting: " : "",
				      tk && strcmp(tk, "0") ? tk : "");
	}
	famfs_escape(raw, buf, len);
}

static volatile sig_atomic_t watch_stop;

static void on_stop(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/*
 * famfs.service: report changes. The mount table wakes us (POLLPRI on
 * mountinfo); a dying daemon or module changes nothing there, so look
 * every few seconds too.
 */
static int watch(const char *table)
{
	struct sigaction sa = { .sa_handler = on_stop };
	char last[4096] = "", now[4096];
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!watch_stop) {
		struct pollfd p = { .fd = fd, .events = POLLPRI };
		struct mnt *ms = NULL;
		unsigned int n = 0;
		struct kmod k;

		read_kmod(&k);
		if (collect(table, 0, NULL, &ms, &n))
			return CLI_FAIL;
		for (unsigned int i = 0; i < n; i++)
			read_status(&ms[i]);
		summary(&k, ms, n, now, sizeof(now));
		if (strcmp(now, last)) {
			print_text(&k, ms, n);
			printf("--\n");
			sd_notifyf(0, "READY=1\nSTATUS=%s", now);
			snprintf(last, sizeof(last), "%s", now);
		}
		free(ms);
		if (poll(&p, fd >= 0 ? 1 : 0, WATCH_PERIOD_MS) > 0 && fd >= 0)
			lseek(fd, 0, SEEK_SET); /* re-arms the notification */
	}
	if (fd >= 0)
		close(fd);
	sd_notify(0, "STOPPING=1");
	return CLI_OK;
}

int cmd_status(int argc, char **argv)
{
	const char *table = getenv("FAMFS_MOUNTS");
	bool json = false, follow = false, all_ok = true;
	const struct tool_opt opts[] = {
		OPT_FLAG('j', "json", &json),
		OPT_FLAG('w', "watch", &follow),
		OPT_HELP_ALL,
		OPT_END,
	};
	struct mnt *ms = NULL;
	unsigned int n = 0;
	struct kmod k;
	int rc;

	rc = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (rc >= 0)
		return rc;
	if (!table || !*table)
		table = "/proc/self/mounts";
	if (follow) {
		if (json || optind < argc) {
			fprintf(stderr, "famfs status: --watch takes no --json or MOUNTPOINT\n");
			return CLI_USAGE;
		}
		return watch(table);
	}
	if (collect(table, argc - optind, argv + optind, &ms, &n))
		return CLI_FAIL;

	/* A MOUNTPOINT that is not a famfs mount makes the answer "no". */
	for (int i = optind; i < argc; i++) {
		char real[PATH_MAX];
		bool found = false;

		for (unsigned int m = 0; m < n; m++)
			if (realpath(argv[i], real) && !strcmp(real, ms[m].dir))
				found = true;
		if (!found) {
			fprintf(stderr, "famfs status: %s is not a mounted famfs\n",
				argv[i]);
			all_ok = false;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		read_status(&ms[i]);
		/* The metadata of a failed device would fault (SIGBUS). */
		if ((ms[i].status_ok || !ms[i].nproblems) &&
		    !ms[i].device_failed)
			read_fs(&ms[i]);
		if (!healthy(&ms[i]))
			all_ok = false;
	}
	read_kmod(&k);
	if (json)
		print_json(&k, ms, n, all_ok);
	else
		print_text(&k, ms, n);
	free(ms);
	return all_ok ? CLI_OK : CLI_FAIL;
}
