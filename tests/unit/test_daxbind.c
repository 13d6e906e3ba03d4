// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Moving a devdax device to famfs_dax (6.12) or fsdev_dax (7.3) (daxbind.c),
 * against a fake sysfs ($FAMFS_SYSFS) and kernel release
 * ($FAMFS_KERNEL_RELEASE; 6.12 unless a case says otherwise). The device is /dev/null, a character device every
 * machine has; the fake tree says it is dax0.0 on the dax bus. Where the
 * kernel would react to a write (unbind, new_id, bind), the attribute is a
 * FIFO read by a child process that checks what was written and moves the
 * driver link as the kernel would, before it lets the next write through:
 * so the order of the writes is checked, and nothing races.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#define DEV "/dev/null"

struct fake {
	char root[64];
	char devdir[160]; /* the device's directory */
	char drivers[160]; /* bus/dax/drivers */
};

static void path(char *out, size_t len, const char *a, const char *b)
{
	assert_true((size_t)snprintf(out, len, "%s/%s", a, b) < len);
}

/* Point the device's driver link at @drv ("" for no driver). */
static void set_driver(const struct fake *f, const char *drv)
{
	char link[256], target[256];

	path(link, sizeof(link), f->devdir, "driver");
	unlink(link);
	if (!*drv)
		return;
	path(target, sizeof(target), f->drivers, drv);
	assert_int_equal(symlink(target, link), 0);
}

#define R612 "6.12.57+deb13-amd64"

/*
 * A fake sysfs where DEV is dax0.0, on device_dax, with driver @drv
 * registered too (NULL: none), on a 6.12 kernel.
 */
static void fake_make(struct fake *f, const char *drv)
{
	struct stat st;
	char link[256], target[256];

	snprintf(f->root, sizeof(f->root), "/tmp/famfs-daxbind.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	path(f->devdir, sizeof(f->devdir), f->root, "devices/platform/dax0.0");
	path(f->drivers, sizeof(f->drivers), f->root, "bus/dax/drivers");
	assert_int_equal(stat(DEV, &st), 0);
	sh("mkdir -p '%s' '%s/device_dax' '%s/dev/char' '%s/bus/dax/devices'",
	   f->devdir, f->drivers, f->root, f->root);
	if (drv)
		sh("mkdir '%s/%s'", f->drivers, drv);
	/* dev/char/MAJ:MIN -> the device; its subsystem -> bus/dax */
	snprintf(link, sizeof(link), "%s/dev/char/%u:%u", f->root,
		 major(st.st_rdev), minor(st.st_rdev));
	assert_int_equal(symlink(f->devdir, link), 0);
	path(link, sizeof(link), f->devdir, "subsystem");
	path(target, sizeof(target), f->root, "bus/dax");
	assert_int_equal(symlink(target, link), 0);
	path(link, sizeof(link), f->root, "bus/dax/devices/dax0.0");
	assert_int_equal(symlink(f->devdir, link), 0);
	set_driver(f, "device_dax");
	setenv("FAMFS_SYSFS", f->root, 1);
	setenv("FAMFS_KERNEL_RELEASE", R612, 1);
}

static void fake_drop(struct fake *f)
{
	sh("rm -rf '%s'", f->root);
	unsetenv("FAMFS_SYSFS");
	unsetenv("FAMFS_KERNEL_RELEASE");
}

/* An attribute file @name of driver @drv: "" (regular), "fifo", "dir". */
static void attr(const struct fake *f, const char *drv, const char *name,
		 const char *kind)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/%s/%s", f->drivers, drv, name);
	if (!strcmp(kind, "fifo"))
		assert_int_equal(mkfifo(p, 0600), 0);
	else if (!strcmp(kind, "dir"))
		assert_int_equal(mkdir(p, 0700), 0);
	else
		sh(": >'%s'", p);
}

/* What was written to regular attribute @name of @drv. */
static void attr_read(const struct fake *f, const char *drv, const char *name,
		      char *buf, size_t len)
{
	char p[300];
	FILE *in;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s/%s", f->drivers, drv, name);
	in = fopen(p, "r");
	assert_non_null(in);
	n = fread(buf, 1, len - 1, in);
	buf[n] = '\0';
	fclose(in);
}

/* In the kernel's child: read FIFO @drv/@name to its end; is it "dax0.0"? */
static bool kernel_reads(const struct fake *f, const char *drv,
			 const char *name)
{
	char p[300], buf[64];
	size_t got = 0;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s/%s", f->drivers, drv, name);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return false;
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	if (strcmp(buf, "dax0.0")) {
		fprintf(stderr, "# %s/%s got \"%s\"\n", drv, name, buf);
		return false;
	}
	return true;
}

/*
 * The kernel's side of a bind: device_dax's unbind, then @drv's @how
 * ("new_id" or "bind"), each must receive "dax0.0"; the driver link
 * follows. Exits 0 when both writes came, in that order.
 */
static pid_t fake_kernel(const struct fake *f, const char *drv,
			 const char *how)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid)
		return pid;
	alarm(20); /* a write that never comes: EINTR, exit 1 or 2 */
	if (!kernel_reads(f, "device_dax", "unbind"))
		_exit(1);
	set_driver(f, "");
	/* The driver takes the device before the write returns. */
	set_driver(f, drv);
	_exit(kernel_reads(f, drv, how) ? 0 : 2);
}

static int waited(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void driver_is_read_from_the_bus(void **state)
{
	struct fake f;
	char drv[64];

	(void)state;
	fake_make(&f, "famfs_dax");
	assert_int_equal(famfs_dax_driver(DEV, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "device_dax");
	set_driver(&f, "famfs_dax");
	assert_int_equal(famfs_dax_driver(DEV, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "famfs_dax");
	set_driver(&f, "");
	assert_int_equal(famfs_dax_driver(DEV, drv, sizeof(drv)), 0);
	assert_string_equal(drv, "");
	fake_drop(&f);
}

static void not_devdax_is_enodev(void **state)
{
	struct fake f;
	char drv[64], p[256];

	(void)state;
	fake_make(&f, "famfs_dax");
	/* a regular file */
	path(p, sizeof(p), f.root, "image");
	sh(": >'%s'", p);
	assert_int_equal(famfs_dax_bind(p), -ENODEV);
	assert_non_null(strstr(famfs_errmsg(), "is not a devdax device"));
	assert_int_equal(famfs_dax_driver(p, drv, sizeof(drv)), -ENODEV);
	/* a character device of another subsystem */
	path(p, sizeof(p), f.devdir, "subsystem");
	unlink(p);
	path(drv, sizeof(drv), f.root, "class");
	sh("mkdir -p '%s/mem'", drv);
	sh("ln -s '%s/mem' '%s'", drv, p);
	assert_int_equal(famfs_dax_bind(DEV), -ENODEV);
	assert_non_null(strstr(famfs_errmsg(), DEV " is not a devdax device"));
	/* a character device sysfs does not know */
	sh("rm -rf '%s/dev'", f.root);
	assert_int_equal(famfs_dax_driver(DEV, drv, sizeof(drv)), -ENODEV);
	fake_drop(&f);
}

static void no_famfs_dax_driver_is_enoent(void **state)
{
	struct fake f;
	char drv[64];

	(void)state;
	fake_make(&f, NULL);
	attr(&f, "device_dax", "unbind", "");
	assert_int_equal(famfs_dax_bind(DEV), -ENOENT);
	assert_string_equal(famfs_errmsg(),
			    "the famfs_dax driver is not registered (famfs_fuse module not loaded)");
	/* the device was left where it was */
	attr_read(&f, "device_dax", "unbind", drv, sizeof(drv));
	assert_string_equal(drv, "");
	fake_drop(&f);
}

static void already_on_famfs_dax_writes_nothing(void **state)
{
	struct fake f;
	char buf[64];

	(void)state;
	fake_make(&f, "famfs_dax");
	set_driver(&f, "famfs_dax");
	attr(&f, "famfs_dax", "unbind", "");
	attr(&f, "famfs_dax", "new_id", "");
	assert_int_equal(famfs_dax_bind(DEV), 0);
	attr_read(&f, "famfs_dax", "unbind", buf, sizeof(buf));
	assert_string_equal(buf, "");
	attr_read(&f, "famfs_dax", "new_id", buf, sizeof(buf));
	assert_string_equal(buf, "");
	fake_drop(&f);
}

/* On kernel @release, dax0.0 moves from device_dax to @driver by new_id. */
static void moves_by_new_id(const char *release, const char *driver)
{
	struct fake f;
	char drv[64];
	pid_t k;

	fake_make(&f, driver);
	setenv("FAMFS_KERNEL_RELEASE", release, 1);
	attr(&f, "device_dax", "unbind", "fifo");
	attr(&f, driver, "new_id", "fifo");
	k = fake_kernel(&f, driver, "new_id");
	alarm(30);
	assert_int_equal(famfs_dax_bind(DEV), 0);
	alarm(0);
	assert_int_equal(waited(k), 0);
	assert_int_equal(famfs_dax_driver(DEV, drv, sizeof(drv)), 0);
	assert_string_equal(drv, driver);
	fake_drop(&f);
}

static void moves_from_device_dax_by_new_id(void **state)
{
	(void)state;
	moves_by_new_id(R612, "famfs_dax");
}

static void new_id_refused_falls_back_to_bind(void **state)
{
	struct fake f;
	pid_t k;

	(void)state;
	fake_make(&f, "famfs_dax");
	attr(&f, "device_dax", "unbind", "fifo");
	attr(&f, "famfs_dax", "new_id", "dir"); /* EISDIR: refused */
	attr(&f, "famfs_dax", "bind", "fifo");
	k = fake_kernel(&f, "famfs_dax", "bind");
	alarm(30);
	assert_int_equal(famfs_dax_bind(DEV), 0);
	alarm(0);
	assert_int_equal(waited(k), 0);
	fake_drop(&f);
}

/*
 * Nothing reacts to the writes: the bind fails, saying the driver did not
 * take the device; unbind got @unbind ("" when the device had no driver),
 * new_id the device's name.
 */
static void bind_not_taken(const char *driver, const char *unbind)
{
	struct fake f;
	char buf[64];

	fake_make(&f, "famfs_dax");
	set_driver(&f, driver);
	attr(&f, "device_dax", "unbind", "");
	attr(&f, "famfs_dax", "new_id", "");
	assert_int_equal(famfs_dax_bind(DEV), -EIO);
	assert_string_equal(famfs_errmsg(),
			    "cannot bind dax0.0 to famfs_dax (the driver did not take it)");
	attr_read(&f, "device_dax", "unbind", buf, sizeof(buf));
	assert_string_equal(buf, unbind);
	attr_read(&f, "famfs_dax", "new_id", buf, sizeof(buf));
	assert_string_equal(buf, "dax0.0");
	fake_drop(&f);
}

static void unbound_device_is_bound_without_unbind(void **state)
{
	(void)state;
	bind_not_taken("", "");
}

static void driver_that_does_not_take_it_is_an_error(void **state)
{
	(void)state;
	bind_not_taken("device_dax", "dax0.0");
}

static void unbind_refused_stops_there(void **state)
{
	struct fake f;
	char buf[64];

	(void)state;
	fake_make(&f, "famfs_dax");
	attr(&f, "device_dax", "unbind", "dir");
	attr(&f, "famfs_dax", "new_id", "");
	assert_int_equal(famfs_dax_bind(DEV), -EISDIR);
	assert_string_equal(famfs_errmsg(),
			    "cannot unbind dax0.0 from device_dax: Is a directory");
	attr_read(&f, "famfs_dax", "new_id", buf, sizeof(buf));
	assert_string_equal(buf, "");
	fake_drop(&f);
}

/* The driver by kernel line: 6.12 famfs_dax, 7.3 fsdev_dax, else none. */
static void driver_follows_the_kernel_line(void **state)
{
	static const struct {
		const char *release, *driver;
	} k[] = {
		{ R612, "famfs_dax" },	  { "6.12.0", "famfs_dax" },
		{ "7.3.4+deb13-amd64", "fsdev_dax" },
		{ "6.1.0-30-amd64", NULL }, { "6.18.0-1-amd64", NULL },
		{ "7.2.9+deb13-amd64", NULL }, { "7.30.1", NULL },
		{ "6.120.1", NULL },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		const char *d;

		setenv("FAMFS_KERNEL_RELEASE", k[i].release, 1);
		assert_string_equal(famfs_kernel_release(buf, sizeof(buf)),
				    k[i].release);
		d = famfs_kernel_dax_driver();
		if (k[i].driver)
			assert_string_equal(d, k[i].driver);
		else
			assert_null(d);
		/* Only famfs_dax serves a mapping of the device node. */
		assert_int_equal(famfs_kernel_dax_node_maps(),
				 k[i].driver && !strcmp(k[i].driver, "famfs_dax"));
	}
	unsetenv("FAMFS_KERNEL_RELEASE");
}

static void moves_to_fsdev_dax_on_7_3(void **state)
{
	(void)state;
	moves_by_new_id("7.3.4+deb13-amd64", "fsdev_dax");
}

/* 7.3 without fsdev_dax loaded: the kernel's module is named. */
static void no_fsdev_dax_on_7_3_is_enoent(void **state)
{
	struct fake f;

	(void)state;
	fake_make(&f, "famfs_dax");
	setenv("FAMFS_KERNEL_RELEASE", "7.3.4+deb13-amd64", 1);
	assert_int_equal(famfs_dax_bind(DEV), -ENOENT);
	assert_string_equal(famfs_errmsg(),
			    "the fsdev_dax driver is not registered (fsdev_dax module not loaded)");
	fake_drop(&f);
}

/* A kernel famfs-dkms does not build for: no bind, the words users see. */
static void unsupported_kernel_is_enotsup(void **state)
{
	struct fake f;
	char buf[64];

	(void)state;
	fake_make(&f, "famfs_dax");
	setenv("FAMFS_KERNEL_RELEASE", "6.18.0-1-amd64", 1);
	attr(&f, "device_dax", "unbind", "");
	assert_int_equal(famfs_dax_bind(DEV), -ENOTSUP);
	assert_string_equal(famfs_errmsg(),
			    "famfs kernel support not available for 6.18.0-1-amd64: fallback mode");
	attr_read(&f, "device_dax", "unbind", buf, sizeof(buf));
	assert_string_equal(buf, "");
	fake_drop(&f);
}

static void on_alarm(int sig)
{
	(void)sig;
}

int main(void)
{
	/*
	 * A write the fake kernel never reads, or one it waits for that
	 * never comes, is cut short by the alarm (EINTR, no restart): the
	 * case fails instead of the binary hanging.
	 */
	struct sigaction sa = { .sa_handler = on_alarm };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver_is_read_from_the_bus),
		cmocka_unit_test(not_devdax_is_enodev),
		cmocka_unit_test(no_famfs_dax_driver_is_enoent),
		cmocka_unit_test(already_on_famfs_dax_writes_nothing),
		cmocka_unit_test(moves_from_device_dax_by_new_id),
		cmocka_unit_test(new_id_refused_falls_back_to_bind),
		cmocka_unit_test(unbound_device_is_bound_without_unbind),
		cmocka_unit_test(driver_that_does_not_take_it_is_an_error),
		cmocka_unit_test(unbind_refused_stops_there),
		cmocka_unit_test(driver_follows_the_kernel_line),
		cmocka_unit_test(moves_to_fsdev_dax_on_7_3),
		cmocka_unit_test(no_fsdev_dax_on_7_3_is_enoent),
		cmocka_unit_test(unsupported_kernel_is_enotsup),
	};

	sigaction(SIGALRM, &sa, NULL);
	return cmocka_run_group_tests_name("daxbind", tests, NULL, NULL);
}
