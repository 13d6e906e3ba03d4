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

/*
 * The length of the UTF-8 character at @s (1 to 4), or 0 where the bytes
 * are not UTF-8: a stray continuation byte, a truncated sequence, an
 * overlong form, a surrogate or a code point past U+10FFFF.
 */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned int lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f; /* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

bool famfs_name_is_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (control_len(p))
			return false;
	return true;
}

bool famfs_utf8_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

const char *famfs_escape(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!len)
		return buf;
	while (*p && o + 1 < len) {
		char tmp[12];
		size_t c = control_len(p), u = utf8_len(p), t;

		if (*p == '\\')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\\\");
		else if (*p == '\n')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\n");
		else if (*p == '\t')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\t");
		else if (*p == '\r')
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\r");
		else if (c == 2)
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x\\x%02x",
					     p[0], p[1]);
		else if (c == 1 || !u) /* a control byte, or not UTF-8 */
			t = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", p[0]);
		else
			t = (size_t)snprintf(tmp, sizeof(tmp), "%.*s", (int)u,
					     (const char *)p);
		if (o + t >= len)
			break;
		memcpy(buf + o, tmp, t);
		o += t;
		p += c == 2 ? 2 : !u ? 1 : u;
	}
	buf[o] = '\0';
	return buf;
}

void famfs_uuid_str(const uint8_t uuid[FAMFS_UUID_LEN], char out[37])
{
	uuid_unparse(uuid, out);
}
