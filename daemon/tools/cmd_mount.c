// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs mount: upstream's way to mount, kept for its scripts. Mounting is
 * mount.famfs's job (it also serves mount(8) and fstab), so this only turns
 * upstream's options into mount options and runs it.
 */
#include <errno.h>
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
 * Upstream's options that have no meaning here, and what famfs mount says
 * of each: a note, or why it is refused. -t and -c take a value, which is
 * not passed on.
 */
static const struct {
	char key;
	bool refused;
	const char *why;
} upstream_only[] = {
	{ 't', false, "the famfs daemon keeps its metadata current by itself (poll_ms= sets how often it polls the log)" },
	{ 'c', false, "the famfs daemon keeps its metadata current by itself" },
	{ 'u', false, "famfs mounts always have allow_other and default_permissions, so the owners and modes in the log decide who may use each file" },
	{ 'M', false, "the daemon moves a devdax device to famfs_dax (famfs mode) itself when the famfs_fuse module is loaded" },
	{ 'F', true, "-F asks for upstream's standalone famfs v1 kernel module; famfs-fuse does not use it (drop -F)" },
	{ 'R', true, "-R (remount) is not supported: umount and mount again" },
	{ 'L', true, "-L is refused: famfs mount does not load kernel modules (the famfs-dkms package provides famfs_fuse.ko)" },
	{ 'p', true, "-p (no default_permissions) is refused: famfs-fuse always has the kernel enforce the owners and modes in the log" },
};

static int mount_upstream_only(const struct tool_opt *o, const char *arg)
{
	uint32_t secs;
	size_t i = 0;

	while (upstream_only[i].key != o->key)
		i++;
	if (upstream_only[i].refused)
		fprintf(stderr, "famfs mount: %s\n", upstream_only[i].why);
	else if (o->key == 't' && cli_parse_u32("-t", arg, &secs))
		return -1;
	else if (arg)
		fprintf(stderr, "famfs mount: note: -%c %s not passed on: %s\n",
			o->key, arg, upstream_only[i].why);
	else
		fprintf(stderr, "famfs mount: note: -%c has no effect: %s\n",
			o->key, upstream_only[i].why);
	return upstream_only[i].refused ? -1 : 0;
}

/* -o OPTIONS, -S PATH (shadow=PATH) and -d (debug): mount.famfs's -o */
static int mount_pass(const struct tool_opt *o, const char *arg)
{
	return add_opt(o->dest, o->key == 'S' ? "shadow=" : "",
		       o->key == 'd' ? "debug" : arg);
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
	struct mount_args a = { 0 };
	const struct tool_opt opts[] = {
		/*
		 * Upstream's --fuse picks FUSE over its v1 kernel module;
		 * FUSE is all there is here, and the fallback policy stays
		 * with fallback= and famfs.conf.
		 */
		OPT_CALL('f', "fuse", NULL, tool_opt_ignored),
		OPT_CALL('F', "nofuse", NULL, mount_upstream_only),
		OPT_VALUE('t', "timeout", NULL, mount_upstream_only),
		OPT_VALUE('c', "cache", NULL, mount_upstream_only),
		OPT_CALL('d', "debug", &a.opts, mount_pass),
		OPT_FLAG('v', "verbose", &a.verbose),
		OPT_CALL('u', "nouseraccess", NULL, mount_upstream_only),
		OPT_CALL('p', "nodefaultperm", NULL, mount_upstream_only),
		OPT_VALUE('S', "shadow", &a.opts, mount_pass),
		OPT_CALL('r', "read", &a.how, cli_opt_how_noted),
		OPT_CALL('m', "mmap", &a.how, cli_opt_how_noted),
		OPT_CALL('R', "remount", NULL, mount_upstream_only),
		OPT_FLAG('D', "dummy", &a.dummy),
		/* upstream's meaning is what the daemon always does */
		OPT_CALL('M', "set-daxmode", NULL, mount_upstream_only),
		OPT_CALL('L', "load-module", NULL, mount_upstream_only),
		OPT_VALUE('o', "options", &a.opts, mount_pass),
		OPT_HELP_ALL,
		OPT_END,
	};
	int rc;

	rc = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (rc >= 0)
		goto out;
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
