// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdlib.h>
#include <string.h>

#include "tool_util.h"

struct json_object *jstr(const char *v)
{
	struct json_object *j;
	size_t len;
	char *buf;

	if (famfs_utf8_valid(v))
		return json_object_new_string(v);
	/* JSON holds only UTF-8: the rest in famfs_escape()'s form */
	len = FAMFS_ESCAPED_LEN(strlen(v));
	buf = malloc(len);
	if (!buf)
		return json_object_new_string("");
	j = json_object_new_string(famfs_escape(v, buf, len));
	free(buf);
	return j;
}

void jadd_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, jstr(v));
}

void jadd_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void jadd_bool(struct json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

struct json_object *jadd_obj(struct json_object *o, const char *key)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(o, key, c);
	return c;
}

struct json_object *jadd_array(struct json_object *o, const char *key)
{
	struct json_object *a = json_object_new_array();

	json_object_object_add(o, key, a);
	return a;
}

void jpush_str(struct json_object *a, const char *v)
{
	json_object_array_add(a, jstr(v));
}

void json_print(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

const char *human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int i = 0;
	double v = (double)bytes;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i == 0 || v == (double)(uint64_t)v)
		snprintf(buf, len, "%llu %s", (unsigned long long)v, unit[i]);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

void print_fs_warnings(const struct famfs_fsck *r, int width,
		       const char *note)
{
	char esc[FAMFS_ESCAPED_LEN(sizeof(r->warnings[0]))];

	/* warnings quote names from the log: never raw on a terminal */
	for (unsigned int i = 0; i < r->nwarnings; i++)
		printf("  %-*s%s%s\n", width, "warning:",
		       famfs_escape(r->warnings[i], esc, sizeof(esc)), note);
	if (r->warnings_dropped)
		printf("  %-*s... and %u more\n", width, "warning:",
		       r->warnings_dropped);
}

void json_fs_warnings(struct json_object *o, const struct famfs_fsck *r)
{
	struct json_object *w;

	jadd_u64(o, "setid_files", r->setid_files);
	w = jadd_array(o, "warnings");
	for (unsigned int i = 0; i < r->nwarnings; i++)
		jpush_str(w, r->warnings[i]);
	jadd_u64(o, "warnings_not_listed", r->warnings_dropped);
}

void json_fs_usage(struct json_object *o, const struct famfs_fsck *r)
{
	struct json_object *space;

	jadd_u64(o, "files", r->files);
	jadd_u64(o, "directories", r->dirs);
	jadd_u64(o, "bytes_in_files", r->bytes_in_files);
	space = jadd_obj(o, "space");
	jadd_u64(space, "device", r->dev_size);
	jadd_u64(space, "used", r->space_used);
	jadd_u64(space, "free", r->space_free);
	json_fs_devices(jadd_array(o, "devices"), r);
}

void json_fs_devices(struct json_object *a, const struct famfs_fsck *r)
{
	char u[37];

	for (uint32_t i = 0; i < r->ndevs; i++) {
		struct json_object *d = json_object_new_object();

		json_object_array_add(a, d);
		jadd_u64(d, "index", i);
		famfs_uuid_str(r->devs[i].uuid, u);
		jadd_str(d, "uuid", u);
		jadd_u64(d, "size", r->devs[i].size);
		jadd_u64(d, "used", r->devs[i].used);
		jadd_u64(d, "free", r->devs[i].free);
		jadd_bool(d, "present", r->devs[i].present);
		/* the same keys for every device: "" where it is missing */
		jadd_str(d, "path", r->devs[i].present ? r->devs[i].path : "");
	}
}

void json_fs_log(struct json_object *log, const struct famfs_fsck *r)
{
	jadd_u64(log, "bytes", r->log_len);
	jadd_u64(log, "slots", r->log_slots);
	jadd_u64(log, "used", r->log_used);
}

void print_fs_usage(const struct famfs_fsck *r, int width)
{
	char a[32], b[32], c[32];

	printf("  %-*s%s, %llu of %llu entries used (%.1f%%)\n", width, "log:",
	       human_size(r->log_len, a, sizeof(a)),
	       (unsigned long long)r->log_used,
	       (unsigned long long)r->log_slots,
	       r->log_slots ? 100.0 * (double)r->log_used /
				      (double)r->log_slots : 0.0);
	printf("  %-*s%llu files (%s), %llu directories\n", width, "contents:",
	       (unsigned long long)r->files,
	       human_size(r->bytes_in_files, a, sizeof(a)),
	       (unsigned long long)r->dirs);
	if (r->ndevs <= 1) {
		printf("  %-*s%s used, %s free of %s\n", width, "space:",
		       human_size(r->space_used, a, sizeof(a)),
		       human_size(r->space_free, b, sizeof(b)),
		       human_size(r->dev_size, c, sizeof(c)));
		return;
	}
	printf("  %-*s%s used, %s free, on %u devices\n", width, "space:",
	       human_size(r->space_used, a, sizeof(a)),
	       human_size(r->space_free, b, sizeof(b)), r->ndevs);
	for (uint32_t i = 0; i < r->ndevs; i++) {
		char u[37], label[32];

		famfs_uuid_str(r->devs[i].uuid, u);
		snprintf(label, sizeof(label), "device %u:", i);
		printf("  %-*s%s: %s used, %s free of %s\n", width, label, u,
		       human_size(r->devs[i].used, a, sizeof(a)),
		       human_size(r->devs[i].free, b, sizeof(b)),
		       human_size(r->devs[i].size, c, sizeof(c)));
	}
}
