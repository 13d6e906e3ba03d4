/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Output helpers shared by the famfs command-line tools. */
#ifndef FAMFS_TOOL_UTIL_H
#define FAMFS_TOOL_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "libfamfs.h"

/* Print @s as a JSON string literal, quotes included. */
void json_string(FILE *f, const char *s);
/* "1.5 GiB", "8 MiB", "512 B" */
const char *human_size(uint64_t bytes, char *buf, size_t len);
/*
 * The log, contents and space lines of a checked famfs (fsck, status),
 * indented by two and with the labels padded to @width columns.
 */
void print_fs_usage(const struct famfs_fsck *r, int width);
/* fsck's warnings, a "warning:" line each, @note after each one. */
void print_fs_warnings(const struct famfs_fsck *r, int width,
		       const char *note);
/* ,"setid_files":N,"warnings":[...] */
void json_fs_warnings(const struct famfs_fsck *r);
/* Did getopt's '?' (@c) come from upstream's -? (help), not a bad option? */
bool tool_qmark_help(int c, char **argv);

#endif
