// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs mount: upstream's way to mount, kept for its scripts. Mounting is
 * mount.famfs's job (it also serves mount(8) and fstab), so this only turns
 * upstream's options into mount options and runs it.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs mount [-f] [-d] [-v] [-D] [-S PATH] [-o OPTIONS] DEVICE MOUNTPOINT\n"
		"\n"
		"Mount the famfs on DEVICE at MOUNTPOINT by running mount.famfs, which\n"
		"starts the famfs daemon and returns once the mount is ready (or has\n"
		"failed, saying why). 'mount -t fuse.famfs DEVICE MOUNTPOINT' and an fstab\n"
		"line do the same; 'umount MOUNTPOINT' unmounts. The daemon uses the famfs\n"
		"kernel module when it is loaded and serves the data itself otherwise\n"
		"(fallback mode); 'famfs status' tells which.\n"
		"\n"
		"Options (upstream's, turned into mount.famfs options):\n"
		"  -f, --fuse           upstream's FUSE mode, the only mode here: changes\n"
		"                       nothing (whether to fall back is fallback= in -o\n"
		"                       or famfs.conf)\n"
		"  -d, --debug          run the daemon with debugging output (debug)\n"
		"  -v, --verbose        say what is run; mount.famfs says what it does (-v)\n"
		"  -S, --shadow=PATH    passed as shadow=PATH (mount.famfs notes that there\n"
		"                       is no shadow tree)\n"
		"  -D, --dummy          print the mount.famfs command and do not run it\n"
		"  -o, --options=OPTS   more mount options, passed on as they are (ours:\n"
		"                       fallback=, role=, poll_ms=...; see mount.famfs(8))\n"
		"  -h, -?, --help       show this help\n"
		"\n"
		"Accepted with a note, as they mean nothing to famfs-fused: -t/--timeout\n"
		"and -c/--cache (upstream's metadata caching; our daemon keeps metadata\n"
		"current by itself, -o poll_ms=N sets how often it polls the log),\n"
		"-r/--read and -m/--mmap (how the log is read; the daemon maps it; the\n"
		"two are mutually exclusive, as upstream), -u/--nouseraccess (the mount\n"
		"always has allow_other and default_permissions: the owners and modes in\n"
		"the log decide access), and -M/--set-daxmode (the daemon moves a devdax\n"
		"device to famfs_dax itself when the famfs_fuse module is loaded).\n"
		"\n"
		"Refused: -F/--nofuse (upstream's standalone v1 kernel module),\n"
		"-p/--nodefaultperm (the kernel always enforces the modes in the log),\n"
		"-R/--remount (umount and mount again) and -L/--load-module (famfs\n"
		"mount does not load kernel modules; the famfs-dkms package provides\n"
		"the module).\n"
		"\n"
		"mount.famfs is looked for in $FAMFS_MOUNT_HELPER, next to this famfs\n"
		"(build tree: daemon/mount/), then in /sbin, /usr/sbin, /usr/local/sbin.\n"
		"\n"
		"Exit status: that of mount.famfs (0 when mounted, 32 when the mount\n"
		"failed, as mount(8)); 1 when it cannot be run; 2 for a usage error.\n");
}

static bool executable(const char *p)
{
	return access(p, X_OK) == 0;
}

static int find_helper(char *out, size_t len)
{
	static const char *const sys[] = { "/sbin/mount.famfs",
					   "/usr/sbin/mount.famfs",
					   "/usr/local/sbin/mount.famfs" };
	const char *env = getenv("FAMFS_MOUNT_HELPER");
	char self[PATH_MAX], *dir;
	ssize_t n;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return executable(out) ? 0 : -1;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char tidy[PATH_MAX];

		self[n] = '\0';
		dir = dirname(self);
		snprintf(out, len, "%s/../mount/mount.famfs", dir);
		if (executable(out)) {
			if (realpath(out, tidy))
				snprintf(out, len, "%s", tidy);
			return 0;
		}
		snprintf(out, len, "%s/mount.famfs", dir);
		if (executable(out))
			return 0;
	}
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		snprintf(out, len, "%s", sys[i]);
		if (executable(out))
			return 0;
	}
	return -1;
}

/* Add @pre@o to the list *@opts, grown to fit: no option is ever cut. */
static int add_opt(char **opts, const char *pre, const char *o)
{
	size_t n = *opts ? strlen(*opts) : 0;
	size_t add = strlen(pre) + strlen(o) + 2;
	char *p = realloc(*opts, n + add);

	if (!p) {
		fprintf(stderr, "famfs mount: out of memory\n");
		return -1;
	}
	snprintf(p + n, add, "%s%s%s", n ? "," : "", pre, o);
	*opts = p;
	return 0;
}

/* What famfs mount passes on to mount.famfs. */
struct mount_args {
	char *opts; /* -o of mount.famfs, or NULL */
	bool verbose, dummy;
	int how; /* 'm' or 'r', which change nothing */
};

/*
 * One of upstream's options: most have no meaning here and say so (a
 * note), some are refused. 0 to go on, else the exit code (help: -1).
 */
static int mount_opt(struct mount_args *a, int c, const char *arg)
{
	uint32_t secs;

	switch (c) {
	case 'f':
		/*
		 * Upstream's --fuse picks FUSE over its v1 kernel module;
		 * FUSE is all there is here, and the fallback policy stays
		 * with fallback= and famfs.conf.
		 */
		return 0;
	case 'F':
		fprintf(stderr, "famfs mount: -F asks for upstream's standalone famfs v1 kernel module; famfs-fuse does not use it (drop -F)\n");
		return CLI_USAGE;
	case 't':
		if (cli_parse_u32("-t", arg, &secs))
			return CLI_USAGE;
		/*
		 * Upstream's FUSE entry/attribute timeout. Our daemon
		 * invalidates what changes itself and mount.famfs has no such
		 * option, so say that rather than pass it.
		 */
		fprintf(stderr, "famfs mount: note: -t %u not passed on: the famfs daemon keeps its metadata current by itself (poll_ms= sets how often it polls the log)\n",
			secs);
		return 0;
	case 'd':
		return add_opt(&a->opts, "", "debug") ? CLI_FAIL : 0;
	case 'v':
		a->verbose = true;
		return 0;
	case 'c':
		fprintf(stderr, "famfs mount: note: -c %s not passed on: the famfs daemon keeps its metadata current by itself\n",
			arg);
		return 0;
	case 'r':
	case 'm':
		if (a->how && a->how != c) {
			fprintf(stderr, "famfs mount: -m/--mmap and -r/--read are mutually exclusive\n");
			return CLI_USAGE;
		}
		a->how = c;
		fprintf(stderr, "famfs mount: note: -%c has no effect: the daemon always maps the log\n",
			c);
		return 0;
	case 'u':
		fprintf(stderr, "famfs mount: note: -u has no effect: famfs mounts always have allow_other and default_permissions, so the owners and modes in the log decide who may use each file\n");
		return 0;
	case 'D':
		a->dummy = true;
		return 0;
	case 'R':
		fprintf(stderr, "famfs mount: -R (remount) is not supported: umount and mount again\n");
		return CLI_USAGE;
	case 'M':
		/* upstream's meaning is what the daemon always does */
		fprintf(stderr, "famfs mount: note: -M has no effect: the daemon moves a devdax device to famfs_dax (famfs mode) itself when the famfs_fuse module is loaded\n");
		return 0;
	case 'L':
		fprintf(stderr, "famfs mount: -L is refused: famfs mount does not load kernel modules (the famfs-dkms package provides famfs_fuse.ko)\n");
		return CLI_USAGE;
	case 'p':
		fprintf(stderr, "famfs mount: -p (no default_permissions) is refused: famfs-fuse always has the kernel enforce the owners and modes in the log\n");
		return CLI_USAGE;
	case 'S':
		return add_opt(&a->opts, "shadow=", arg) ? CLI_FAIL : 0;
	case 'o':
		return add_opt(&a->opts, "", arg) ? CLI_FAIL : 0;
	default:
		return cli_help_asked(c) ? -1 : cli_usage_error(CLI_USAGE);
	}
}

/* Run mount.famfs DEVICE MOUNTPOINT with what @a asks for. */
static int run_helper(const struct mount_args *a, char *dev, char *mpt)
{
	FILE *say = a->dummy ? stdout : stderr;
	char helper[PATH_MAX];
	char *args[8];
	int n = 0;

	if (find_helper(helper, sizeof(helper))) {
		fprintf(stderr, "famfs mount: mount.famfs not found (%s); build it with 'ninja -C build' or install the famfs package\n",
			getenv("FAMFS_MOUNT_HELPER") ?
				"$FAMFS_MOUNT_HELPER is not executable" :
				"looked next to famfs and in /sbin, /usr/sbin, /usr/local/sbin");
		return CLI_FAIL;
	}
	args[n++] = helper;
	args[n++] = dev;
	args[n++] = mpt;
	if (a->verbose)
		args[n++] = "-v";
	if (a->opts) {
		args[n++] = "-o";
		args[n++] = a->opts;
	}
	args[n] = NULL;
	if (a->verbose || a->dummy) {
		fprintf(say, "%s", a->dummy ? "" : "famfs mount: running ");
		for (int i = 0; i < n; i++)
			fprintf(say, "%s%s", i ? " " : "", args[i]);
		fputc('\n', say);
		if (a->dummy)
			return CLI_OK;
	}
	fflush(NULL);
	execv(helper, args);
	fprintf(stderr, "famfs mount: cannot run %s: %s\n", helper,
		strerror(errno));
	return CLI_FAIL;
}

int cmd_mount(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "fuse", no_argument, NULL, 'f' },
		{ "nofuse", no_argument, NULL, 'F' },
		{ "timeout", required_argument, NULL, 't' },
		{ "cache", required_argument, NULL, 'c' },
		{ "debug", no_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "nouseraccess", no_argument, NULL, 'u' },
		{ "nodefaultperm", no_argument, NULL, 'p' },
		{ "shadow", required_argument, NULL, 'S' },
		{ "read", no_argument, NULL, 'r' },
		{ "mmap", no_argument, NULL, 'm' },
		{ "remount", no_argument, NULL, 'R' },
		{ "dummy", no_argument, NULL, 'D' },
		{ "set-daxmode", no_argument, NULL, 'M' },
		{ "load-module", no_argument, NULL, 'L' },
		{ "options", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct mount_args a = { 0 };
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "fFt:c:dvupS:rmRDMLo:h", lopts, NULL)) !=
	       -1) {
		rc = mount_opt(&a, c, optarg);
		if (rc < 0) {
			usage(stdout);
			rc = CLI_OK;
			goto out;
		}
		if (rc)
			goto out;
	}
	if (optind != argc - 2) {
		fprintf(stderr, "famfs mount: give a DEVICE and a MOUNTPOINT\n");
		rc = cli_usage_error(CLI_USAGE);
		goto out;
	}
	rc = run_helper(&a, argv[optind], argv[optind + 1]);
out:
	free(a.opts);
	return rc;
}
