// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which driver serves a devdax device, and moving it to the one famfs
 * needs on this kernel.
 *
 * The device_dax driver has no way to let a file system serve files from
 * the device. On 6.12 famfs_fuse.ko carries a companion dax driver,
 * famfs_dax (dkms/README.md), which also serves /dev/daxX.Y, so user space
 * (our own metadata mapping included) keeps working. From 7.1 on the
 * kernel has fsdev_dax (drivers/dax/fsdev.c) for this; its device node
 * has no mmap. famfs-dkms builds for the kernel lines in famfs_klines[]
 * only: on any other kernel there is no kernel data path.
 * Everything here is public sysfs; $FAMFS_SYSFS names another root and
 * $FAMFS_KERNEL_RELEASE another kernel release, for tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

/* The kernel lines famfs-dkms supports and the dax driver famfs uses there. */
static const struct famfs_kline {
	const char *line; /* release prefix, up to the second dot */
	const char *driver;
	bool node_maps; /* the driver serves mmap of /dev/daxX.Y */
} famfs_klines[] = {
	{ "6.12.", "famfs_dax", true },
	{ "7.3.", "fsdev_dax", false },
};

const char *famfs_kernel_release(char *buf, size_t len)
{
	const char *env = getenv("FAMFS_KERNEL_RELEASE");
	struct utsname u;

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (uname(&u) == 0)
		snprintf(buf, len, "%s", u.release);
	else
		snprintf(buf, len, "%s", "unknown");
	return buf;
}

static const struct famfs_kline *kernel_line(void)
{
	char rel[128];

	famfs_kernel_release(rel, sizeof(rel));
	for (size_t i = 0; i < sizeof(famfs_klines) / sizeof(famfs_klines[0]); i++)
		if (!strncmp(rel, famfs_klines[i].line,
			     strlen(famfs_klines[i].line)))
			return &famfs_klines[i];
	return NULL;
}

const char *famfs_kernel_dax_driver(void)
{
	const struct famfs_kline *k = kernel_line();

	return k ? k->driver : NULL;
}

bool famfs_kernel_dax_node_maps(void)
{
	const struct famfs_kline *k = kernel_line();

	return k && k->node_maps;
}

static const char *sysfs(void)
{
	const char *root = getenv("FAMFS_SYSFS");

	return root && *root ? root : "/sys";
}

void famfs_say_kernel_driver(FILE *f, const char *prefix)
{
	const char *drv = famfs_kernel_dax_driver();
	char rel[128];

	famfs_kernel_release(rel, sizeof(rel));
	fputs(prefix, f);
	if (drv)
		fprintf(f, "kernel %s: dax driver %s\n", rel, drv);
	else
		fprintf(f, FAMFS_NO_KERNEL_SUPPORT "\n", rel);
}

/* The dax bus name ("dax0.0") of a /dev/daxX.Y node. */
static int dax_name(const char *devpath, char *name, size_t len)
{
	char link[3 * PATH_MAX], target[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;

	if (stat(devpath, &st) < 0)
		return famfs_fail(errno, "%s: %s", devpath, strerror(errno));
	if (!S_ISCHR(st.st_mode))
		return famfs_fail(ENODEV, "%s is not a devdax device", devpath);
	snprintf(link, sizeof(link), "%s/dev/char/%u:%u/subsystem", sysfs(),
		 major(st.st_rdev), minor(st.st_rdev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return famfs_fail(ENODEV, "%s is not a devdax device", devpath);
	target[n] = '\0';
	base = strrchr(target, '/');
	if (strcmp(base ? base + 1 : target, "dax"))
		return famfs_fail(ENODEV, "%s is not a devdax device", devpath);
	snprintf(link, sizeof(link), "%s/dev/char/%u:%u", sysfs(),
		 major(st.st_rdev), minor(st.st_rdev));
	if (!realpath(link, target))
		return famfs_fail(errno, "%s: %s", link, strerror(errno));
	base = strrchr(target, '/');
	snprintf(name, len, "%s", base ? base + 1 : target);
	return 0;
}

int famfs_dax_driver(const char *devpath, char *driver, size_t len)
{
	char name[PATH_MAX], link[3 * PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;
	int rc = dax_name(devpath, name, sizeof(name));

	if (rc)
		return rc;
	snprintf(link, sizeof(link), "%s/bus/dax/devices/%s/driver", sysfs(),
		 name);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		snprintf(driver, len, "%s", "");
		return 0;
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(driver, len, "%s", base ? base + 1 : target);
	return 0;
}

static int write_attr(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return close(fd) < 0 ? -errno : 0;
}

int famfs_dax_bind(const char *devpath)
{
	char name[PATH_MAX], rel[128];
	int rc = dax_name(devpath, name, sizeof(name));

	if (rc)
		return rc; /* -ENODEV first: not devdax, nothing to bind */
	if (!famfs_kernel_dax_driver())
		return famfs_fail(ENOTSUP, FAMFS_NO_KERNEL_SUPPORT,
				  famfs_kernel_release(rel, sizeof(rel)));
	return famfs_dax_move(devpath, famfs_kernel_dax_driver());
}

int famfs_dax_move(const char *devpath, const char *want)
{
	char name[PATH_MAX], drv[PATH_MAX], path[3 * PATH_MAX];
	struct stat st;
	int rc = dax_name(devpath, name, sizeof(name));

	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/bus/dax/drivers/%s", sysfs(), want);
	if (stat(path, &st) < 0)
		return famfs_fail(ENOENT,
				  "the %s driver is not registered (%s module not loaded)",
				  want,
				  strcmp(want, "famfs_dax") ? want : "famfs_fuse");
	rc = famfs_dax_driver(devpath, drv, sizeof(drv));
	if (rc)
		return rc;
	if (!strcmp(drv, want))
		return 0;
	if (*drv) {
		snprintf(path, sizeof(path), "%s/bus/dax/devices/%s/driver/unbind",
			 sysfs(), name);
		rc = write_attr(path, name);
		if (rc)
			return famfs_fail(-rc, "cannot unbind %s from %s: %s",
					  name, drv, strerror(-rc));
	}
	/* new_id makes the binding stick across a driver re-probe. */
	snprintf(path, sizeof(path), "%s/bus/dax/drivers/%s/new_id", sysfs(),
		 want);
	rc = write_attr(path, name);
	if (rc) {
		snprintf(path, sizeof(path), "%s/bus/dax/drivers/%s/bind",
			 sysfs(), want);
		rc = write_attr(path, name);
	}
	if (famfs_dax_driver(devpath, drv, sizeof(drv)) == 0 &&
	    !strcmp(drv, want))
		return 0;
	return famfs_fail(rc ? -rc : EIO, "cannot bind %s to %s%s%s", name,
			  want, rc ? ": " : "",
			  rc ? strerror(-rc) : " (the driver did not take it)");
}

/* Is DRIVER one whose node famfs_klines[] says cannot be mapped? */
static bool node_unmappable(const char *driver)
{
	for (size_t i = 0; i < sizeof(famfs_klines) / sizeof(famfs_klines[0]); i++)
		if (!famfs_klines[i].node_maps &&
		    !strcmp(driver, famfs_klines[i].driver))
			return true;
	return false;
}

int famfs_dax_make_readable(const char *devpath)
{
	char drv[PATH_MAX], where[PATH_MAX];
	int rc;

	if (famfs_dax_driver(devpath, drv, sizeof(drv)))
		return 0; /* not devdax: nothing to do */
	if (!node_unmappable(drv) && (drv[0] || famfs_kernel_dax_node_maps()))
		return 0;
	if (famfs_dev_mounted(devpath, where, sizeof(where)))
		return famfs_fail(EBUSY, "%s serves the famfs mounted at %s (on %s, whose device node cannot be read): read it through the mount, or unmount it first",
				  devpath, where, drv);
	/*
	 * No mount lists it, but a daemon whose mount is gone may still
	 * hold it (famfs_dev_wait_writers()): moving it would fail the
	 * files that daemon is logging.
	 */
	rc = famfs_dev_wait_writers(devpath);
	return rc ? rc : famfs_dax_move(devpath, FAMFS_READ_DRIVER);
}
