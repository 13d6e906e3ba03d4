// SPDX-License-Identifier: GPL-2.0-or-later
/* The test pattern that creat -S writes and verify checks; see cli.h. */
#include <string.h>

#include "cli.h"

/*
 * Upstream famfs fills test files from a xoroshiro128+ generator seeded
 * through splitmix64, taking the low 32 bits of each output, and truncates
 * the seed to 32 bits. We produce the same bytes so that files made by
 * either tool family verify with the other. (Both algorithms are public
 * domain, by Blackman and Vigna.)
 */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint32_t next32(struct cli_pattern *p)
{
	uint64_t s0 = p->s[0], s1 = p->s[1], r = s0 + s1;

	s1 ^= s0;
	p->s[0] = rotl(s0, 55) ^ s1 ^ (s1 << 14);
	p->s[1] = rotl(s1, 36);
	return (uint32_t)r;
}

void cli_pattern_init(struct cli_pattern *p, uint64_t seed)
{
	uint64_t x = (uint32_t)seed;

	p->s[0] = splitmix64(&x);
	p->s[1] = splitmix64(&x);
}

void cli_pattern_fill(struct cli_pattern *p, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t v = next32(p);

		memcpy(b + i, &v, 4);
	}
	if (i < len) {
		uint32_t v = next32(p);

		memcpy(b + i, &v, len - i);
	}
}

int64_t cli_pattern_check(struct cli_pattern *p, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t v = next32(p);

		if (memcmp(b + i, &v, 4))
			return (int64_t)i;
	}
	if (i < len) {
		uint32_t v = next32(p);

		if (memcmp(b + i, &v, len - i))
			return (int64_t)i;
	}
	return -1;
}

const char *cli_errno_name(int err)
{
	return strerror(err < 0 ? -err : err);
}
