// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An LD_PRELOAD shim for the CLI tier: pread(2) returns the file's bytes
 * with the one at file offset $FLIP_AT inverted, while a mapping of the
 * file still shows the true byte. It gives famfs chkread a file whose two
 * reads differ, which no healthy file system does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

static ssize_t flip(void *buf, ssize_t n, off_t off)
{
	const char *at = getenv("FLIP_AT");
	long long pos;

	if (!at || n <= 0)
		return n;
	pos = atoll(at);
	if (pos >= off && pos < off + n)
		((uint8_t *)buf)[pos - off] ^= 0xff;
	return n;
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	ssize_t (*real)(int, void *, size_t, off_t) =
		(ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");

	return flip(buf, real(fd, buf, len, off), off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	return pread64(fd, buf, len, off);
}
