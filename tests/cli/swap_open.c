// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An LD_PRELOAD shim for the CLI tier: the first time the program opens a
 * file (not a directory) whose last path component is the last component
 * of $SWAP_PATH, $SWAP_PATH is replaced by a symbolic link to
 * $SWAP_TARGET just before the open goes ahead. It plays a user who swaps
 * a file of a tree being copied for a link between the copier's stat and
 * its open.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int swapped;

static const char *last(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void maybe_swap(const char *name, int flags)
{
	const char *path = getenv("SWAP_PATH");
	const char *target = getenv("SWAP_TARGET");

	if (!path || !target || (flags & O_DIRECTORY) ||
	    strcmp(last(name), last(path)) || atomic_exchange(&swapped, 1))
		return;
	if (unlink(path) == 0 && symlink(target, path) == 0)
		return;
	atomic_store(&swapped, 0);
}

#define OPENAT_LIKE(fn)                                                     \
	int fn(int dir, const char *name, int flags, ...)                   \
	{                                                                   \
		int (*real)(int, const char *, int, ...) =                  \
			(int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, \
								   #fn);    \
		va_list ap;                                                 \
		mode_t mode;                                                \
                                                                            \
		va_start(ap, flags);                                        \
		mode = (mode_t)va_arg(ap, int);                             \
		va_end(ap);                                                 \
		maybe_swap(name, flags);                                    \
		return real(dir, name, flags, mode);                        \
	}

OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

/* open(2) is openat(2) from the working directory. */
int open(const char *name, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return openat(AT_FDCWD, name, flags, mode);
}

int open64(const char *name, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return openat64(AT_FDCWD, name, flags, mode);
}

/* What _FORTIFY_SOURCE turns an open without a mode into. */
int __open_2(const char *name, int flags)
{
	return open(name, flags);
}

int __open64_2(const char *name, int flags)
{
	return open64(name, flags);
}

int __openat_2(int dir, const char *name, int flags)
{
	return openat(dir, name, flags);
}

int __openat64_2(int dir, const char *name, int flags)
{
	return openat64(dir, name, flags);
}
