// SPDX-License-Identifier: GPL-2.0-or-later
/* Small parsing and formatting helpers the tools share. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "internal.h"

/*
 * The digits of a number: decimal (leading zeros are still decimal, never
 * octal) or hexadecimal after "0x". No sign, no blanks: strtoull would
 * take "-5" as 2^64-5. *@end is left after the digits; -ERANGE when the
 * value does not fit in 64 bits, -EINVAL when there are no digits.
 */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
	unsigned long long v;
	int base = 10;
	char *e;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))
			return -EINVAL;
		base = 16;
	}
	errno = 0;
	v = strtoull(s, &e, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || e == s)
		return -EINVAL;
	*out = v;
	*end = e;
	return 0;
}

int famfs_parse_number(const char *s, uint64_t min, uint64_t max,
		       uint64_t *out)
{
	const char *end;
	uint64_t v;
	int rc = parse_digits(s, &v, &end);

	if (rc == -EINVAL || (!rc && *end))
		return famfs_fail(EINVAL, "\"%s\" is not a number", s ? s : "");
	if (rc == -ERANGE || (v > max && !min))
		return famfs_fail(ERANGE, "\"%s\" is too large (at most %llu)", s,
				  (unsigned long long)max);
	if (v < min || v > max)
		return famfs_fail(ERANGE, "\"%s\" is out of range (%llu to %llu)",
				  s, (unsigned long long)min,
				  (unsigned long long)max);
	*out = v;
	return 0;
}

int famfs_parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	const char *end;
	uint64_t v;
	int rc = parse_digits(s, &v, &end);

	if (rc == -EINVAL)
		return famfs_fail(EINVAL, "\"%s\" is not a size", s ? s : "");
	if (rc == -ERANGE)
		return famfs_fail(ERANGE, "\"%s\" is too large (at most %llu bytes)",
				  s, (unsigned long long)UINT64_MAX);
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	default:
		return famfs_fail(EINVAL, "\"%s\": unknown size suffix (use k, m, g or t)", s);
	}
	if (*end && end[1] && !(tolower((unsigned char)end[1]) == 'i' &&
				 tolower((unsigned char)end[2]) == 'b' && !end[3]) &&
	    !(tolower((unsigned char)end[1]) == 'b' && !end[2]))
		return famfs_fail(EINVAL, "\"%s\": unknown size suffix (use k, m, g or t)", s);
	if (shift && v > (UINT64_MAX >> shift))
		return famfs_fail(ERANGE, "\"%s\" is too large (at most %llu bytes)",
				  s, (unsigned long long)UINT64_MAX);
	*out = v << shift;
	return 0;
}

/* The length of a control character at @s (C0, DEL, or C1 in UTF-8), or 0. */
static size_t control_len(const unsigned char *s)
{
	if (*s < 0x20 || *s == 0x7f)
		return 1;
	if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;
	return 0;
}

bool famfs_name_is_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (control_len(p))
			return false;
	return true;
}

const char *famfs_escape(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!len)
		return buf;
	for (; *p && o + 1 < len; p++) {
		char tmp[12];
		size_t n = control_len(p), t;

		if (*p == '\\')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\\\");
		else if (*p == '\n')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\n");
		else if (*p == '\t')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\t");
		else if (*p == '\r')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\r");
		else if (n == 2)
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x\\x%02x",
					     p[0], p[1]);
		else if (n == 1)
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", p[0]);
		else
			t = (size_t)snprintf(tmp, sizeof(tmp), "%c", *p);
		if (o + t >= len)
			break;
		memcpy(buf + o, tmp, t);
		o += t;
		if (n == 2)
			p++;
	}
	buf[o] = '\0';
	return buf;
}

void famfs_uuid_str(const uint8_t uuid[FAMFS_UUID_LEN], char out[37])
{
	uuid_unparse(uuid, out);
}
