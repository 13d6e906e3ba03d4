// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fused-rawreq DEVICE < REQUEST > REPLY
 *
 * Test hook: loads DEVICE's namespace as the daemon does, hands one raw
 * FUSE request (header and body, as the kernel would send it) to the
 * daemon's famfs request handler and writes the raw reply. This is how
 * GET_FMAP and GET_DAXDEV are checked on hosts without the famfs kernel
 * module. Exit 3: the handler did not claim the request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fused.h"

/* The daemon's readiness report; nobody waits for it here. */
void fused_ready(struct fused *fs, const char *err)
{
	(void)fs;
	(void)err;
}

int main(int argc, char **argv)
{
	static struct fused fs;
	static uint8_t in[1 << 16], out[1 << 16];
	size_t inlen = 0, outlen;
	ssize_t n;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: fused-rawreq DEVICE [famfs] < REQUEST > REPLY\n");
		return 2;
	}
	fused_log_init(false, NULL);
	if (!realpath(argv[1], fs.devpath) ||
	    famfs_dev_open_fs(argv[1], 0, &fs.dev)) {
		fprintf(stderr, "fused-rawreq: %s: %s\n", argv[1],
			famfs_errmsg());
		return 1;
	}
	if (fused_load(&fs)) {
		fprintf(stderr, "fused-rawreq: %s\n", famfs_errmsg());
		return 1;
	}
	fs.famfs_mode = argc == 3 && !strcmp(argv[2], "famfs");
	while ((n = read(STDIN_FILENO, in + inlen, sizeof(in) - inlen)) > 0)
		inlen += (size_t)n;
	outlen = famfs_ext_request(&fs, in, inlen, out, sizeof(out));
	if (!outlen)
		return 3;
	if (write(STDOUT_FILENO, out, outlen) != (ssize_t)outlen)
		return 1;
	return 0;
}
