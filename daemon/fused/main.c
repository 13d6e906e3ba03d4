// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs-fused: serve a famfs over FUSE.
 *
 *   famfs-fused [-f] [-d] [-o OPTS] [--fuse-dev PATH] DEVICE MOUNTPOINT
 *   famfs_fused [-f] [-d] [-s] -o daxdev=DEVICE[,shadow=DIR]... MOUNTPOINT
 *
 * The second form is upstream famfs's (its daemon's name is a symlink to
 * us); either name takes either form.
 *
 * Without -f the daemon detaches, and the command returns only once the
 * mount is ready (exit 0) or has failed (exit 1, reason on stderr), so
 * mount.famfs and scripts can rely on its status. Under systemd run it
 * with -f: it sends READY=1 when the kernel's INIT has been answered.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "fused.h"
#include "mountinfo.h"
#include "option_ranges.h"
#include "takeover.h"

#define FUSE_DEV "/dev/fuse"
#define FAMFS_FUSE_DEV "/dev/famfs-fuse"
#define DEFAULT_POLL_MS 1000
#define DEFAULT_READAHEAD_KB 1024 /* one max-size FUSE request */
/* well inside famfs@.service's stop timeout (30 s) */
#define DEFAULT_WRITER_WAIT_S 10

enum fallback { FALLBACK_AUTO, FALLBACK_YES, FALLBACK_NO };

struct opts {
	bool foreground, ro, debug;
	bool client_rw; /* a client may write file data */
	/*
	 * A log is written by whoever can write the device (another host, an
	 * image file's owner): its set-user-ID bits and device nodes are not
	 * honoured unless asked for with "suid" or "dev" (MS_NOSUID, MS_NODEV).
	 */
	bool suid, dev;
	enum fallback fallback;
	const char *role; /* auto, master, client */
	const char *logfile;
	/* upstream's daxdev= and source=/shadow= (a device or a directory) */
	const char *daxdev, *source;
	unsigned long mflags;
};

static struct fused the_fs;
static bool detached;
static volatile sig_atomic_t stop, nsignals;
static int signal_pipe[2] = { -1, -1 }; /* wakes the loop's poll() */

/*
 * A stop signal: the loop ends (once the files being written are closed,
 * see may_leave()); main() then unmounts. SIGUSR1 hands the connection
 * over to the next daemon instead (takeover.c).
 */
static void on_signal(int sig)
{
	int saved = errno;

	stop = sig == SIGUSR1 ? 2 : 1;
	nsignals++;
	/* a full pipe wakes the loop as well */
	(void)!write(signal_pipe[1], "", 1);
	errno = saved;
}

static void set_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* No SA_RESTART: poll() must return so the loop sees the flag. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs-fused [-f] [-d] [-o OPTIONS] [--fuse-dev PATH] DEVICE MOUNTPOINT\n"
		"\n"
		"Serve the famfs on DEVICE (a /dev/daxX.Y or a regular file) at MOUNTPOINT.\n"
		"  -f              stay in the foreground (systemd: Type=notify)\n"
		"  -d              debug messages (and libfuse's request trace)\n"
		"  --fuse-dev PATH FUSE device to use (default: /dev/famfs-fuse when the\n"
		"                  famfs kernel module is loaded and DEVICE is devdax,\n"
		"                  else /dev/fuse)\n"
		"Options (-o, comma separated):\n"
		"  ro              serve read-only (a client is, unless client_rw)\n"
		"  client_rw       on a client, let file data be written (never the\n"
		"                  log): applications keep the hosts' caches coherent\n"
		"  role=auto|master|client\n"
		"  fallback=auto|yes|no  serve data ourselves when the kernel cannot\n"
		"  poll_ms=N       look for entries other hosts logged every N ms (1000)\n"
		"  logfile=PATH    log there instead of syslog once detached\n"
		"  readahead_kb=N  kernel readahead for the mount (1024; 0: leave it)\n"
		"  writer_wait=S   on a stop or restart, wait up to S seconds (10) for\n"
		"                  the files being written through the mount to close\n"
		"  commit_delay=MS log a file written through the mount MS ms after its\n"
		"                  close (0): until then it may be renamed or removed\n"
		"                  (rsync), and a crash loses it\n"
		"  ready_fd=N      once mounted (or failed), write OK (or ERR and the\n"
		"                  reason) to fd N and close it\n"
		"  noexec noatime rw defaults  as for mount(8)\n"
		"  suid dev        honour set-user-ID files and device nodes from the\n"
		"                  log (default: nosuid,nodev; the log is untrusted)\n"
		"\n"
		"Upstream famfs's form (also as famfs_fused): [-f] [-d] [-s] -o OPTIONS MOUNTPOINT\n"
		"  daxdev=DEVICE   the device\n"
		"  source=PATH, shadow=PATH  a directory: where the monitoring socket\n"
		"                  goes (PATH/sock); a device: the device\n"
		"  -s, fsname= timeout= cache= flock no_flock readdirplus no_readdirplus\n"
		"  pass_yaml debug=N clone_fd max_threads= max_idle_threads=\n"
		"                  accepted; see famfs-fused(8) for what each does here\n");
}

/* Report how starting went to whoever waits: parent, mount.famfs, systemd. */
void fused_ready(struct fused *fs, const char *raw)
{
	char esc[1024];
	/* one line wherever it goes (the ready pipe, STATUS=, a terminal) */
	const char *err = raw ? famfs_escape(raw, esc, sizeof(esc)) : NULL;

	if (err) {
		fused_log(L_ERR, "%s", raw);
		/* The reason must reach the one who mounts, log file or not. */
		if (!fused_log_on_stderr() && !fs->initialized)
			fprintf(stderr, "famfs-fused: %s\n", err);
	}
	if (fs->ready_fd >= 0) {
		char line[1100];
		int n = snprintf(line, sizeof(line), "%s%s\n",
				 err ? "ERR " : "OK", err ? err : "");

		if (write(fs->ready_fd, line, (size_t)n) < 0) {
			/* nobody is waiting any more */
		}
		close(fs->ready_fd);
		fs->ready_fd = -1;
	}
	if (err) {
		const char *errfile = getenv("FAMFS_ERROR_FILE");
		FILE *f = errfile && *errfile && !fs->initialized ?
				  fopen(errfile, "w") : NULL;

		/* mount.famfs, which started our unit, shows it to the admin. */
		if (f) {
			fprintf(f, "%s\n", err);
			fclose(f);
		}
		sd_notifyf(0, "STATUS=%s", err);
		return;
	}
	fs->initialized = true;
	sd_notifyf(0, "READY=1\nSTATUS=serving %s on %s (%s mode, %s)",
		   fs->devpath, fs->mountpoint,
		   fs->famfs_mode ? "famfs" : "fallback",
		   famfs_role_name(fs->role));
	if (detached) {
		/* Nobody reads our stderr any more: the log goes elsewhere. */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		fused_log_detach();
		if (null >= 0) {
			dup2(null, STDERR_FILENO);
			close(null);
		}
	}
}

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fused_ready(&the_fs, msg);
	exit(1);
}

static bool privileged(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << 21); /* CAP_SYS_ADMIN */
}

/*
 * Upstream famfs_fused's options that ask for nothing we do differently:
 * its FUSE tuning (one thread serves here; lookups are never cached, so
 * that entries other hosts log show at once), its shadow YAML
 * (pass_yaml: we read the log itself) and the mount table's first column
 * (always the device here). flock is always served by the kernel.
 */
static bool upstream_opt(struct opts *o, const char *opt, const char *val)
{
	static const char *const plain[] = {
		"flock", "no_flock", "readdirplus", "no_readdirplus",
		"pass_yaml", "clone_fd",
	};
	static const char *const valued[] = {
		"fsname", "subtype", "max_threads", "max_idle_threads",
	};

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!val && !strcmp(opt, plain[i]))
			return true;
	for (size_t i = 0; i < sizeof(valued) / sizeof(valued[0]); i++)
		if (val && !strcmp(opt, valued[i]))
			return true;
	if (!strcmp(opt, "cache") && val &&
	    (!strcmp(val, "never") || !strcmp(val, "auto") ||
	     !strcmp(val, "always")))
		return true;
	if (!strcmp(opt, "timeout") && val) {
		char *end;
		double t = strtod(val, &end);

		/* strtod also reads "nan", "inf" and "1e999" (inf) */
		if (end == val || *end || !isfinite(t) || t < 0)
			die("bad timeout=%s: a number of seconds, 0 or more", val);
		return true;
	}
	if (!strcmp(opt, "debug") && val) {
		uint64_t v;

		if (famfs_parse_number(val, 0, 255, &v))
			die("bad debug=%s: %s", val, famfs_errmsg());
		o->debug = o->debug || v > 0;
		return true;
	}
	return false;
}

/* The value of numeric option @opt, at most @max; else it dies saying so. */
static unsigned int number_opt(const char *opt, const char *val, uint64_t max,
			       const char *hint)
{
	uint64_t v;

	if (famfs_parse_number(val, 0, max, &v))
		die("bad %s: %s%s", opt, famfs_errmsg(), hint);
	return (unsigned int)v;
}

static void parse_o(struct fused *fs, struct opts *o, char *list)
{
	char *save = NULL;

	for (char *opt = strtok_r(list, ",", &save); opt;
	     opt = strtok_r(NULL, ",", &save)) {
		char *val = strchr(opt, '=');

		if (val)
			*val++ = '\0';
		if (!strcmp(opt, "ro"))
			o->ro = true;
		else if (!strcmp(opt, "client_rw"))
			o->client_rw = true;
		else if (!strcmp(opt, "rw") || !strcmp(opt, "defaults") ||
			 !strcmp(opt, "allow_other") ||
			 !strcmp(opt, "default_permissions") ||
			 !strcmp(opt, "exec") || !strcmp(opt, "atime"))
			continue; /* what we do anyway */
		else if (!strcmp(opt, "suid") || !strcmp(opt, "nosuid"))
			o->suid = opt[0] == 's';
		else if (!strcmp(opt, "dev") || !strcmp(opt, "nodev"))
			o->dev = opt[0] == 'd';
		else if (!strcmp(opt, "noexec"))
			o->mflags |= MS_NOEXEC;
		else if (!strcmp(opt, "noatime"))
			o->mflags |= MS_NOATIME;
		else if (!strcmp(opt, "debug") && !val)
			o->debug = true;
		else if (!strcmp(opt, "daxdev") && val && *val)
			o->daxdev = val;
		else if ((!strcmp(opt, "source") || !strcmp(opt, "shadow")) &&
			 val && *val)
			o->source = val;
		else if (upstream_opt(o, opt, val))
			continue;
		else if (!strcmp(opt, "role") && val &&
			 (!strcmp(val, "auto") || !strcmp(val, "master") ||
			  !strcmp(val, "client")))
			o->role = val;
		else if (!strcmp(opt, "fallback") && val &&
			 !strcmp(val, "auto"))
			o->fallback = FALLBACK_AUTO;
		else if (!strcmp(opt, "fallback") && val &&
			 !strcmp(val, "yes"))
			o->fallback = FALLBACK_YES;
		else if (!strcmp(opt, "fallback") && val && !strcmp(val, "no"))
			o->fallback = FALLBACK_NO;
		else if (!strcmp(opt, "poll_ms") && val)
			fs->poll_ms = number_opt(opt, val, FUSED_POLL_MS_MAX,
						 " (0 turns polling off)");
		else if (!strcmp(opt, "readahead_kb") && val)
			fs->readahead_kb = number_opt(opt, val, FUSED_READAHEAD_KB_MAX,
						      " (0 keeps the kernel's)");
		else if (!strcmp(opt, "writer_wait") && val)
			fs->writer_wait_s = number_opt(
				opt, val, FUSED_WRITER_WAIT_MAX,
				" (seconds; 0 does not wait)");
		else if (!strcmp(opt, "commit_delay") && val)
			fs->commit_delay_ms = number_opt(
				opt, val, FUSED_COMMIT_DELAY_MS_MAX,
				" (ms; 0 logs a file at its close)");
		else if (!strcmp(opt, "splice") && val &&
			   (!strcmp(val, "yes") || !strcmp(val, "no")))
			fs->splice_allowed = val[0] == 'y';
		else if (!strcmp(opt, "logfile") && val)
			o->logfile = val;
		else if (!strcmp(opt, "fuse_dev") && val)
			snprintf(fs->fuse_dev, sizeof(fs->fuse_dev), "%s", val);
		else if (!strcmp(opt, "ready_fd") && val)
			fs->ready_fd = (int)number_opt(opt, val, INT_MAX, "");
		else
			die("unknown option '%s%s%s'", opt, val ? "=" : "",
			    val ? val : "");
	}
}

/*
 * The device: DEVICE, or upstream's daxdev=, or a source=/shadow= that is
 * not a directory (a directory there is where the monitoring socket goes).
 * Upstream's one-argument form (no DEVICE) stays in the foreground with
 * -d, as libfuse's -d does.
 */
static void pick_device(struct fused *fs, struct opts *o, const char *arg)
{
	const char *dev = arg;
	char path[PATH_MAX];
	struct stat st;

	if (!arg && o->debug)
		o->foreground = true;
	if (o->source) {
		if (!realpath(o->source, path))
			die("source %s: %s", o->source, strerror(errno));
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* root's socket goes there: nobody else may swap it */
			int fd = famfs_private_dir_open(path, "shadow directory");

			if (fd < 0)
				die("%s", famfs_errmsg());
			close(fd);
			snprintf(fs->shadow, sizeof(fs->shadow), "%s", path);
		}
		else if (o->daxdev || arg)
			die("source %s is no directory, and the device is given already",
			    o->source);
		else
			dev = o->source;
	}
	if (o->daxdev) {
		if (arg)
			die("daxdev=%s and the argument %s both name the device",
			    o->daxdev, arg);
		dev = o->daxdev;
	}
	if (!dev)
		die("no device: give DEVICE MOUNTPOINT, or -o daxdev=DEVICE MOUNTPOINT (famfs-fused reads the log from the device, not from a shadow tree)");
	if (!realpath(dev, fs->devpath))
		die("%s: %s", dev, strerror(errno));
}

/* Open the device and decide who we are on it. */
static void open_device(struct fused *fs, const struct opts *o)
{
	int rc = 0;

	if (fused_takeover_meta_kept()) {
		const char *err = fused_metamap_adopt(fs);

		if (err)
			die("%s: %s", fs->mountpoint, err);
	} else {
		rc = famfs_dev_open_fs(fs->devpath, 0, &fs->dev);
	}

	if (rc)
		die("%s: %s", fs->devpath,
		    rc == -ENOENT && access(fs->devpath, F_OK) == 0 ?
			    "not a famfs (no famfs superblock; see mkfs.famfs)" :
			    famfs_errmsg());
	fs->role = famfs_role(&fs->dev);
	if (!strcmp(o->role, "master") && fs->role != FAMFS_ROLE_MASTER)
		die("%s: role=master asked, but this host is a client of this famfs (its system UUID is not the superblock's)",
		    fs->devpath);
	if (!strcmp(o->role, "client"))
		fs->role = FAMFS_ROLE_CLIENT;
	fs->readonly = fs->role != FAMFS_ROLE_MASTER || o->ro;
	fs->data_ro = o->ro || (fs->readonly && !o->client_rw);
	/*
	 * Writes to the log are the kernel's in famfs mode: mapped read-only.
	 * A client that writes file data (fallback mode) needs the device
	 * writable; it still never writes the log (readonly).
	 */
	if (!fs->data_ro && fs->dev.kind != FAMFS_DEV_META) {
		famfs_dev_close(&fs->dev);
		rc = famfs_dev_open_fs(fs->devpath, FAMFS_OPEN_RW, &fs->dev);
		if (rc)
			die("%s: %s", fs->devpath, famfs_errmsg());
	}
	fused_devloss_arm(fs);
	fs->map_replies = fused_map_pinnable(fs);
	if (!fs->map_replies)
		fused_log(L_INFO, "%s: its mapping cannot be pinned by the kernel; reads are copied before they are sent",
			  fs->devpath);
	if (fused_load(fs))
		die("%s: cannot read the log: %s", fs->devpath, famfs_errmsg());
}

/*
 * The kernel data path needs the device on the kernel's famfs dax driver
 * (famfs_dax on 6.12, fsdev_dax on 7.3). Bind it before we map the
 * device: unbinding device_dax revokes its mappings. Returns false when
 * the kernel path is unavailable for this device.
 */
static bool prepare_dax(struct fused *fs, const struct opts *o)
{
	struct stat st;
	char rel[128];

	if (o->fallback == FALLBACK_YES || stat(fs->devpath, &st) < 0 ||
	    !S_ISCHR(st.st_mode))
		return true;
	if (!famfs_kernel_dax_driver()) {
		/* No famfs-dkms for this kernel: say so, never silently. */
		famfs_kernel_release(rel, sizeof(rel));
		if (o->fallback == FALLBACK_NO)
			die(FAMFS_NO_KERNEL_SUPPORT ", and fallback is disabled",
			    rel);
		fused_log(L_WARN, FAMFS_NO_KERNEL_SUPPORT, rel);
		return false;
	}
	if (access(FAMFS_FUSE_DEV, F_OK) < 0 ||
	    (fs->fuse_dev[0] && strcmp(fs->fuse_dev, FAMFS_FUSE_DEV)))
		return true;
	if (!famfs_kernel_dax_node_maps()) {
		/*
		 * fsdev_dax's node cannot be mapped: read the device on
		 * device_dax, then through the mount (metamap.c). No
		 * fallback either once it is on fsdev_dax.
		 */
		const char *err = fused_metamap_begin(fs);

		if (err)
			die("%s", err);
		fs->bind_members = true;
		return true;
	}
	if (famfs_dax_bind(fs->devpath) == 0) {
		fused_log(L_NOTICE, "%s: dax driver %s", fs->devpath,
			  famfs_kernel_dax_driver());
		fs->bind_members = true;
		return true;
	}
	if (o->fallback == FALLBACK_NO)
		die("%s: %s, and fallback is disabled", fs->devpath,
		    famfs_errmsg());
	fused_log(L_WARN, "%s: %s; serving it in fallback mode",
		  fs->devpath, famfs_errmsg());
	return false;
}

/* Which FUSE device: the famfs module's when it can serve this device. */
static void pick_fuse_dev(struct fused *fs, const struct opts *o,
			  bool dax_ready)
{
	/* A successor on 7.3 has the device only through the mount. */
	bool dax = fs->dev.kind == FAMFS_DEV_DAX || fs->meta_via_mount;
	bool module = access(FAMFS_FUSE_DEV, F_OK) == 0 && dax_ready;

	/*
	 * The kernel maps a file in whole 2 MiB pages, so it takes only
	 * extents in such units: a famfs of smaller units (upstream's mkfs
	 * can make 4 KiB ones) is served in fallback mode.
	 */
	if (dax && fs->dev.sb && fs->dev.sb->alloc_unit % FAMFS_ALLOC_UNIT) {
		if (o->fallback == FALLBACK_NO)
			die("%s: allocation unit of %llu bytes; famfs mode needs whole 2 MiB units, and fallback is disabled",
			    fs->devpath,
			    (unsigned long long)fs->dev.sb->alloc_unit);
		fused_log(L_WARN, "%s: allocation unit of %llu bytes; famfs mode needs whole 2 MiB units: serving it in fallback mode",
			  fs->devpath,
			  (unsigned long long)fs->dev.sb->alloc_unit);
		dax = false;
	}
	fs->allow_famfs = dax && o->fallback != FALLBACK_YES;
	fs->require_famfs = o->fallback == FALLBACK_NO;
	if (fs->fuse_dev[0])
		return;
	if (o->fallback == FALLBACK_NO && !module)
		die("famfs kernel module not loaded and fallback disabled (%s is missing; load famfs_fuse or use fallback=auto)",
		    FAMFS_FUSE_DEV);
	if (o->fallback == FALLBACK_NO && !dax)
		die("%s is not a devdax device, so only fallback mode can serve it, and fallback is disabled",
		    fs->devpath);
	snprintf(fs->fuse_dev, sizeof(fs->fuse_dev), "%s",
		 module && fs->allow_famfs ? FAMFS_FUSE_DEV : FUSE_DEV);
}

/* mount(2) ourselves, as for any FUSE device that fusermount3 knows not. */
static void do_mount(struct fused *fs, const struct opts *o)
{
	const char *base = strrchr(fs->fuse_dev, '/');
	const char *type;
	char data[256];
	struct stat st;

	base = base ? base + 1 : fs->fuse_dev;
	type = !strcmp(base, "fuse") ? "fuse.famfs" : "famfs_fuse";
	fs->fuse_fd = open(fs->fuse_dev, O_RDWR | O_CLOEXEC);
	if (fs->fuse_fd < 0)
		die("cannot open %s: %s", fs->fuse_dev, strerror(errno));
	if (fstat(fs->fuse_fd, &st) < 0 || !S_ISCHR(st.st_mode))
		die("%s is not a FUSE character device", fs->fuse_dev);
	fs->module_dev = famfs_ext_module_fd(fs->fuse_fd);
	snprintf(data, sizeof(data),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,default_permissions,allow_other",
		 fs->fuse_fd);
	if (mount(fs->devpath, fs->mountpoint, type,
		  o->mflags | (fs->data_ro ? MS_RDONLY : 0) |
			  (o->suid ? 0 : MS_NOSUID) | (o->dev ? 0 : MS_NODEV),
		  data) < 0)
		die("cannot mount %s on %s (type %s): %s", fs->devpath,
		    fs->mountpoint, type, strerror(errno));
}

/* Never two writers on one device: their log locks would not meet. */
static void check_not_mounted(struct fused *fs)
{
	char where[PATH_MAX];
	bool rw;

	/*
	 * A famfs whose daemon died (a crash, or a restart by systemd) stays
	 * mounted and answers ENOTCONN: replace it. Processes that still
	 * have its files open or mapped keep them.
	 */
	if (famfs_mount_dead(fs->mountpoint)) {
		fused_log(L_NOTICE, "%s: replacing a famfs mount whose daemon is gone",
			  fs->mountpoint);
		if (umount2(fs->mountpoint, MNT_DETACH) < 0)
			die("cannot detach the dead famfs mount at %s: %s",
			    fs->mountpoint, strerror(errno));
	}
	if (famfs_mount_at(fs->mountpoint))
		die("%s is already a famfs mount point", fs->mountpoint);
	if (!fs->readonly && famfs_mount_of(fs->devpath, where, sizeof(where),
					    &rw) && rw)
		die("%s is already mounted read-write at %s (one master mount per device and host)",
		    fs->devpath, where);
}

static void daemonize(struct fused *fs)
{
	int p[2];
	pid_t pid;
	char line[1100];
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		/* Wait for the child's verdict; its stderr told the reason. */
		close(p[1]);
		n = read(p[0], line, sizeof(line) - 1);
		exit(n >= 2 && !strncmp(line, "OK", 2) ? 0 : 1);
	}
	close(p[0]);
	if (fs->ready_fd >= 0)
		close(fs->ready_fd);
	fs->ready_fd = p[1];
	setsid();
	if (chdir("/") < 0) {
		/* cannot happen; nothing relies on the cwd */
	}
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	detached = true;
}

/*
 * The kernel caps FUSE readahead at 128 KiB (and at what INIT agreed on,
 * so this must follow INIT); fallback reads cost a request each, so
 * larger reads are most of the throughput. The bdi knob is public sysfs.
 */
static void tune_readahead(struct fused *fs)
{
	char path[128];
	FILE *f;

	if (!fs->readahead_kb || !fs->mount_devno[0])
		return;
	snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb",
		 fs->mount_devno);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%u\n", fs->readahead_kb) < 0)
		fused_log(L_INFO, "cannot set %s: %s", path, strerror(errno));
	if (f)
		fclose(f);
}

/* Our systemd unit (famfs@MOUNT.service) from the cgroup path, for status. */
static void find_unit(struct fused *fs)
{
	char line[1024];
	FILE *f = fopen("/proc/self/cgroup", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *base = strrchr(line, '/');
		size_t n;

		if (strncmp(line, "0::", 3) || !base)
			continue;
		base++;
		n = strcspn(base, "\n");
		base[n] = '\0';
		if (n > 8 && !strcmp(base + n - 8, ".service"))
			snprintf(fs->unit, sizeof(fs->unit), "%s", base);
	}
	if (f)
		fclose(f);
}

/*
 * A stop signal came: may the loop end? Not while files are being
 * written through the mount: they live in this daemon alone (create.c),
 * and a successor or an unmount would lose them. Requests are served
 * meanwhile, new files included (a tar between two files has none open),
 * for up to writer_wait seconds; a second signal ends the wait.
 */
static bool may_leave(struct fused *fs, uint64_t *until)
{
	uint64_t now = fused_now_ms();

	fused_pending_commit_closed(fs, false); /* closed: no need to wait */
	if (!fs->npending)
		return true;
	if (!*until) {
		*until = now + fs->writer_wait_s * 1000ULL;
		if (fs->writer_wait_s)
			fused_log(L_NOTICE, "stopping: waiting up to %u s for %llu file(s) being written through %s to be closed",
				  fs->writer_wait_s,
				  (unsigned long long)fs->npending,
				  fs->mountpoint);
	}
	if (now < *until && nsignals < 2)
		return false;
	fused_log(L_WARN, "stopping with %llu file(s) still being written through %s: they are not logged, and their writers' next write or close fails",
		  (unsigned long long)fs->npending, fs->mountpoint);
	return true;
}

/* The sooner of two poll timeouts (-1: none). */
static int sooner(int a, int b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/*
 * The poll timeout: the monitor's, shortened to the end of a wait and to
 * the end of the log lock's linger.
 */
static int poll_timeout(struct fused *fs, int timeout, uint64_t until)
{
	uint64_t now = fused_now_ms();

	timeout = sooner(timeout, fused_pending_timeout_ms(fs));
	if (!until)
		return timeout;
	if (until <= now)
		return 0;
	return sooner(timeout, (int)(until - now));
}

static int serve(struct fused *fs)
{
	struct fuse_buf buf = { 0 };
	struct pollfd pfd[7];
	int tfd = -1, res = 0, n = 0;
	uint64_t until = 0; /* stopping: the end of the wait for writers */
	bool tuned = false;

	if (fs->poll_ms) {
		struct itimerspec it = {
			.it_interval = { fs->poll_ms / 1000,
					 (long)(fs->poll_ms % 1000) * 1000000 },
		};

		it.it_value = it.it_interval;
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd >= 0)
			timerfd_settime(tfd, 0, &it, NULL);
	}
	/*
	 * fuse, [timer], [monitor], [mapping thread done], [mount table],
	 * [a pending file's copy done], a signal: absent ones are -1, which
	 * poll skips
	 */
	pfd[n++] = (struct pollfd){ .fd = fs->fuse_fd, .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = fs->monitor_fd, .events = POLLIN };
	n += 3;
	pfd[n++] = (struct pollfd){ .fd = signal_pipe[0], .events = POLLIN };
	while (!fuse_session_exited(fs->se)) {
		if (fs->initialized && !tuned) {
			/* the mount is in the table once INIT is answered */
			fused_mount_devno(fs);
			tune_readahead(fs);
			tuned = true;
		}
		if (stop && may_leave(fs, &until)) {
			fuse_session_exit(fs->se);
			break;
		}
		pfd[3] = (struct pollfd){ .fd = fused_metamap_wake_fd(),
					  .events = POLLIN };
		pfd[4] = (struct pollfd){ .fd = fused_mount_watch_fd(),
					  .events = POLLPRI };
		pfd[5] = (struct pollfd){ .fd = fused_stage_wake_fd(),
					  .events = POLLIN };
		int timeout = fused_monitor_timeout_ms(fs);
		uint64_t due = timeout < 0 ? UINT64_MAX :
					     fused_now_ms() + (uint64_t)timeout;

		if (poll(pfd, (nfds_t)n, poll_timeout(fs, timeout, until)) < 0) {
			if (errno == EINTR)
				continue;
			res = -errno;
			break;
		}
		fs->pass++;
		/*
		 * The monitor's work: a connection, or one of its timeouts
		 * due. Not on every FUSE request: that is a syscall each.
		 */
		if (pfd[2].revents || fused_now_ms() >= due)
			fused_monitor_run(fs);
		if (pfd[3].revents)
			fused_metamap_finish(fs);
		if (pfd[4].revents)
			fused_mount_check(fs);
		if (fused_mount_left())
			fused_metamap_unmounted(fs);
		if (pfd[5].revents)
			fused_stage_reap(fs);
		if (pfd[6].revents) {
			char drain[16];

			while (read(signal_pipe[0], drain, sizeof(drain)) > 0)
				;
		}
		fused_pending_idle(fs);
		if (tfd >= 0 && (pfd[1].revents & POLLIN)) {
			uint64_t ticks;

			if (read(tfd, &ticks, sizeof(ticks)) > 0)
				fused_refresh(fs);
		}
		if (!pfd[0].revents)
			continue;
		res = fuse_session_receive_buf(fs->se, &buf);
		if (res == -EINTR || res == -EAGAIN) {
			res = 0;
			continue;
		}
		if (res <= 0)
			break; /* 0: unmounted, the session is over */
		fuse_session_process_buf(fs->se, &buf);
		fused_pending_idle(fs);
		res = 0;
	}
	free(buf.mem);
	if (tfd >= 0)
		close(tfd);
	return res;
}

/* The command line into @fs and @o; -1 to go on, else the exit code. */
static int parse_args(struct fused *fs, struct opts *o, int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "fuse-dev", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "fdso:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 's':
			break; /* single-threaded: one thread serves anyway */
		case 'd':
			o->debug = true;
			break;
		case 'o':
			parse_o(fs, o, optarg);
			break;
		case 'F':
			snprintf(fs->fuse_dev, sizeof(fs->fuse_dev), "%s",
				 optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("famfs-fused %s\n", FAMFS_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2 && argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/*
 * Everything before the session: the device opened, the mount point
 * checked (or a handed-over connection verified), the FUSE device
 * chosen, and the daemon detached. Returns whether it takes over.
 */
static bool prepare(struct fused *fs, struct opts *o, const char *devarg,
		    const char *mnt)
{
	bool dax_ready, adopt;

	fs->debug = o->debug;
	fused_log_init(o->debug, o->logfile);
	pick_device(fs, o, devarg);
	fs->start_time = time(NULL);
	/* A connection handed over: its mount point must not be touched. */
	adopt = fused_takeover_begin(fs, mnt);
	if (!adopt && !realpath(mnt, fs->mountpoint)) {
		/* A dead mount there (we restart): check_not_mounted() sees to it. */
		if (errno != ENOTCONN || mnt[0] != '/')
			die("mount point %s: %s", mnt, strerror(errno));
		snprintf(fs->mountpoint, sizeof(fs->mountpoint), "%s", mnt);
	}
	if (!privileged())
		die("famfs mounts are privileged: run famfs-fused as root (or with CAP_SYS_ADMIN)");

	find_unit(fs);
	dax_ready = prepare_dax(fs, o);
	open_device(fs, o);
	adopt = adopt && fused_takeover_verify(fs);
	if (fs->dev.kind == FAMFS_DEV_META && !adopt)
		die("%s: not taking over its mount, whose files we have mapped (see above); unmount it and mount again",
		    fs->mountpoint);
	if (fs->meta_via_mount && !adopt) {
		const char *err = fused_metamap_handoff(fs);

		if (err)
			die("%s: %s", fs->devpath, err);
	}
	pick_fuse_dev(fs, o, dax_ready);
	if (!adopt)
		check_not_mounted(fs);
	if (!o->foreground)
		daemonize(fs);
	return adopt;
}

/* The session made and attached: a new mount, or the one taken over. */
static void attach(struct fused *fs, struct opts *o, bool adopt,
		   char *argv0)
{
	char *fargv[] = { argv0, "-d", NULL };
	struct fuse_args fargs = FUSE_ARGS_INIT(o->debug ? 2 : 1, fargv);

	if (pipe2(signal_pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		die("cannot make a pipe: %s", strerror(errno));
	fs->se = fuse_session_new(&fargs, &fused_ops, sizeof(fused_ops), fs);
	fuse_opt_free_args(&fargs); /* the session keeps none of it */
	if (!fs->se)
		die("cannot create the FUSE session");
	if (!adopt) {
		fs->mount_time = time(NULL);
		do_mount(fs, o);
	}
	if (famfs_ext_attach(fs, fs->se, fs->fuse_fd) < 0) {
		if (!adopt)
			umount2(fs->mountpoint, MNT_DETACH);
		die("cannot attach to %s", fs->fuse_dev);
	}
	set_signals();
	if (adopt && fused_takeover_attach(fs) < 0)
		die("cannot take over the FUSE connection of %s",
		    fs->mountpoint);
}


/* After serving: hand the mount over, or take it down; the exit code. */
static int finish(struct fused *fs, int res)
{
	/* a successor would not know of the files still waiting */
	fused_pending_commit_closed(fs, true);
	if (fused_takeover_leave(fs, stop, stop == 2)) {
		/* a successor may create at once: the log lock is its */
		fused_pending_stop(fs);
		fuse_session_destroy(fs->se); /* the fd store keeps it open */
		return stop == 2 ? FUSED_EXIT_HANDOVER : 0;
	}

	/*
	 * A signal ends the loop with our mount still there: take it down.
	 * After umount(8), or a lazy one while files were still open, the
	 * path may hold someone else's mount: only ours is unmounted.
	 */
	if ((stop || !fs->initialized) && fused_own_mount_on_top(fs) &&
	    umount2(fs->mountpoint, 0) < 0 && errno == EBUSY)
		umount2(fs->mountpoint, MNT_DETACH);
	if (fs->ready_fd >= 0)
		fused_ready(fs, "the mount ended before the kernel's INIT");
	fuse_session_destroy(fs->se); /* closes the FUSE fd */
	fused_metamap_end();
	fused_pending_stop(fs); /* after the FUSE fd, which holds the device */
	fused_log(L_NOTICE, "%s unmounted from %s; exiting", fs->devpath,
		  fs->mountpoint);
	famfs_ns_free(&fs->ns);
	famfs_alloc_release(&fs->alloc);
	famfs_dev_close(&fs->dev);
	return res < 0 ? 1 : 0;
}

/*
 * Started by hand, the daemon would hold what its caller left open for as
 * long as the mount lives: a file of an earlier mount of this device held
 * that way keeps that mount, and the file still being written in it, from
 * ever ending. Ours to keep: the fds systemd hands a successor
 * (LISTEN_FDS: the connection and its state, takeover.c) and ready_fd=.
 */
static void close_inherited_fds(const struct fused *fs)
{
	int listened = sd_listen_fds(0);
	unsigned int first = SD_LISTEN_FDS_START + (listened > 0 ? listened : 0);
	unsigned int keep = fs->ready_fd >= 0 ? (unsigned int)fs->ready_fd : 0;

	if (keep >= first) {
		if (keep > first)
			close_range(first, keep - 1, 0);
		first = keep + 1;
	}
	close_range(first, ~0U, 0);
}

/*
 * On 7.3 each file being written holds a descriptor (the memfd of its
 * bytes), and a copy at its close opens one more: the soft limit a
 * service starts with (1024) would let one user's open files make other
 * users' files fail to copy. Nothing here uses select(), so take what
 * the hard limit allows.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			fused_log(L_WARN, "cannot raise the open files limit to %llu: %s",
				  (unsigned long long)rl.rlim_max,
				  strerror(errno));
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .role = "auto" };
	struct fused *fs = &the_fs;
	bool adopt;
	int res;

	fs->ready_fd = -1;
	fs->fuse_fd = -1;
	fs->poll_ms = DEFAULT_POLL_MS;
	fs->readahead_kb = DEFAULT_READAHEAD_KB;
	fs->writer_wait_s = DEFAULT_WRITER_WAIT_S;
	fs->splice_allowed = true;
	res = parse_args(fs, &o, argc, argv);
	if (res >= 0)
		return res;
	close_inherited_fds(fs);
	raise_fd_limit();
	/* DEVICE is optional (-o source=); the mount point is last */
	adopt = prepare(fs, &o, argc - optind == 2 ? argv[optind] : NULL,
			argv[argc - 1]);
	attach(fs, &o, adopt, argv[0]);
	fused_monitor_start(fs);
	res = serve(fs);
	fused_monitor_stop(fs);
	return finish(fs, res);
}
