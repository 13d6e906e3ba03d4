// SPDX-License-Identifier: GPL-2.0-or-later
#include <getopt.h>
#include <string.h>

#include "tool_util.h"

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
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
	for (unsigned int i = 0; i < r->nwarnings; i++)
		printf("  %-*s%s%s\n", width, "warning:", r->warnings[i], note);
	if (r->warnings_dropped)
		printf("  %-*s... and %u more\n", width, "warning:",
		       r->warnings_dropped);
}

void json_fs_warnings(const struct famfs_fsck *r)
{
	printf(",\"setid_files\":%llu,\"warnings\":[",
	       (unsigned long long)r->setid_files);
	for (unsigned int i = 0; i < r->nwarnings; i++) {
		if (i)
			putchar(',');
		json_string(stdout, r->warnings[i]);
	}
	printf("],\"warnings_not_listed\":%u", r->warnings_dropped);
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
	printf("  %-*s%s used, %s free of %s\n", width, "space:",
	       human_size(r->space_used, a, sizeof(a)),
	       human_size(r->space_free, b, sizeof(b)),
	       human_size(r->dev_size, c, sizeof(c)));
}

bool tool_qmark_help(int c, char **argv)
{
	/*
	 * getopt returns '?' for -? (when "?" is in the option string) and
	 * for a bad option; only the latter sets optopt (0 for a bad long
	 * option, which the "--" of its argument tells).
	 */
	return c == '?' && (!optopt || optopt == '?') && optind > 0 &&
	       strncmp(argv[optind - 1], "--", 2) != 0;
}
