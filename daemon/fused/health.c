// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The health of the device under the mount, as the kernel sees it. When
 * our famfs_fuse module's famfs_dax driver serves the dax device, a memory
 * error on it marks the whole device failed and its sysfs attribute
 * famfs_health turns from "ok" into "failed pfn=..." (dkms/README.md); from
 * then on the kernel fails reads and writes of its files with EIO. We
 * report the attribute in .meta/.status (for "famfs status") and log the
 * change once, so the administrator hears of it without reading sysfs.
 * Any other device (a regular file, device_dax in fallback mode) has no
 * such attribute: its health is "unknown".
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fused.h"

/* Timer ticks and lookup misses come often: look at most this often. */
#define HEALTH_MIN_INTERVAL_MS 100

/* The attribute's text into @buf ("" when there is none). */
static void read_health(const char *devpath, char *buf, size_t len)
{
	char path[96];
	struct stat st;
	ssize_t n;
	int fd;

	buf[0] = '\0';
	if (stat(devpath, &st) || !S_ISCHR(st.st_mode))
		return;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/famfs_health",
		 major(st.st_rdev), minor(st.st_rdev));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

void fused_health_check(struct fused *fs, bool now)
{
	char h[sizeof(fs->health)];
	uint64_t t = fused_now_ms();
	bool was_failed = !strncmp(fs->health, "failed", 6);

	if (fs->dev_lost)
		return; /* "lost" says more than the attribute can */
	if (!now && fs->health_checked &&
	    t - fs->health_checked < HEALTH_MIN_INTERVAL_MS)
		return;
	fs->health_checked = t;
	read_health(fs->devpath, h, sizeof(h));
	if (!h[0])
		snprintf(h, sizeof(h), "unknown");
	if (!strcmp(h, fs->health))
		return;
	if (!strncmp(h, "failed", 6))
		fused_log(L_WARN, "device %s failed (famfs_health: %s): a memory error; the kernel now fails reads and writes of its files with EIO and new mappings with SIGBUS",
			  fs->devpath, h);
	else if (was_failed)
		fused_log(L_NOTICE, "device %s: famfs_health is %s again",
			  fs->devpath, h);
	snprintf(fs->health, sizeof(fs->health), "%s", h);
}
