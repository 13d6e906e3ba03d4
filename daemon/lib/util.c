// SPDX-License-Identifier: GPL-2.0-or-later
/* Small parsing and formatting helpers the tools share. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <uuid/uuid.h>

#include "internal.h"

int famfs_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return famfs_fail(EINVAL, "\"%s\" is not a size", s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return famfs_fail(EINVAL, "\"%s\" is not a size", s);
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
		return famfs_fail(EINVAL, "\"%s\" is too large", s);
	*out = (uint64_t)v << shift;
	return 0;
}

void famfs_uuid_str(const uint8_t uuid[FAMFS_UUID_LEN], char out[37])
{
	uuid_unparse(uuid, out);
}
