// SPDX-License-Identifier: GPL-2.0-or-later
/* Small parsing and formatting helpers the tools share. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
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

void famfs_uuid_str(const uint8_t uuid[FAMFS_UUID_LEN], char out[37])
{
	uuid_unparse(uuid, out);
}
