// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Starting a mount's daemon as the systemd service famfs@MOUNT.service.
 *
 * Under systemd the daemon must not stay a child of mount(8): it would
 * live in the .mount unit's control group, without journald metadata, a
 * restart policy or a unit to stop. So mount.famfs hands the request to
 * the template unit: the instance name is the escaped mount point (as
 * systemd-escape --path makes it), the device and options go in
 * /run/famfs/INSTANCE.env, and "systemctl start" returns once the daemon
 * has sent READY=1 (mounted) or has failed, leaving its reason in
 * /run/famfs/INSTANCE.error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

/* Where the paths below live: "/" but for the unit tests' build of this. */
#ifndef FAMFS_UNIT_ROOT
#define FAMFS_UNIT_ROOT ""
#endif
#define RUN_DIR FAMFS_UNIT_ROOT "/run/famfs"

static const char *const unit_dirs[] = {
	FAMFS_UNIT_ROOT "/etc/systemd/system",
	FAMFS_UNIT_ROOT "/run/systemd/system",
	FAMFS_UNIT_ROOT "/usr/lib/systemd/system",
	FAMFS_UNIT_ROOT "/lib/systemd/system",
};

bool famfs_unit_wanted(void)
{
	const char *no = getenv("FAMFS_NO_SYSTEMD");
	char path[256];
	struct stat st;

	/* sd_booted(): systemd is PID 1. */
	if ((no && *no && strcmp(no, "0")) ||
	    lstat(FAMFS_UNIT_ROOT "/run/systemd/system", &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return false;
	for (size_t i = 0; i < sizeof(unit_dirs) / sizeof(unit_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/famfs@.service", unit_dirs[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

int famfs_unit_instance(const char *path, char *out, size_t len)
{
	const char *p = path;
	size_t n = 0;

	while (*p == '/')
		p++;
	if (!*p)
		return snprintf(out, len, "-") < (int)len ? 0 : -ENAMETOOLONG;
	for (; *p; p++) {
		char buf[5];
		const char *add = buf;
		unsigned char c = (unsigned char)*p;

		if (c == '/') {
			while (p[1] == '/')
				p++;
			if (!p[1])
				break; /* a trailing slash */
			add = "-";
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == ':' || c == '_' ||
			   (c == '.' && n > 0)) {
			buf[0] = (char)c;
			buf[1] = '\0';
		} else {
			snprintf(buf, sizeof(buf), "\\x%02x", c);
		}
		if (n + strlen(add) >= len)
			return -ENAMETOOLONG;
		memcpy(out + n, add, strlen(add));
		n += strlen(add);
	}
	out[n] = '\0';
	return 0;
}

/* One VAR="value" line in systemd's EnvironmentFile= quoting. */
static void env_line(FILE *f, const char *var, const char *val)
{
	fprintf(f, "%s=\"", var);
	for (; *val; val++) {
		if (*val == '"' || *val == '\\')
			fputc('\\', f);
		fputc(*val, f);
	}
	fputs("\"\n", f);
}

static int write_env(const char *inst, const char *dev, const char *opts,
		     char *err, size_t errlen)
{
	char path[512], tmp[520];
	FILE *f;

	if (mkdir(RUN_DIR, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", RUN_DIR,
			 strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), RUN_DIR "/%s.env", inst);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", tmp,
			 strerror(errno));
		return -1;
	}
	fputs("# Written by mount.famfs for famfs@.service; see mount.famfs(8).\n",
	      f);
	env_line(f, "FAMFS_DEVICE", dev);
	env_line(f, "FAMFS_OPTIONS", opts);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int systemctl(const char *verb, const char *unit)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("systemctl", "systemctl", verb, unit, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int famfs_unit_mount(const char *dev, const char *mnt, const char *opts,
		     char *err, size_t errlen)
{
	char inst[400], unit[420], errfile[512];
	FILE *f;

	if (famfs_unit_instance(mnt, inst, sizeof(inst))) {
		snprintf(err, errlen, "mount point name too long: %s", mnt);
		return -1;
	}
	if (write_env(inst, dev, opts, err, errlen))
		return -1;
	snprintf(errfile, sizeof(errfile), RUN_DIR "/%s.error", inst);
	unlink(errfile);
	snprintf(unit, sizeof(unit), "famfs@%s.service", inst);
	fflush(NULL);
	if (systemctl("start", unit) == 0)
		return 0;
	f = fopen(errfile, "r");
	if (f && fgets(err, (int)errlen, f)) {
		err[strcspn(err, "\n")] = '\0';
	} else {
		snprintf(err, errlen,
			 "%s did not start; see: systemctl status '%s'; journalctl -u '%s'",
			 unit, unit, unit);
	}
	if (f)
		fclose(f);
	return -1;
}
