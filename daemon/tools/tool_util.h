/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Output helpers shared by the famfs command-line tools. */
#ifndef FAMFS_TOOL_UTIL_H
#define FAMFS_TOOL_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "libfamfs.h"

/*
 * A JSON string of @v: @v itself when it is valid UTF-8, else its
 * famfs_escape() form (JSON text is UTF-8; names need not be).
 */
struct json_object *jstr(const char *v);
/* --json output is built with json-c: add a member to object @o. */
void jadd_str(struct json_object *o, const char *key, const char *v);
void jadd_u64(struct json_object *o, const char *key, uint64_t v);
void jadd_bool(struct json_object *o, const char *key, bool v);
/* Add an empty object or array as @key of @o and return it. */
struct json_object *jadd_obj(struct json_object *o, const char *key);
struct json_object *jadd_array(struct json_object *o, const char *key);
/* Append the string @v to array @a. */
void jpush_str(struct json_object *a, const char *v);
/* Print @o on stdout as one line (no spaces, '/' unescaped) and free it. */
void json_print(struct json_object *o);
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
/* "setid_files":N,"warnings":[...],"warnings_not_listed":N into @o */
void json_fs_warnings(struct json_object *o, const struct famfs_fsck *r);
/* "files","directories","bytes_in_files","space":{...} into @o */
void json_fs_usage(struct json_object *o, const struct famfs_fsck *r);
/* Each device of the famfs into the array @a: index, uuid, size, used, free */
void json_fs_devices(struct json_object *a, const struct famfs_fsck *r);
/* "bytes","slots","used" of the log into @log */
void json_fs_log(struct json_object *log, const struct famfs_fsck *r);

#endif
