// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The on-media layout against the sizes and offsets of upstream famfs's
 * x86_64 structures (src/famfs_meta.h at format 2.2), and the checksums
 * against values computed independently (Python's zlib.crc32 over the same
 * little-endian bytes).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "libfamfs.h"

static void superblock_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct famfs_omf_superblock), 200);
	assert_int_equal(offsetof(struct famfs_omf_superblock, magic), 0);
	assert_int_equal(offsetof(struct famfs_omf_superblock, version), 8);
	assert_int_equal(offsetof(struct famfs_omf_superblock, log_offset), 16);
	assert_int_equal(offsetof(struct famfs_omf_superblock, log_len), 24);
	assert_int_equal(offsetof(struct famfs_omf_superblock, alloc_unit), 32);
	assert_int_equal(offsetof(struct famfs_omf_superblock, omf_major), 40);
	assert_int_equal(offsetof(struct famfs_omf_superblock, omf_minor), 44);
	assert_int_equal(offsetof(struct famfs_omf_superblock, fs_uuid), 48);
	assert_int_equal(offsetof(struct famfs_omf_superblock, dev_uuid), 64);
	assert_int_equal(offsetof(struct famfs_omf_superblock, system_uuid), 80);
	assert_int_equal(offsetof(struct famfs_omf_superblock, crc), 96);
	assert_int_equal(offsetof(struct famfs_omf_superblock, flags), 104);
	assert_int_equal(offsetof(struct famfs_omf_superblock, daxdev), 112);
	assert_int_equal(offsetof(struct famfs_omf_superblock, daxdev.name), 136);
}

static void log_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct famfs_omf_log), 48);
	assert_int_equal(offsetof(struct famfs_omf_log, last_index), 16);
	assert_int_equal(offsetof(struct famfs_omf_log, crc), 24);
	assert_int_equal(offsetof(struct famfs_omf_log, next_seqnum), 32);
	assert_int_equal(offsetof(struct famfs_omf_log, next_index), 40);
	assert_int_equal(sizeof(struct famfs_omf_entry), 544);
	assert_int_equal(offsetof(struct famfs_omf_entry, type), 8);
	assert_int_equal(offsetof(struct famfs_omf_entry, file), 16);
	assert_int_equal(offsetof(struct famfs_omf_entry, crc), 536);
	assert_int_equal(offsetof(struct famfs_omf_entry, file.relpath), 16 + 24);
	assert_int_equal(offsetof(struct famfs_omf_entry, file.fmap), 16 + 104);
	assert_int_equal(offsetof(struct famfs_omf_entry, file.fmap.simple.se),
			 16 + 104 + 16);
	assert_int_equal(offsetof(struct famfs_omf_entry, mkdir.relpath), 16 + 12);
	assert_int_equal(offsetof(struct famfs_omf_entry, daxdev.index), 16 + 24);
	/* an 8 MiB log holds 15420 entries, last index 15419, as upstream */
	assert_int_equal(famfs_log_slots(8 * 1024 * 1024), 15420);
}

static void checksums(void **state)
{
	struct famfs_omf_superblock sb;
	struct famfs_omf_log log;

	(void)state;
	famfs_log_init(&log, 8 * 1024 * 1024);
	assert_int_equal(log.last_index, 15419);
	assert_int_equal(log.crc, 0xa5875078);

	memset(&sb, 0, sizeof(sb));
	sb.magic = FAMFS_SUPER_MAGIC;
	sb.version = 48;
	sb.log_offset = 0x200000;
	sb.log_len = 0x800000;
	sb.alloc_unit = 0x200000;
	sb.omf_major = 2;
	sb.omf_minor = 2;
	memset(sb.fs_uuid, 0x11, 16);
	memset(sb.dev_uuid, 0x22, 16);
	memset(sb.system_uuid, 0x33, 16);
	assert_int_equal(famfs_sb_crc(&sb), 0x3ee484f3);
	/* fields after the CRC are not covered */
	sb.flags = 7;
	sb.daxdev.size = 123;
	assert_int_equal(famfs_sb_crc(&sb), 0x3ee484f3);

	/* upstream's format allows a 4 KiB allocation unit, nothing else */
	sb.flags = FAMFS_SB_PRIMARY;
	sb.daxdev.size = 1ULL << 30;
	sb.crc = famfs_sb_crc(&sb);
	assert_int_equal(famfs_sb_check(&sb, 1ULL << 30), 0);
	sb.alloc_unit = 4096;
	sb.crc = famfs_sb_crc(&sb);
	assert_int_equal(famfs_sb_check(&sb, 1ULL << 30), 0);
	sb.alloc_unit = 8192;
	sb.crc = famfs_sb_crc(&sb);
	assert_int_equal(famfs_sb_check(&sb, 1ULL << 30), -EUCLEAN);
}

/*
 * What the tools print of a name is UTF-8 without control characters:
 * escapes for those and for every byte that is not UTF-8, the rest as is.
 */
static void escape_prints_utf8_only(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "a\\b", "a\\\\b" },
		{ "nl\n<0>x", "nl\\n<0>x" },
		{ "esc\x1b[2J", "esc\\x1b[2J" },
		{ "c1\xc2\x9b", "c1\\xc2\\x9b" },
		{ "\xc3\xbc\xe5\x90\x8d", "\xc3\xbc\xe5\x90\x8d" },
		{ "s\xff\xfe", "s\\xff\\xfe" },
		{ "cut\xe5\x90", "cut\\xe5\\x90" },
		{ "over\xc0\xaf", "over\\xc0\\xaf" },
		{ "sur\xed\xa0\x80", "sur\\xed\\xa0\\x80" },
		{ "big\xf4\x90\x80\x80", "big\\xf4\\x90\\x80\\x80" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_string_equal(famfs_escape(cases[i].in, buf, sizeof(buf)),
				    cases[i].out);
		assert_true(famfs_utf8_valid(buf));
		/* the first six are UTF-8 (control characters included) */
		assert_int_equal(famfs_utf8_valid(cases[i].in), i < 6);
	}
	/* truncated at a whole character, never inside an escape */
	assert_string_equal(famfs_escape("ab\xff", buf, 4), "ab");
}

#define MiB (1024ULL * 1024)

/* A valid primary superblock of a 1 GiB device, CRC and all. */
static struct famfs_omf_superblock good_sb(void)
{
	struct famfs_omf_superblock sb;

	memset(&sb, 0, sizeof(sb));
	sb.magic = FAMFS_SUPER_MAGIC;
	sb.version = FAMFS_SB_VERSION;
	sb.log_offset = FAMFS_LOG_OFFSET;
	sb.log_len = FAMFS_LOG_MIN_LEN;
	sb.alloc_unit = FAMFS_ALLOC_UNIT;
	sb.omf_major = 2;
	sb.omf_minor = 2;
	memset(sb.fs_uuid, 0x11, 16);
	memset(sb.dev_uuid, 0x22, 16);
	sb.flags = FAMFS_SB_PRIMARY;
	sb.daxdev.size = 1ULL << 30;
	sb.crc = famfs_sb_crc(&sb);
	return sb;
}

/*
 * Each field a superblock from another host could get wrong is refused on
 * its own, with the errno and words that say which: a device smaller than
 * the superblock says, a recorded size smaller than the log, a log that
 * is not a power of two or not where the format puts it.
 */
static void every_superblock_field_is_checked(void **state)
{
	struct famfs_omf_superblock sb;
	const uint64_t dev = 1ULL << 30;

	(void)state;
	sb = good_sb();
	assert_int_equal(famfs_sb_check(&sb, dev), 0);
	sb.alloc_unit = 4096; /* not covered by the CRC check: it must fail */
	assert_int_equal(famfs_sb_check(&sb, dev), -EBADMSG);
	assert_non_null(strstr(famfs_errmsg(), "CRC mismatch"));

	sb = good_sb();
	sb.version = 47;
	sb.crc = famfs_sb_crc(&sb);
	assert_int_equal(famfs_sb_check(&sb, dev), -EPROTO);

	sb = good_sb();
	sb.log_offset = 0x100000;
	sb.crc = famfs_sb_crc(&sb);
	assert_int_equal(famfs_sb_check(&sb, dev), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "log offset"));

	sb = good_sb();
	sb.log_len = 12 * MiB; /* >= 8 MiB, not a power of two */
	sb.crc = famfs_sb_crc(&sb);
	assert_int_equal(famfs_sb_check(&sb, dev), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "log length"));

	/* the device ends inside the log */
	sb = good_sb();
	sb.daxdev.size = 8 * MiB;
	assert_int_equal(famfs_sb_check(&sb, 8 * MiB), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "the log ends at byte 10485760"));

	/* the device is smaller than the superblock records */
	sb = good_sb();
	assert_int_equal(famfs_sb_check(&sb, dev - 2 * MiB), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "the superblock records"));
	sb.daxdev.size = dev - 2 * MiB; /* after the CRC: no new CRC */
	assert_int_equal(famfs_sb_check(&sb, dev - 2 * MiB), 0);

	/* a recorded size that leaves no room for the log */
	sb = good_sb();
	sb.daxdev.size = 4 * MiB;
	assert_int_equal(famfs_sb_check(&sb, dev), -EUCLEAN);
	assert_non_null(strstr(famfs_errmsg(), "smaller than superblock and log"));
	sb.daxdev.size = FAMFS_LOG_OFFSET + FAMFS_LOG_MIN_LEN; /* just fits */
	assert_int_equal(famfs_sb_check(&sb, dev), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(superblock_layout),
		cmocka_unit_test(log_layout),
		cmocka_unit_test(checksums),
		cmocka_unit_test(escape_prints_utf8_only),
		cmocka_unit_test(every_superblock_field_is_checked),
	};

	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
