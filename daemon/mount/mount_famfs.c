// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mount.famfs (also installed as mount.fuse.famfs, the name mount(8) runs
 * for "-t fuse.famfs"):
 *
 *   mount.famfs DEVICE MOUNTPOINT [-sfnv] [-N NS] [-o OPTIONS]
 *
 * Checks the device and the mount point, so the usual mistakes get a
 * message naming them, then runs famfs-fused, which returns only once the
 * mount is ready or has failed with its reason. Under systemd the daemon
 * runs as the service famfs@MOUNT.service instead (unit.c). Defaults for our options
 * come from /etc/famfs/famfs.conf ($FAMFS_CONF overrides the path).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libfamfs.h"
#include "mountinfo.h"
#include "option_ranges.h"
#include "unit.h"

#define CONF_DEFAULT "/etc/famfs/famfs.conf"
#define FAMFS_FUSE_DEV "/dev/famfs-fuse"

/*
 * Strings are allocated to fit: an option is never cut short, so a long
 * option list cannot lose its tail (a "ro" at the end of it, say).
 */
struct settings {
	char *fallback; /* auto yes no */
	char *role;	/* auto master client */
	char *poll_ms;
	char *readahead_kb;
	char *writer_wait;
	char *commit_delay;
	char *logfile;
	char *fuse_dev;
	char *splice; /* yes no: fallback reads spliced from an image file */
	bool debug;
	/*
	 * Honour set-user-ID bits and device nodes from the log: off unless
	 * asked (-o suid / dev, or "suid = yes" / "dev = yes" in famfs.conf).
	 */
	bool suid, dev;
	char *passthru; /* mount(8) options the daemon applies */
};

static const char *prog = "mount.famfs";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(32); /* mount(8)'s "mount failure" */
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		fail("out of memory");
	return d;
}

static void replace(char **field, const char *val)
{
	free(*field);
	*field = xstrdup(val);
}

/* Add "key" or "key=val" to the comma-separated list *@list. */
static void append(char **list, const char *key, const char *val)
{
	size_t n = *list ? strlen(*list) : 0;
	size_t add = 1 + strlen(key) + (val ? 1 + strlen(val) : 0) + 1;
	char *p = realloc(*list, n + add);

	if (!p)
		fail("out of memory");
	snprintf(p + n, add, "%s%s%s%s", n ? "," : "", key, val ? "=" : "",
		 val ? val : "");
	*list = p;
}

/* A yes/no setting (debug, suid, dev) is on: "1" or "yes". */
static bool is_yes(const char *val)
{
	return !strcmp(val, "1") || !strcmp(val, "yes");
}

/*
 * The settings passed on to the daemon as key=value, in this order: where
 * each is kept, the words it takes ("": any value) and, for a number, the
 * daemon's range for it. Numbers are passed on as parsed (decimal), so
 * the daemon reads what we checked.
 */
static const struct {
	const char *key;
	size_t field; /* offsetof(struct settings, the char *) */
	const char *words;
	uint64_t max; /* numbers; 0 for words */
} passed[] = {
	{ "fallback", offsetof(struct settings, fallback), "auto yes no", 0 },
	{ "role", offsetof(struct settings, role), "auto master client", 0 },
	{ "poll_ms", offsetof(struct settings, poll_ms), NULL,
	  FUSED_POLL_MS_MAX },
	{ "readahead_kb", offsetof(struct settings, readahead_kb), NULL,
	  FUSED_READAHEAD_KB_MAX },
	{ "writer_wait", offsetof(struct settings, writer_wait), NULL,
	  FUSED_WRITER_WAIT_MAX },
	{ "commit_delay", offsetof(struct settings, commit_delay), NULL,
	  FUSED_COMMIT_DELAY_MS_MAX },
	{ "logfile", offsetof(struct settings, logfile), "", 0 },
	{ "fuse_dev", offsetof(struct settings, fuse_dev), "", 0 },
	{ "splice", offsetof(struct settings, splice), "yes no", 0 },
};
#define NPASSED (sizeof(passed) / sizeof(passed[0]))

static char **field_of(struct settings *s, size_t i)
{
	return (char **)((char *)s + passed[i].field);
}

static const char *value_of(const struct settings *s, size_t i)
{
	return *(char *const *)((const char *)s + passed[i].field);
}

/* Is @val one of the space-separated @words ("": anything is)? */
static bool one_of(const char *words, const char *val)
{
	size_t n = strlen(val);

	if (!*words)
		return true;
	for (const char *w = words; *w;) {
		size_t len = strcspn(w, " ");

		if (len == n && !strncmp(w, val, n))
			return true;
		w += len + (w[len] == ' ');
	}
	return false;
}

/*
 * @val, checked as a value of passed[@i]; a number comes back in decimal
 * (in @num). It fails, saying why, unless the value is good.
 */
static const char *checked(size_t i, const char *val, char num[24],
			   const char *where)
{
	uint64_t v;

	if (passed[i].words) {
		if (!one_of(passed[i].words, val))
			fail("%s: bad value for %s: '%s'", where,
			     passed[i].key, val);
		return val;
	}
	if (famfs_parse_number(val, 0, passed[i].max, &v))
		fail("%s: bad value for %s: %s", where, passed[i].key,
		     famfs_errmsg());
	snprintf(num, 24, "%llu", (unsigned long long)v);
	return num;
}

/* One of our settings, from the config file or -o; false if not ours. */
static bool set(struct settings *s, const char *key, const char *val,
		const char *where)
{
	bool flag = !strcmp(key, "debug") || !strcmp(key, "suid") ||
		    !strcmp(key, "dev");
	char num[24];
	size_t i = 0;

	while (i < NPASSED && strcmp(key, passed[i].key))
		i++;
	if (i == NPASSED && !flag && strcmp(key, "shadow"))
		return false;
	if (flag && !val)
		val = "1";
	if (!val || (flag && !one_of("0 1 yes no", val)))
		fail("%s: bad value for %s: '%s'", where, key, val ? val : "");
	if (i < NPASSED)
		val = checked(i, val, num, where);
	/*
	 * Values go into the daemon's option list (and the unit's
	 * environment): a comma would end the option and start another
	 * ("fuse_dev = /dev/fuse,suid"), so would quotes and control
	 * characters elsewhere.
	 */
	if (val[strcspn(val, ",\"'")] || !famfs_name_is_clean(val)) {
		char esc[FAMFS_ESCAPED_LEN(256)];

		fail("%s: bad value for %s: '%s': a comma, quote or control character is mount option syntax, not part of a value",
		     where, key, famfs_escape(val, esc, sizeof(esc)));
	}
	if (i < NPASSED)
		replace(field_of(s, i), val);
	else if (!strcmp(key, "debug"))
		s->debug = is_yes(val);
	else if (!strcmp(key, "suid"))
		s->suid = is_yes(val);
	else if (!strcmp(key, "dev"))
		s->dev = is_yes(val);
	else
		fprintf(stderr,
			"%s: note: shadow=%s ignored: famfs-fuse serves the namespace from the log itself and keeps no shadow tree\n",
			prog, val);
	return true;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/*
 * "key = value" lines of any length; '#' starts a comment. A missing file
 * is fine; one that cannot be read (a directory, no permission) is not.
 */
static void read_conf(struct settings *s)
{
	const char *path = getenv("FAMFS_CONF");
	char *line = NULL, where[1100];
	unsigned int lineno = 0;
	size_t cap = 0;
	struct stat st;
	FILE *f;

	if (!path || !*path)
		path = CONF_DEFAULT;
	f = fopen(path, "r");
	if (!f) {
		if (errno != ENOENT)
			fail("cannot read %s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		fail("cannot read %s: %s", path, strerror(EISDIR));
	while (getline(&line, &cap, f) >= 0) {
		char *hash = strchr(line, '#'), *eq, *key;

		lineno++;
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		eq = strchr(key, '=');
		if (!eq)
			fail("%s: expected 'key = value'", where);
		*eq = '\0';
		if (!set(s, trim(key), trim(eq + 1), where))
			fprintf(stderr, "%s: %s: unknown setting '%s' ignored\n",
				prog, where, trim(key));
	}
	if (ferror(f))
		fail("cannot read %s: %s", path, strerror(errno));
	free(line);
	fclose(f);
}

/* Options mount(8) or fstab may pass that mean nothing to a famfs daemon. */
static bool ignorable(const char *opt)
{
	static const char *const names[] = {
		"auto", "noauto", "user", "nouser", "users", "_netdev",
		"nofail", "defaults", "owner", "group", "sync", "async",
		"relatime", "norelatime", "strictatime", "lazytime",
		"nolazytime", "loud", "silent", "dirsync", "mand", "nomand",
		"allow_other", "default_permissions",
	};

	if (!strncmp(opt, "x-", 2) || !strncmp(opt, "comment=", 8))
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(opt, names[i]))
			return true;
	return false;
}

static void parse_o(struct settings *s, char *list)
{
	char *save = NULL;

	for (char *opt = strtok_r(list, ",", &save); opt;
	     opt = strtok_r(NULL, ",", &save)) {
		char *val = strchr(opt, '=');

		if (val)
			*val = '\0';
		if (set(s, opt, val ? val + 1 : NULL, "-o"))
			continue;
		if (val)
			*val = '=';
		if (!strcmp(opt, "nosuid") || !strcmp(opt, "nodev"))
			set(s, opt + 2, "no", "-o");
		else if (!strcmp(opt, "ro") || !strcmp(opt, "rw") ||
			 !strcmp(opt, "client_rw") ||
			 !strcmp(opt, "noexec") || !strcmp(opt, "exec") ||
			 !strcmp(opt, "noatime") || !strcmp(opt, "atime"))
			append(&s->passthru, opt, NULL);
		else if (!ignorable(opt))
			fail("unknown mount option '%s'", opt);
	}
}

static bool has_opt(const char *list, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = list; (p = strstr(p, opt)); p += n)
		if ((p == list || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

/*
 * A devdax device with no driver (famfs_fuse was unloaded, which unbinds
 * famfs_dax) cannot even be opened to check it: give it to famfs_dax,
 * as the daemon would. A device on device_dax is the daemon's to move.
 */
static void bind_unbound(const char *dev, const struct settings *s)
{
	char drv[256];

	/* fsdev_dax (7.3) serves no mapping the daemon could read through. */
	if (famfs_dax_driver(dev, drv, sizeof(drv)) || drv[0] ||
	    !strcmp(s->fallback, "yes") || !famfs_kernel_dax_node_maps())
		return;
	if (famfs_dax_bind(dev))
		fail("%s has no dax driver and cannot get famfs_dax: %s", dev,
		     famfs_errmsg());
}

static void warn(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s: warning: %s\n", prog, msg);
}

/*
 * Run from a meson build directory, the helper starts the daemon built
 * beside it: an installed one may be missing or of another version.
 */
static const char *build_tree_daemon(void)
{
	static char path[PATH_MAX];
	char dir[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	/* BUILD/daemon/mount/mount.famfs: BUILD has meson-private/. */
	snprintf(probe, sizeof(probe), "%s/../../meson-private", dir);
	if (access(probe, F_OK))
		return NULL;
	snprintf(probe, sizeof(probe), "%s/../fused/famfs-fused", dir);
	if (!realpath(probe, path) || access(path, X_OK))
		return NULL;
	return path;
}

static const char *daemon_path(void)
{
	const char *env = getenv("FAMFS_FUSED");
	const char *built;

	if (env && *env)
		return env;
	built = build_tree_daemon();
	return built ? built : FAMFS_FUSED_PATH;
}

/*
 * The daemon detaches and exits once the mount is ready (0) or has failed
 * (its reason on stderr). Its failure is a mount failure, which mount(8)
 * callers know as 32 whatever status the daemon chose.
 */
static int run_daemon(const char *opts, const char *dev, const char *mnt)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("cannot start %s: %s", daemon_path(), strerror(errno));
	if (pid == 0) {
		execl(daemon_path(), "famfs-fused", "-o", opts, dev, mnt,
		      (char *)NULL);
		fail("cannot run %s: %s", daemon_path(), strerror(errno));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			fail("waiting for %s: %s", daemon_path(),
			     strerror(errno));
	if (WIFSIGNALED(status))
		fail("%s was killed by signal %d before the mount was ready",
		     daemon_path(), WTERMSIG(status));
	if (WEXITSTATUS(status))
		exit(32);
	return 0;
}

static void usage(void)
{
	printf("Usage: %s DEVICE MOUNTPOINT [-fnsv] [-o OPTIONS]\n"
	       "       %s --unit-name MOUNTPOINT\n"
	       "\n"
	       "Mount the famfs on DEVICE (a /dev/daxX.Y or a file) at MOUNTPOINT;\n"
	       "mount(8) runs this as mount.fuse.famfs for -t fuse.famfs and fstab.\n"
	       "Returns once the mount is ready (0) or has failed (32, with the reason).\n"
	       "Under systemd the daemon runs as famfs@MOUNT.service, whose name\n"
	       "--unit-name prints; elsewhere (or with FAMFS_NO_SYSTEMD=1) it is\n"
	       "started directly.\n"
	       "\n"
	       "  -f  fake: check everything, say what would run, mount nothing\n"
	       "  -v  say what is run\n"
	       "  -s, -n, -N  accepted for mount(8); nothing to do\n"
	       "  -o  mount options: ro rw noexec noatime, suid dev (default:\n"
	       "      nosuid,nodev: the log is untrusted; see mount.famfs(8)), and ours:\n"
	       "      fallback=auto|yes|no role=auto|master|client poll_ms=N debug\n"
	       "      readahead_kb=N writer_wait=SECONDS commit_delay=MS splice=yes|no\n"
	       "      logfile=PATH fuse_dev=PATH (shadow= is accepted and ignored)\n"
	       "Defaults for ours: %s ($FAMFS_CONF). See mount.famfs(8).\n",
	       prog, prog, CONF_DEFAULT);
}

/*
 * DEVICE and MOUNTPOINT as absolute paths. A famfs whose daemon is gone
 * answers ENOTCONN, even to realpath(): the daemon replaces such a mount
 * (famfs-fused(8)), so it is let through, and *@dead says so.
 */
static void resolve(const char *devarg, const char *mntarg,
		    char dev[PATH_MAX], char mnt[PATH_MAX], bool *dead)
{
	struct stat st;

	if (stat(devarg, &st) < 0)
		fail("%s: no such device (%s)", devarg, strerror(errno));
	if (!realpath(devarg, dev))
		fail("%s: %s", devarg, strerror(errno));
	*dead = false;
	if (mntarg[0] == '/' && famfs_mount_dead(mntarg)) {
		snprintf(mnt, PATH_MAX, "%s", mntarg);
		*dead = true;
	} else if (!realpath(mntarg, mnt) || stat(mnt, &st) < 0) {
		fail("mount point %s does not exist", mntarg);
	} else if (!S_ISDIR(st.st_mode)) {
		fail("mount point %s is not a directory", mnt);
	}
}

/*
 * Is @dev a famfs this mount can serve? Fails with the reason if not.
 * Returns whether the daemon would write to its log.
 */
static bool check_device(const char *dev, const struct settings *s,
			 bool loud)
{
	char drv[256];
	struct famfs_dev d;
	bool writer;
	int rc;

	bind_unbound(dev, s);
	/* A devdax device: which driver serves famfs here, or none. */
	if (strcmp(s->fallback, "yes") &&
	    famfs_dax_driver(dev, drv, sizeof(drv)) == 0 &&
	    (loud || !famfs_kernel_dax_driver())) {
		snprintf(drv, sizeof(drv), "%s: ", prog);
		famfs_say_kernel_driver(stderr, drv);
	}
	famfs_dev_exposure(dev, warn, NULL);
	rc = famfs_dev_open_fs(dev, 0, &d);
	if (rc)
		fail("%s: %s", dev,
		     rc == -ENOENT ? "not a famfs (no famfs superblock; see mkfs.famfs)" :
				     famfs_errmsg());
	/* Would the daemon write? Then it must be this host's only writer. */
	writer = famfs_role(&d) == FAMFS_ROLE_MASTER &&
		 strcmp(s->role, "client") &&
		 !(s->passthru && has_opt(s->passthru, "ro"));
	famfs_dev_close(&d);
	return writer;
}

/* Nothing mounted at @mnt (but a dead famfs), and one writer per device. */
static void check_free(const char *dev, const char *mnt, bool dead,
		       bool writer)
{
	char where[PATH_MAX];
	bool rw;

	if (dead)
		fprintf(stderr, "%s: %s: the famfs mounted there has lost its daemon; mounting over it replaces it\n",
			prog, mnt);
	else if (famfs_mount_at(mnt))
		fail("%s is already mounted (a famfs is mounted there)", mnt);
	if (writer && famfs_mount_of(dev, where, sizeof(where), &rw) && rw &&
	    !(dead && !strcmp(where, mnt)))
		fail("%s is already mounted at %s (read-write; one master mount per device and host)",
		     dev, where);
}

/* The daemon's -o: what mount(8) passed on, then our settings. */
static char *daemon_options(const struct settings *s, const char *dev)
{
	char *opts = NULL;

	if (s->passthru)
		append(&opts, s->passthru, NULL);
	/* The daemon's default too; said here so that -v shows it. */
	append(&opts, s->suid ? "suid" : "nosuid", NULL);
	append(&opts, s->dev ? "dev" : "nodev", NULL);
	if (s->suid)
		fprintf(stderr, "%s: warning: mounting with suid: set-user-ID and set-group-ID files in the log run with their owner's identity, and whoever can write the log (the owner of %s, any host that can append) can make one owned by root\n",
			prog, dev);
	for (size_t i = 0; i < NPASSED; i++)
		if (value_of(s, i))
			append(&opts, passed[i].key, value_of(s, i));
	if (s->debug)
		append(&opts, "debug", NULL);
	return opts;
}

/* Start the daemon: as famfs@MOUNT.service under systemd, else directly. */
static int start(const char *opts, const char *dev, const char *mnt,
		 bool systemd, bool verbose, bool fake)
{
	char inst[400], err[1100];

	if (!systemd) {
		if (verbose || fake)
			fprintf(stderr, "%s: %s -o %s %s %s\n", prog,
				daemon_path(), opts, dev, mnt);
		return fake ? 0 : run_daemon(opts, dev, mnt);
	}
	if (famfs_unit_instance(mnt, inst, sizeof(inst)))
		fail("mount point name too long: %s", mnt);
	if (verbose || fake)
		fprintf(stderr,
			"%s: systemctl start famfs@%s.service (FAMFS_DEVICE=%s FAMFS_OPTIONS=%s)\n",
			prog, inst, dev, opts);
	if (fake)
		return 0;
	if (famfs_unit_mount(dev, mnt, opts, err, sizeof(err)))
		fail("%s", err);
	return 0;
}

/* What the command line asks for */
struct request {
	struct settings s; /* famfs.conf, then -o */
	bool fake, verbose; /* -f, -v */
	const char *device, *mountpoint;
};

/* The command line into @r; -1 to go on, else the exit code. */
static int parse_cmdline(int argc, char **argv, struct request *r)
{
	static const struct option lopts[] = {
		{ "unit-name", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char inst[400];
	int c;

	while ((c = getopt_long(argc, argv, "o:sfnvN:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 'U':
			if (famfs_unit_instance(optarg, inst, sizeof(inst)))
				fail("mount point name too long: %s", optarg);
			printf("famfs@%s.service\n", inst);
			return 0;
		case 'o':
			parse_o(&r->s, optarg);
			break;
		case 'f':
			r->fake = true;
			break;
		case 'v':
			r->verbose = true;
			break;
		case 's': /* sloppy: we reject unknown options anyway */
		case 'n': /* no mtab: there is none to write */
		case 'N':
			break;
		case 'V':
			printf("%s (famfs) %s\n", prog, FAMFS_VERSION);
			return 0;
		case 'h':
			usage();
			return 0;
		default:
			return 1;
		}
	}
	if (argc - optind != 2)
		fail("usage: %s DEVICE MOUNTPOINT [-o OPTIONS]", prog);
	r->device = argv[optind];
	r->mountpoint = argv[optind + 1];
	return -1;
}

/* Check what @r names and mount it; the exit code. */
static int mount_famfs(struct request *r)
{
	char dev[PATH_MAX], mnt[PATH_MAX];
	bool systemd = famfs_unit_wanted();
	bool dead, writer;
	char *opts;
	int rc;

	resolve(r->device, r->mountpoint, dev, mnt, &dead);
	writer = check_device(dev, &r->s, r->verbose || r->fake);
	/* Under systemd the unit loads the module first (modprobe@). */
	if (!strcmp(r->s.fallback, "no") && !r->s.fuse_dev && !systemd &&
	    access(FAMFS_FUSE_DEV, F_OK) < 0)
		fail("famfs kernel module not loaded and fallback disabled (%s is missing)",
		     FAMFS_FUSE_DEV);
	check_free(dev, mnt, dead, writer);
	opts = daemon_options(&r->s, dev);
	rc = start(opts, dev, mnt, systemd, r->verbose, r->fake);
	free(opts);
	return rc;
}

/* Freed so that a sanitizer build reports only real leaks. */
static void free_settings(struct settings *s)
{
	for (size_t i = 0; i < NPASSED; i++)
		free(*field_of(s, i));
	free(s->passthru);
}

int main(int argc, char **argv)
{
	struct request r = { .s = { .fallback = xstrdup("auto"),
				    .role = xstrdup("auto") } };
	int rc;

	if (strrchr(argv[0], '/'))
		prog = strrchr(argv[0], '/') + 1;
	else
		prog = argv[0];
	/*
	 * Nothing is handed to a mount helper but stdio. What a caller left
	 * open would live on in the daemon: a file of an earlier mount of
	 * this device held open that way keeps that mount's file system, and
	 * whatever is still being written in it, from ever ending.
	 */
	close_range(3, ~0U, 0);
	read_conf(&r.s);
	rc = parse_cmdline(argc, argv, &r);
	if (rc < 0)
		rc = mount_famfs(&r);
	free_settings(&r.s);
	return rc;
}
