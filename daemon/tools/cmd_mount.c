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
	char *opts = NULL, helper[PATH_MAX];
	bool verbose = false, dummy = false;
	char *args[8];
	int c, n = 0, how = 0;
	uint32_t secs;

	optind = 0;
	while ((c = getopt_long(argc, argv, "fFt:c:dvupS:rmRDMLo:h", lopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'f':
			/*
			 * Upstream's --fuse picks FUSE over its v1 kernel
			 * module; FUSE is all there is here, and the fallback
			 * policy stays with fallback= and famfs.conf.
			 */
			break;
		case 'F':
			fprintf(stderr, "famfs mount: -F asks for upstream's standalone famfs v1 kernel module; famfs-fuse does not use it (drop -F)\n");
			return CLI_USAGE;
		case 't':
			if (cli_parse_u32("-t", optarg, &secs))
				return CLI_USAGE;
			/*
			 * Upstream's FUSE entry/attribute timeout. Our daemon
			 * invalidates what changes itself and mount.famfs has
			 * no such option, so say that rather than pass it.
			 */
			fprintf(stderr, "famfs mount: note: -t %u not passed on: the famfs daemon keeps its metadata current by itself (poll_ms= sets how often it polls the log)\n",
				secs);
			break;
		case 'd':
			if (add_opt(&opts, "", "debug"))
				return CLI_FAIL;
			break;
		case 'v':
			verbose = true;
			break;
		case 'c':
			fprintf(stderr, "famfs mount: note: -c %s not passed on: the famfs daemon keeps its metadata current by itself\n",
				optarg);
			break;
		case 'r':
		case 'm':
			if (how && how != c) {
				fprintf(stderr, "famfs mount: -m/--mmap and -r/--read are mutually exclusive\n");
				return CLI_USAGE;
			}
			how = c;
			fprintf(stderr, "famfs mount: note: -%c has no effect: the daemon always maps the log\n",
				c);
			break;
		case 'u':
			fprintf(stderr, "famfs mount: note: -u has no effect: famfs mounts always have allow_other and default_permissions, so the owners and modes in the log decide who may use each file\n");
			break;
		case 'D':
			dummy = true;
			break;
		case 'R':
			fprintf(stderr, "famfs mount: -R (remount) is not supported: umount and mount again\n");
			return CLI_USAGE;
		case 'M':
			/* upstream's meaning is what the daemon always does */
			fprintf(stderr, "famfs mount: note: -M has no effect: the daemon moves a devdax device to famfs_dax (famfs mode) itself when the famfs_fuse module is loaded\n");
			break;
		case 'L':
			fprintf(stderr, "famfs mount: -L is refused: famfs mount does not load kernel modules (the famfs-dkms package provides famfs_fuse.ko)\n");
			return CLI_USAGE;
		case 'p':
			fprintf(stderr, "famfs mount: -p (no default_permissions) is refused: famfs-fuse always has the kernel enforce the owners and modes in the log\n");
			return CLI_USAGE;
		case 'S':
			if (add_opt(&opts, "shadow=", optarg))
				return CLI_FAIL;
			break;
		case 'o':
			if (add_opt(&opts, "", optarg))
				return CLI_FAIL;
			break;
		case 'h':
		default:
			return cli_usage(usage, c, CLI_OK, CLI_USAGE);
		}
	}
	if (optind != argc - 2) {
		fprintf(stderr, "famfs mount: give a DEVICE and a MOUNTPOINT\n");
		return cli_usage_error(CLI_USAGE);
	}
	if (find_helper(helper, sizeof(helper))) {
		fprintf(stderr, "famfs mount: mount.famfs not found (%s); build it with 'ninja -C build' or install the famfs package\n",
			getenv("FAMFS_MOUNT_HELPER") ?
				"$FAMFS_MOUNT_HELPER is not executable" :
				"looked next to famfs and in /sbin, /usr/sbin, /usr/local/sbin");
		return CLI_FAIL;
	}
	args[n++] = helper;
	args[n++] = argv[optind];
	args[n++] = argv[optind + 1];
	if (verbose)
		args[n++] = "-v";
	if (opts) {
		args[n++] = "-o";
		args[n++] = opts;
	}
	args[n] = NULL;
	if (verbose || dummy) {
		fprintf(dummy ? stdout : stderr, "%s", dummy ? "" : "famfs mount: running ");
		for (int i = 0; i < n; i++)
			fprintf(dummy ? stdout : stderr, "%s%s", i ? " " : "",
				args[i]);
		fputc('\n', dummy ? stdout : stderr);
		if (dummy)
			return CLI_OK;
	}
	fflush(NULL);
	execv(helper, args);
	fprintf(stderr, "famfs mount: cannot run %s: %s\n", helper,
		strerror(errno));
	return CLI_FAIL;
}
