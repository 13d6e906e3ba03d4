// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fused-rawreq [--session] DEVICE [famfs] < REQUESTS > REPLIES
 *
 * Test hook: loads DEVICE's namespace as the daemon does and feeds raw
 * FUSE requests (header and body, as the kernel would send them) to the
 * daemon's code; writes the raw replies. This is how the famfs protocol
 * extension is checked on hosts without the famfs kernel module. "famfs"
 * lets the daemon accept famfs mode, as for a devdax device.
 *
 * Plain: one request, handed to the famfs request handler (GET_FMAP,
 * GET_DAXDEV); exit 3 when it does not claim the request.
 * --session: a stream of requests through a real libfuse session with the
 * daemon's connection hooks on a socket pair, as on /dev/fuse: INIT
 * goes through libfuse and our INIT reply patch, famfs opcodes through
 * our receive hook. Every reply is written, in order.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fused.h"

/* The daemon's readiness report; nobody waits for it here. */
void fused_ready(struct fused *fs, const char *err)
{
	(void)fs;
	(void)err;
}

static uint8_t in[1 << 20], out[1 << 20];

static int session(struct fused *fs, size_t inlen)
{
	char *argv[] = { "fused-rawreq", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct fuse_buf buf = { 0 };
	size_t pos = 0;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
		return 1;
	fs->se = fuse_session_new(&args, &fused_ops, sizeof(fused_ops), fs);
	fuse_opt_free_args(&args); /* libfuse may have added to them */
	if (!fs->se || famfs_ext_attach(fs, fs->se, sv[0]) < 0)
		return 1;
	fs->fuse_fd = sv[0];
	while (pos + sizeof(struct fuse_in_header) <= inlen) {
		struct fuse_in_header ih;
		ssize_t n;
		int res;

		memcpy(&ih, in + pos, sizeof(ih));
		if (ih.len < sizeof(ih) || ih.len > inlen - pos)
			return 2;
		if (write(sv[1], in + pos, ih.len) != (ssize_t)ih.len)
			return 1;
		pos += ih.len;
		res = fuse_session_receive_buf(fs->se, &buf);
		if (res > 0)
			fuse_session_process_buf(fs->se, &buf);
		else if (res != -EAGAIN)
			return 1;
		/* Each request we feed gets exactly one reply. */
		n = recv(sv[1], out, sizeof(out), MSG_DONTWAIT);
		if (n > 0 && write(STDOUT_FILENO, out, (size_t)n) != n)
			return 1;
	}
	free(buf.mem);
	fuse_session_destroy(fs->se); /* closes sv[0] */
	close(sv[1]);
	return 0;
}

int main(int argc, char **argv)
{
	static struct fused fs;
	bool sess = argc > 1 && !strcmp(argv[1], "--session");
	size_t inlen = 0, outlen;
	ssize_t n;

	argv += sess;
	argc -= sess;
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: fused-rawreq [--session] DEVICE [famfs] < REQUESTS > REPLIES\n");
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
	fs.role = famfs_role(&fs.dev);
	fs.readonly = true;
	fs.allow_famfs = argc == 3 && !strcmp(argv[2], "famfs");
	fs.module_dev = fs.allow_famfs; /* as on /dev/famfs-fuse */
	fs.famfs_mode = fs.allow_famfs; /* plain mode: as after INIT */
	snprintf(fs.mountpoint, sizeof(fs.mountpoint), "(none)");
	while ((n = read(STDIN_FILENO, in + inlen, sizeof(in) - inlen)) > 0)
		inlen += (size_t)n;
	if (sess) {
		fs.famfs_mode = false; /* decided by INIT */
		return session(&fs, inlen);
	}
	outlen = famfs_ext_request(&fs, in, inlen, out, sizeof(out));
	if (!outlen)
		return 3;
	if (write(STDOUT_FILENO, out, outlen) != (ssize_t)outlen)
		return 1;
	return 0;
}
