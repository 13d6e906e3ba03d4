// SPDX-License-Identifier: GPL-2.0-or-later
/* mkfs: what it writes, and every way it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include <cmocka.h>

#include "helpers.h"

static void fresh_fs_is_clean_and_empty(void **state)
{
	struct scratch s;
	struct famfs_dev dev;
	struct famfs_fsck r;

	(void)state;
	scratch_mkfs(&s, 1024 * MiB);
	assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), 0);
	assert_int_equal(dev.sb->version, 48);
	assert_int_equal(dev.sb->omf_major, 2);
	assert_int_equal(dev.sb->omf_minor, 2);
	assert_int_equal(dev.sb->log_offset, 2 * MiB);
	assert_int_equal(dev.sb->log_len, 8 * MiB);
	assert_int_equal(dev.sb->daxdev.size, 1024 * MiB);
	assert_int_equal(dev.log->next_index, 0);
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_MASTER);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_CLEAN);
	assert_int_equal(r.files + r.dirs, 0);
	assert_int_equal(r.space_used, 10 * MiB);
	assert_int_equal(r.space_free, 1014 * MiB);
	scratch_close(&s, &dev);
}

static void refuses_existing_fs_without_force(void **state)
{
	struct famfs_mkfs_opts o = { 0 };
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	assert_int_equal(famfs_mkfs(s.image, &o), -EEXIST);
	assert_non_null(strstr(famfs_errmsg(), "-f"));
	o.force = true;
	assert_int_equal(famfs_mkfs(s.image, &o), 0);
	scratch_drop(&s);
}

static void refuses_bad_devices(void **state)
{
	struct famfs_mkfs_opts o = { 0 };
	struct scratch s;

	(void)state;
	scratch_make(&s, 10 * MiB); /* needs 2 + 8 + 2 MiB */
	assert_int_equal(famfs_mkfs(s.image, &o), -ENOSPC);
	assert_non_null(strstr(famfs_errmsg(), "too small"));
	assert_int_equal(truncate(s.image, 13 * MiB), 0);
	assert_int_equal(famfs_mkfs(s.image, &o), -EINVAL);
	assert_non_null(strstr(famfs_errmsg(), "multiple of the 2 MiB"));
	assert_int_equal(famfs_mkfs("/nonexistent/dax9.9", &o), -ENOENT);
	assert_int_equal(famfs_mkfs(s.dir, &o), -EISDIR);
	o.log_len = 12 * MiB; /* not a power of two */
	assert_int_equal(truncate(s.image, 64 * MiB), 0);
	assert_int_equal(famfs_mkfs(s.image, &o), -EINVAL);
	o.log_len = 16 * MiB;
	assert_int_equal(famfs_mkfs(s.image, &o), 0);
	scratch_drop(&s);
}

static void kill_invalidates_superblock(void **state)
{
	struct famfs_dev dev;
	struct famfs_fsck r;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	assert_int_equal(famfs_kill_super(s.image), 0);
	assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), -ENOENT);
	assert_int_equal(famfs_dev_open(s.image, 0, &dev), 0);
	assert_int_equal(famfs_fsck(&dev, &r), 0);
	assert_int_equal(famfs_fsck_status(&r), FAMFS_FSCK_NOFS);
	famfs_dev_close(&dev);
	assert_int_equal(famfs_kill_super(s.image), -ENOENT);
	scratch_drop(&s);
}

static void client_cannot_mkfs_over_without_force(void **state)
{
	struct famfs_mkfs_opts o = { 0 };
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	scratch_become_other_host(&s);
	assert_int_equal(famfs_mkfs(s.image, &o), -EEXIST);
	assert_non_null(strstr(famfs_errmsg(), "another host"));
	scratch_drop(&s);
}

static void truncated_device_is_reported(void **state)
{
	struct famfs_dev dev;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	assert_int_equal(truncate(s.image, 6 * MiB), 0);
	assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(),
			       "device is truncated: 6291456 bytes, but the log ends at byte"));
	scratch_drop(&s);
}

/* Cut past the log's end but short of the size the superblock records. */
static void device_short_of_recorded_size_is_reported(void **state)
{
	struct famfs_dev dev;
	struct scratch s;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	assert_int_equal(truncate(s.image, 62 * MiB), 0);
	assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), -EUCLEAN);
	assert_string_equal(famfs_errmsg(),
			    "device is truncated: the superblock records 67108864 bytes, the device has 65011712");
	scratch_drop(&s);
}

/* Rewrite this host's identity file in place with a new uuid. */
static void rewrite_identity(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/*
 * The role follows the identity file at every call, in a long-lived
 * process too (the daemon checks it before each append): rewritten in
 * place at once, rewritten after the last read was cached, or replaced.
 */
static void role_follows_the_identity_file(void **state)
{
	static const char other[] = "0b5e4c2a-9f7d-4e1b-8a3c-5d6e7f809a1b\n";
	char mine[64], moved[160];
	struct scratch s;
	struct famfs_dev dev;
	FILE *f;

	(void)state;
	scratch_mkfs(&s, 64 * MiB);
	f = fopen(s.uuid_file, "r");
	assert_non_null(f);
	assert_non_null(fgets(mine, sizeof(mine), f));
	fclose(f);
	assert_int_equal(famfs_dev_open_fs(s.image, 0, &dev), 0);
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_MASTER);
	rewrite_identity(s.uuid_file, other); /* same size, same tick */
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_CLIENT);
	rewrite_identity(s.uuid_file, mine);
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_MASTER);
	sleep(3); /* old enough to be taken from the last read */
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_MASTER);
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_MASTER);
	rewrite_identity(s.uuid_file, other);
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_CLIENT);
	/* replaced by another file (a new inode) */
	snprintf(moved, sizeof(moved), "%s.new", s.uuid_file);
	rewrite_identity(moved, mine);
	assert_int_equal(rename(moved, s.uuid_file), 0);
	assert_int_equal(famfs_role(&dev), FAMFS_ROLE_MASTER);
	scratch_close(&s, &dev);
}

/* An image made in @dir and opened: does it count as in memory? */
static bool opens_in_memory(const char *dir)
{
	char path[128];
	struct famfs_dev dev;
	bool in_memory;
	int fd;

	snprintf(path, sizeof(path), "%s/famfs-unit-mem.XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(64 * MiB)), 0);
	close(fd);
	assert_int_equal(famfs_dev_open(path, 0, &dev), 0);
	in_memory = dev.in_memory;
	famfs_dev_close(&dev);
	unlink(path);
	return in_memory;
}

/*
 * An image in tmpfs has nothing to make durable: famfs_dev_flush() leaves
 * msync() out. One on a disk's file system keeps it.
 */
static void image_in_tmpfs_is_in_memory(void **state)
{
	struct statfs sfs;

	(void)state;
	if (statfs("/dev/shm", &sfs) || sfs.f_type != TMPFS_MAGIC) {
		print_message("no tmpfs at /dev/shm here\n");
		skip();
	}
	assert_true(opens_in_memory("/dev/shm"));
	if (statfs("/var/tmp", &sfs) || sfs.f_type == TMPFS_MAGIC ||
	    sfs.f_type == RAMFS_MAGIC) {
		print_message("/var/tmp is in memory here: no disk to compare\n");
		skip();
	}
	assert_false(opens_in_memory("/var/tmp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fresh_fs_is_clean_and_empty),
		cmocka_unit_test(refuses_existing_fs_without_force),
		cmocka_unit_test(refuses_bad_devices),
		cmocka_unit_test(kill_invalidates_superblock),
		cmocka_unit_test(client_cannot_mkfs_over_without_force),
		cmocka_unit_test(truncated_device_is_reported),
		cmocka_unit_test(device_short_of_recorded_size_is_reported),
		cmocka_unit_test(role_follows_the_identity_file),
		cmocka_unit_test(image_in_tmpfs_is_in_memory),
	};

	return cmocka_run_group_tests_name("mkfs", tests, NULL, NULL);
}
