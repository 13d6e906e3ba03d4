// SPDX-License-Identifier: GPL-2.0-or-later
/* Per-thread "what went wrong" for callers to print. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char last_error[512];

const char *famfs_errmsg(void)
{
	return last_error[0] ? last_error : "no error recorded";
}

int famfs_fail(int err, const char *fmt, ...)
{
	char buf[sizeof(last_error)];
	va_list ap;

	/* Format aside: callers may pass famfs_errmsg() as an argument. */
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(last_error, buf, sizeof(buf));
	return -err;
}
