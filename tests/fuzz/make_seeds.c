// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Write a small seed corpus of valid inputs for the three harnesses into
 * DIR/{superblock,log,fmap}/, made with the library itself so the seeds
 * follow the format as it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libfamfs.h"

static void put(const char *dir, const char *sub, const char *name,
		const void *a, size_t alen, const void *b, size_t blen)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%s/%s", dir, sub, name);
	f = fopen(p, "w");
	if (!f || fwrite(a, 1, alen, f) != alen ||
	    (blen && fwrite(b, 1, blen, f) != blen) || fclose(f)) {
		perror(p);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	enum { N = 5 };
	static uint8_t logbuf[sizeof(struct famfs_omf_log) +
			      N * sizeof(struct famfs_omf_entry)];
	struct famfs_omf_log *log = (struct famfs_omf_log *)logbuf;
	struct famfs_omf_entry *e = (struct famfs_omf_entry *)(log + 1);
	struct famfs_omf_superblock sb;
	uint64_t dev = 1ULL << 30, fsize = 5ULL << 20;

	if (argc != 2) {
		fprintf(stderr, "usage: make_seeds DIR\n");
		return 2;
	}
	mkdir(argv[1], 0755);

	memset(&sb, 0, sizeof(sb));
	sb.magic = FAMFS_SUPER_MAGIC;
	sb.version = FAMFS_SB_VERSION;
	sb.log_offset = FAMFS_LOG_OFFSET;
	sb.log_len = FAMFS_LOG_MIN_LEN;
	sb.alloc_unit = FAMFS_ALLOC_UNIT;
	sb.omf_major = FAMFS_OMF_MAJOR;
	sb.omf_minor = FAMFS_OMF_MINOR;
	sb.daxdev.size = dev;
	sb.crc = famfs_sb_crc(&sb);
	put(argv[1], "superblock", "valid", &sb, sizeof(sb), &dev, sizeof(dev));

	famfs_log_init(log, sizeof(logbuf));
	memset(e, 0, N * sizeof(*e));
	e[0].type = FAMFS_ENTRY_MKDIR;
	strcpy(e[0].mkdir.relpath, "dir");
	e[0].mkdir.mode = 0755;
	e[1].type = FAMFS_ENTRY_FILE;
	strcpy(e[1].file.relpath, "dir/simple");
	e[1].file.size = fsize;
	e[1].file.fmap.ext_type = FAMFS_EXT_SIMPLE;
	e[1].file.fmap.simple.nextents = 2;
	e[1].file.fmap.simple.se[0].offset = 10ULL << 20;
	e[1].file.fmap.simple.se[0].len = 4ULL << 20;
	e[1].file.fmap.simple.se[1].offset = 20ULL << 20;
	e[1].file.fmap.simple.se[1].len = 2ULL << 20;
	e[2].type = FAMFS_ENTRY_FILE;
	strcpy(e[2].file.relpath, "striped");
	e[2].file.size = 3 * (4ULL << 20);
	e[2].file.fmap.ext_type = FAMFS_EXT_INTERLEAVE;
	e[2].file.fmap.interleave.niext = 1;
	e[2].file.fmap.interleave.ie[0].nstrips = 3;
	e[2].file.fmap.interleave.ie[0].chunk_size = 2ULL << 20;
	for (int i = 0; i < 3; i++) {
		e[2].file.fmap.interleave.ie[0].strips[i].offset =
			(100ULL + 100 * (uint64_t)i) << 20;
		e[2].file.fmap.interleave.ie[0].strips[i].len = 4ULL << 20;
	}
	/* a second device, and a file on it */
	e[3].type = FAMFS_ENTRY_ADD_DAXDEV;
	e[3].daxdev.index = 1;
	e[3].daxdev.size = 256ULL << 20;
	memset(e[3].daxdev.uuid, 0x5a, sizeof(e[3].daxdev.uuid));
	e[4].type = FAMFS_ENTRY_FILE;
	strcpy(e[4].file.relpath, "second");
	e[4].file.size = 2ULL << 20;
	e[4].file.fmap.ext_type = FAMFS_EXT_SIMPLE;
	e[4].file.fmap.simple.nextents = 1;
	e[4].file.fmap.simple.se[0].devindex = 1;
	e[4].file.fmap.simple.se[0].offset = 2ULL << 20;
	e[4].file.fmap.simple.se[0].len = 2ULL << 20;
	for (int i = 0; i < N; i++) {
		e[i].seqnum = (uint64_t)i;
		e[i].crc = famfs_entry_crc(&e[i]);
	}
	log->next_index = N;
	log->next_seqnum = N;
	put(argv[1], "log", "valid", logbuf, sizeof(logbuf), NULL, 0);

	put(argv[1], "fmap", "simple", &e[1].file.fmap, sizeof(e[1].file.fmap),
	    &fsize, sizeof(fsize));
	put(argv[1], "fmap", "striped", &e[2].file.fmap, sizeof(e[2].file.fmap),
	    &e[2].file.size, sizeof(fsize));
	put(argv[1], "fmap", "second", &e[4].file.fmap, sizeof(e[4].file.fmap),
	    &e[4].file.size, sizeof(fsize));
	return 0;
}
