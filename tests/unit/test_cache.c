// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libfamfs-cache, through its shared library: the instruction chosen
 * matches what /proc/cpuinfo says the CPU has, FAMFS_FLUSH chooses among
 * those only, and flushing or invalidating any range leaves its data as
 * it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "famfs/cache.h"

/* Whether /proc/cpuinfo lists @flag for the first CPU. */
static bool cpuinfo_has(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192], word[64];
	bool has = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			snprintf(word, sizeof(word), " %s ", flag);
			line[strcspn(line, "\n")] = ' ';
			has = strstr(line, word) != NULL;
			break;
		}
	fclose(f);
	return has;
}

static void test_default_matches_cpuinfo(void **state)
{
	const char *want_inv =
		cpuinfo_has("clflushopt") ? "clflushopt" : "clflush";
	const char *want_flush = cpuinfo_has("clwb") ? "clwb" : want_inv;

	(void)state;
	assert_null(getenv("FAMFS_FLUSH"));
	assert_string_equal(famfs_cache_flush_insn(), want_flush);
	assert_string_equal(famfs_cache_invalidate_insn(), want_inv);
}

/*
 * The names a new process chooses with FAMFS_FLUSH=@force,
 * "flush/invalidate": this program again, since the choice is made once
 * per process.
 */
static void forced(const char *force, char *out, size_t len)
{
	char cmd[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "FAMFS_FLUSH=%s /proc/%d/exe --print", force,
		 (int)getpid());
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, (int)len, p));
	out[strcspn(out, "\n")] = 0;
	assert_int_equal(pclose(p), 0);
}

static void test_forced_choice(void **state)
{
	bool opt = cpuinfo_has("clflushopt"), wb = cpuinfo_has("clwb");
	char got[64], want[64];

	(void)state;
	forced("clflush", got, sizeof(got));
	assert_string_equal(got, "clflush/clflush");
	forced("clflushopt", got, sizeof(got));
	assert_string_equal(got,
			    opt ? "clflushopt/clflushopt" : "clflush/clflush");
	/* clwb keeps the line: never what invalidate uses. */
	forced("clwb", got, sizeof(got));
	snprintf(want, sizeof(want), "%s/%s",
		 wb    ? "clwb"
		 : opt ? "clflushopt"
		       : "clflush",
		 opt ? "clflushopt" : "clflush");
	assert_string_equal(got, want);
	/* A name that is no instruction changes nothing. */
	forced("nonsense", got, sizeof(got));
	snprintf(want, sizeof(want), "%s/%s", famfs_cache_flush_insn(),
		 famfs_cache_invalidate_insn());
	assert_string_equal(got, want);
}

static void test_ranges_keep_their_data(void **state)
{
	static const size_t lens[] = {0, 1, 63, 64, 65, 4095, 1 << 20};
	size_t total = (1 << 20) + 256;
	unsigned char *buf = malloc(total), *ref = malloc(total);

	(void)state;
	assert_non_null(buf);
	assert_non_null(ref);
	for (size_t i = 0; i < total; i++)
		ref[i] = (unsigned char)(i * 7 + 3);
	memcpy(buf, ref, total);
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (size_t off = 0; off < 130; off += 13) {
			famfs_cache_flush(buf + off, lens[l]);
			famfs_cache_invalidate(buf + off, lens[l]);
			famfs_cache_barrier();
		}
	assert_memory_equal(buf, ref, total);
	free(buf);
	free(ref);
}

/*
 * famfs_cache_copy() and famfs_cache_zero() write exactly [dst, dst + len)
 * at every alignment of either end and every length around a line, and
 * nothing around it; the source is left as it was.
 */
static void test_copy_and_zero_write_exactly_their_range(void **state)
{
	static const size_t lens[] = {0, 1, 15, 16, 63, 64, 65, 127, 128,
				      129, 200, 4096, 65536 + 17};
	size_t total = 65536 + 512;
	unsigned char *dst = aligned_alloc(64, total), *src = malloc(total);
	unsigned char *want = malloc(total), *orig = malloc(total);

	(void)state;
	assert_non_null(dst);
	assert_non_null(src);
	assert_non_null(want);
	assert_non_null(orig);
	for (size_t i = 0; i < total; i++) {
		src[i] = (unsigned char)(i * 13 + 5);
		orig[i] = (unsigned char)(i * 7 + 3) | 1; /* never 0 */
	}
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (size_t doff = 0; doff < 72; doff += 9)
			for (size_t soff = 0; soff < 40; soff += 13) {
				size_t n = lens[l];

				memcpy(dst, orig, total);
				memcpy(want, orig, total);
				memcpy(want + doff, src + soff, n);
				famfs_cache_copy(dst + doff, src + soff, n);
				assert_memory_equal(dst, want, total);

				memcpy(dst, orig, total);
				memset(want + doff, 0, n);
				famfs_cache_zero(dst + doff, n);
				assert_memory_equal(dst, want, total);
			}
	for (size_t i = 0; i < total; i++)
		assert_int_equal(src[i], (unsigned char)(i * 13 + 5));
	free(dst);
	free(src);
	free(want);
	free(orig);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_matches_cpuinfo),
		cmocka_unit_test(test_forced_choice),
		cmocka_unit_test(test_ranges_keep_their_data),
		cmocka_unit_test(test_copy_and_zero_write_exactly_their_range),
	};

	if (argc == 2 && !strcmp(argv[1], "--print")) {
		printf("%s/%s\n", famfs_cache_flush_insn(),
		       famfs_cache_invalidate_insn());
		return 0;
	}
	unsetenv("FAMFS_FLUSH");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
