// SPDX-License-Identifier: GPL-2.0-or-later
/* Per-thread "what went wrong" for callers to print. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[512];

const char *famfs_errmsg(void)
{
	return last_error[0] ? last_error : "no error recorded";
}

int famfs_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return -err;
}
