// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * famfs chkread: read a file with read(2) and through mmap and compare.
 * The two take different paths (READ requests or the kernel's dax read
 * path, against page faults), so a difference points at a mapping bug.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: famfs chkread [-s | -l] FILE\n"
		"\n"
		"Read FILE whole with read(2) and again through mmap, and compare the\n"
		"two. In a famfs these take different paths to the memory, so this is a\n"
		"quick test of the mount's data path.\n"
		"\n"
		"Options:\n"
		"  -s             FILE is a famfs superblock (.meta/.superblock): also\n"
		"                 decode it from both copies\n"
		"  -l             FILE is a famfs log (.meta/.log): also decode its header\n"
		"                 from both copies\n"
		"  -h, -?, --help show this help\n"
		"\n"
		"Exit status:\n"
		"  0  both reads returned the same bytes\n"
		"  1  they differ, or the file could not be read or mapped\n"
		"  2  usage error\n");
}

static void show_sb(const char *how, const void *p, uint64_t len)
{
	const struct famfs_omf_superblock *sb = p;
	char u[37];

	if (len < sizeof(*sb)) {
		printf("superblock by %s: only %llu bytes\n", how,
		       (unsigned long long)len);
		return;
	}
	famfs_uuid_str(sb->fs_uuid, u);
	printf("superblock by %s: magic 0x%llx version %llu log 0x%llx+%llu uuid %s crc %s\n",
	       how, (unsigned long long)sb->magic,
	       (unsigned long long)sb->version,
	       (unsigned long long)sb->log_offset,
	       (unsigned long long)sb->log_len, u,
	       famfs_sb_crc(sb) == sb->crc ? "good" : "BAD");
}

static void show_log(const char *how, const void *p, uint64_t len)
{
	const struct famfs_omf_log *log = p;

	if (len < sizeof(*log)) {
		printf("log header by %s: only %llu bytes\n", how,
		       (unsigned long long)len);
		return;
	}
	printf("log header by %s: magic 0x%llx len %llu last_index %llu next_index %llu crc %s\n",
	       how, (unsigned long long)log->magic, (unsigned long long)log->len,
	       (unsigned long long)log->last_index,
	       (unsigned long long)log->next_index,
	       famfs_log_header_crc(log) == log->crc ? "good" : "BAD");
}

/* All @size bytes of @fd by read(2); -1 after saying where it stopped. */
static int read_all(int fd, const char *name, uint8_t *buf, uint64_t size)
{
	uint64_t got = 0;

	while (got < size) {
		ssize_t n = pread(fd, buf + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "famfs chkread: %s: read stopped at %llu of %llu bytes: %s\n",
				name, (unsigned long long)got,
				(unsigned long long)size,
				n ? strerror(errno) : "end of file");
			return -1;
		}
		got += (uint64_t)n;
	}
	return 0;
}

/* Read and map all of @fd and compare the two; the exit code. */
static int read_and_map(int fd, const char *name, uint64_t size,
			bool is_sb, bool is_log)
{
	uint8_t *buf = malloc(size), *map;
	int rc = CLI_FAIL;
	uint64_t i = 0;

	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (!buf || map == MAP_FAILED) {
		fprintf(stderr, "famfs chkread: %s: %s\n", name,
			!buf ? "out of memory" : strerror(errno));
		goto out;
	}
	if (read_all(fd, name, buf, size))
		goto out;
	if (is_sb) {
		show_sb("read", buf, size);
		show_sb("mmap", map, size);
	}
	if (is_log) {
		show_log("read", buf, size);
		show_log("mmap", map, size);
	}
	if (memcmp(buf, map, size)) {
		while (buf[i] == map[i])
			i++;
		fprintf(stderr, "famfs chkread: %s: read and mmap differ at byte %llu\n",
			name, (unsigned long long)i);
		goto out;
	}
	printf("famfs chkread: %s: read and mmap agree on all %llu bytes\n",
	       name, (unsigned long long)size);
	rc = CLI_OK;
out:
	if (map != MAP_FAILED)
		munmap(map, size);
	free(buf);
	return rc;
}

int cmd_chkread(int argc, char **argv)
{
	bool is_sb = false, is_log = false;
	const struct tool_opt opts[] = {
		OPT_FLAG('s', "superblock", &is_sb),
		OPT_FLAG('l', "log", &is_log),
		OPT_HELP_ALL,
		OPT_END,
	};
	const char *name;
	struct stat st;
	int fd, rc;

	rc = cli_parse_opts(argc, argv, opts, usage, CLI_OK, CLI_USAGE);
	if (rc >= 0)
		return rc;
	rc = CLI_FAIL;
	if (optind != argc - 1 || (is_sb && is_log)) {
		fprintf(stderr, "famfs chkread: %s\n",
			is_sb && is_log ? "-s and -l exclude each other" :
					  "give exactly one FILE");
		return cli_usage_error(CLI_USAGE);
	}
	name = argv[optind];
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "famfs chkread: %s: %s\n", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return CLI_FAIL;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "famfs chkread: %s is not a regular file\n", name);
	} else if (!st.st_size) {
		printf("famfs chkread: %s is empty; nothing to compare\n", name);
		rc = CLI_OK;
	} else {
		rc = read_and_map(fd, name, (uint64_t)st.st_size, is_sb,
				  is_log);
	}
	close(fd);
	return rc;
}
