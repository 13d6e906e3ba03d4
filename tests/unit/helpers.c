// SPDX-License-Identifier: GPL-2.0-or-later
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/*
 * Each result line out at once: tests/unit/run.sh names the case a hung
 * binary was killed in from the lines it printed before.
 */
__attribute__((constructor)) static void line_buffered_stdout(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void scratch_make(struct scratch *s, uint64_t size)
{
	char path[128];
	FILE *f;

	snprintf(s->dir, sizeof(s->dir), "/tmp/famfs-unit.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->image, sizeof(s->image), "%s/image", s->dir);
	snprintf(s->uuid_file, sizeof(s->uuid_file), "%s/system_uuid", s->dir);
	f = fopen(s->image, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), (off_t)size), 0);
	fclose(f);
	setenv("FAMFS_SYSTEM_UUID_FILE", s->uuid_file, 1);
	/* where this "host" records the devices it found: never the real map */
	snprintf(path, sizeof(path), "%s/devmap", s->dir);
	setenv("FAMFS_DEVMAP", path, 1);
}

void scratch_mkfs(struct scratch *s, uint64_t size)
{
	struct famfs_mkfs_opts o = { 0 };

	scratch_make(s, size);
	assert_int_equal(famfs_mkfs(s->image, &o), 0);
}

void scratch_become_other_host(struct scratch *s)
{
	snprintf(s->uuid_file, sizeof(s->uuid_file), "%s/other_uuid", s->dir);
	setenv("FAMFS_SYSTEM_UUID_FILE", s->uuid_file, 1);
	/* create it, so this "host" has an identity of its own */
	uint8_t u[FAMFS_UUID_LEN];
	assert_int_equal(famfs_system_uuid(u, true), 0);
}

void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	assert_true(vsnprintf(cmd, sizeof(cmd), fmt, ap) < (int)sizeof(cmd));
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

void scratch_drop(struct scratch *s)
{
	sh("rm -rf '%s'", s->dir);
}

void scratch_open(struct scratch *s, uint64_t size, struct famfs_dev *dev)
{
	scratch_mkfs(s, size);
	assert_int_equal(famfs_dev_open_fs(s->image, FAMFS_OPEN_RW, dev), 0);
}

void scratch_close(struct scratch *s, struct famfs_dev *dev)
{
	famfs_dev_close(dev);
	scratch_drop(s);
}
