// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mount.famfs under systemd (daemon/mount/unit.c), outside a booted
 * system: unit.c is built here with FAMFS_UNIT_ROOT, a directory of the
 * build tree standing for "/", and "systemctl" is a script first in
 * $PATH that logs its arguments and plays the unit's outcome.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "unit.h"

#define R FAMFS_UNIT_ROOT

static char bin[sizeof(R) + 16];

/* A fresh root with /run, and "systemctl" first in $PATH. */
static int setup(void **state)
{
	char path[4096];

	(void)state;
	sh("rm -rf '%s' && mkdir -p '%s/run' '%s/bin'", R, R, R);
	snprintf(bin, sizeof(bin), "%s/bin", R);
	/*
	 * Logs "ARGS" to /calls; $FAKE_ERROR: the line the daemon leaves in
	 * /run/famfs/INSTANCE.error; $FAKE_RC: its exit status.
	 */
	sh("printf '%%s\\n' '#!/bin/sh' "
	   "'echo \"$*\" >>\"%s/calls\"' "
	   "'inst=${2#famfs@}; inst=${inst%%.service}' "
	   "'[ -z \"$FAKE_ERROR\" ] || echo \"$FAKE_ERROR\" >\"%s/run/famfs/$inst.error\"' "
	   "'exit ${FAKE_RC:-0}' >'%s/systemctl' && chmod 755 '%s/systemctl'",
	   R, R, bin, bin);
	snprintf(path, sizeof(path), "%s:/usr/bin:/bin", bin);
	setenv("PATH", path, 1);
	unsetenv("FAMFS_NO_SYSTEMD");
	unsetenv("FAKE_ERROR");
	unsetenv("FAKE_RC");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", R);
	return 0;
}

/* The whole of file @rel under the root, into @buf. */
static void slurp(const char *rel, char *buf, size_t len)
{
	char p[512];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s%s", R, rel);
	f = fopen(p, "r");
	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static bool exists(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", R, rel);
	return access(p, F_OK) == 0;
}

static void wanted_needs_systemd_and_the_unit(void **state)
{
	(void)state;
	/* not booted with systemd */
	assert_false(famfs_unit_wanted());
	sh("mkdir -p '%s/run/systemd/system'", R);
	/* systemd, but famfs@.service is not installed */
	assert_false(famfs_unit_wanted());
	sh("mkdir -p '%s/usr/lib/systemd/system' && : >'%s/usr/lib/systemd/system/famfs@.service'",
	   R, R);
	assert_true(famfs_unit_wanted());
	setenv("FAMFS_NO_SYSTEMD", "1", 1);
	assert_false(famfs_unit_wanted());
	setenv("FAMFS_NO_SYSTEMD", "0", 1);
	assert_true(famfs_unit_wanted());
	setenv("FAMFS_NO_SYSTEMD", "", 1);
	assert_true(famfs_unit_wanted());
	/* in /etc alone, as an administrator's copy */
	sh("rm '%s/usr/lib/systemd/system/famfs@.service' && mkdir -p '%s/etc/systemd/system' && "
	   ": >'%s/etc/systemd/system/famfs@.service'", R, R, R);
	assert_true(famfs_unit_wanted());
	/* sd_booted() wants a directory, not a link to one */
	sh("rm -r '%s/run/systemd/system' && ln -s '%s/etc' '%s/run/systemd/system'",
	   R, R, R);
	assert_false(famfs_unit_wanted());
}

static void instance_name_fits_or_is_refused(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(famfs_unit_instance("/mnt/famfs", out, sizeof(out)), 0);
	assert_string_equal(out, "mnt-famfs");
	assert_int_equal(famfs_unit_instance("//", out, sizeof(out)), 0);
	assert_string_equal(out, "-");
	/* 15 characters and the NUL fit; 16 do not */
	assert_int_equal(famfs_unit_instance("/abcdefg/hijklmn", out,
					     sizeof(out)), 0);
	assert_string_equal(out, "abcdefg-hijklmn");
	assert_int_equal(famfs_unit_instance("/abcdefg/hijklmno", out,
					     sizeof(out)), -ENAMETOOLONG);
	/* an escape is never cut in half */
	assert_int_equal(famfs_unit_instance("/abcdefghijkl x", out,
					     sizeof(out)), -ENAMETOOLONG);
	assert_int_equal(famfs_unit_instance("/", out, 1), -ENAMETOOLONG);
}

static void mount_starts_the_instance_with_its_env(void **state)
{
	char err[512] = "", buf[1024];

	(void)state;
	assert_int_equal(famfs_unit_mount("/dev/dax0.0", "/mnt/fam fs",
					  "nosuid,nodev,logfile=/tmp/a\"b\\c",
					  err, sizeof(err)), 0);
	assert_string_equal(err, "");
	slurp("/calls", buf, sizeof(buf));
	assert_string_equal(buf, "start famfs@mnt-fam\\x20fs.service\n");
	slurp("/run/famfs/mnt-fam\\x20fs.env", buf, sizeof(buf));
	assert_string_equal(buf,
			    "# Written by mount.famfs for famfs@.service; see mount.famfs(8).\n"
			    "FAMFS_DEVICE=\"/dev/dax0.0\"\n"
			    "FAMFS_OPTIONS=\"nosuid,nodev,logfile=/tmp/a\\\"b\\\\c\"\n");
	assert_false(exists("/run/famfs/mnt-fam\\x20fs.env.tmp"));
}

static void failed_start_gives_the_daemons_reason(void **state)
{
	char err[512];

	(void)state;
	setenv("FAKE_RC", "1", 1);
	setenv("FAKE_ERROR", "/dev/dax0.0: not a famfs (no famfs superblock)", 1);
	assert_int_equal(famfs_unit_mount("/dev/dax0.0", "/mnt/famfs", "ro",
					  err, sizeof(err)), -1);
	assert_string_equal(err, "/dev/dax0.0: not a famfs (no famfs superblock)");
}

static void failed_start_without_reason_points_at_the_unit(void **state)
{
	char err[512];

	(void)state;
	/* a reason left by an earlier start is not this start's */
	sh("mkdir -p '%s/run/famfs' && echo stale >'%s/run/famfs/mnt-famfs.error'",
	   R, R);
	setenv("FAKE_RC", "5", 1);
	assert_int_equal(famfs_unit_mount("/dev/dax0.0", "/mnt/famfs", "ro",
					  err, sizeof(err)), -1);
	assert_string_equal(err,
			    "famfs@mnt-famfs.service did not start; see: systemctl status 'famfs@mnt-famfs.service'; journalctl -u 'famfs@mnt-famfs.service'");
	assert_false(exists("/run/famfs/mnt-famfs.error"));
}

static void missing_run_dir_is_said(void **state)
{
	char err[512], want[600];

	(void)state;
	sh("rmdir '%s/run'", R);
	assert_int_equal(famfs_unit_mount("/dev/dax0.0", "/mnt/famfs", "ro",
					  err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "cannot create %s/run/famfs: No such file or directory", R);
	assert_string_equal(err, want);
	assert_false(exists("/calls"));
}

/*
 * famfs_unit_mount() as a user for whom the modes count (root passes
 * them by): run as uid 65534 when we are root. Its error text into @err.
 */
static int unit_mount_as_user(char *err, size_t len)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char e[512] = "";
		int rc;

		close(fds[0]);
		if (geteuid() == 0 &&
		    (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			_exit(99);
		rc = famfs_unit_mount("/dev/dax0.0", "/mnt/famfs", "ro", e,
				      sizeof(e));
		if (write(fds[1], e, strlen(e)) < 0)
			_exit(98);
		_exit(rc == -1 ? 1 : 0);
	}
	close(fds[1]);
	n = read(fds[0], err, len - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* /run is there but not writable: famfs/ cannot be made in it. */
static void unwritable_run_dir_is_said(void **state)
{
	char err[512], want[600];

	(void)state;
	sh("chmod 0555 '%s/run'", R);
	assert_int_equal(unit_mount_as_user(err, sizeof(err)), 1);
	snprintf(want, sizeof(want),
		 "cannot create %s/run/famfs: Permission denied", R);
	assert_string_equal(err, want);
	assert_false(exists("/run/famfs"));
	assert_false(exists("/calls"));
}

/* /run/famfs is there but not writable: the instance's env cannot be. */
static void unwritable_famfs_run_dir_is_said(void **state)
{
	char err[512], want[600];

	(void)state;
	sh("mkdir -m 0555 '%s/run/famfs'", R);
	assert_int_equal(unit_mount_as_user(err, sizeof(err)), 1);
	snprintf(want, sizeof(want), "cannot write %s/run/famfs/", R);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, ".env.tmp: Permission denied"));
	assert_false(exists("/calls"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(wanted_needs_systemd_and_the_unit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(instance_name_fits_or_is_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(mount_starts_the_instance_with_its_env,
						setup, teardown),
		cmocka_unit_test_setup_teardown(failed_start_gives_the_daemons_reason,
						setup, teardown),
		cmocka_unit_test_setup_teardown(failed_start_without_reason_points_at_the_unit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(missing_run_dir_is_said, setup,
						teardown),
		cmocka_unit_test_setup_teardown(unwritable_run_dir_is_said,
						setup, teardown),
		cmocka_unit_test_setup_teardown(unwritable_famfs_run_dir_is_said,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("unitmount", tests, NULL, NULL);
}
