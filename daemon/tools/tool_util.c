// SPDX-License-Identifier: GPL-2.0-or-later
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
