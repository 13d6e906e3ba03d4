// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The FUSE ceiling for bench/fallback_read.sh: a server with one file,
 * "big", whose READs are answered at once from the file's bytes in its
 * own memory (SIZE_MIB of it, touched before mounting), the way
 * famfs-fused answers a client's READ (direct I/O, requests as large as
 * the daemon asks for) but with nothing looked up, checked or spliced.
 * What a read through it costs beyond a plain read is what FUSE itself
 * costs per request on this host: the part of famfs-fused's fallback
 * reads no daemon change can remove.
 *
 * It also accepts mkdir, create, write, setattr, flush and release and
 * keeps nothing, with famfs-fused's cache lifetimes for each (a new
 * file's name never cached, its attributes for 1 s, a directory's 10 s):
 * the ceiling for bench/meta.py's tar -x into the master's mount, and in
 * the guest (bench/vm/90-bench.sh) for tar -x and cp. Like famfs-fused it
 * gives the files it makes the largest request as st_blksize.
 *
 * Usage: famfs-bench-fuse-null MOUNTPOINT SIZE_MIB MAX_KIB THREADS [OPTIONS]
 * (THREADS 1: libfuse's single-threaded loop; more: its multi-threaded
 * loop, at most that many threads, each with its own /dev/fuse clone).
 * OPTIONS go to libfuse as -o OPTIONS: "default_permissions" makes the
 * kernel check permissions as it does for famfs-fused, which costs
 * requests of its own (a directory's attributes, fetched again after
 * each create on kernels that drop them all).
 * Runs in the foreground until unmounted.
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BIG_INO 2
/* inodes made by mkdir carry this bit, those by create do not */
#define DIR_BIT (1ULL << 62)

static uint64_t big_size;
static unsigned int max_bytes;
static char *data;
static uint64_t next_ino = 16;

static void null_init(void *ud, struct fuse_conn_info *conn)
{
	(void)ud;
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE);
	conn->max_write = max_bytes; /* libfuse derives max_pages from it */
}

static void attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = 1;
	if (ino == FUSE_ROOT_ID || (ino & DIR_BIT)) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == BIG_INO) {
		st->st_mode = S_IFREG | 0444;
		st->st_size = (off_t)big_size;
	} else {
		st->st_mode = S_IFREG | 0644;
		/* as famfs-fused: cp writes this much per request */
		st->st_blksize = max_bytes;
	}
}

static void null_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID || strcmp(name, "big")) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = BIG_INO;
	e.attr_timeout = e.entry_timeout = 3600;
	attr(BIG_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void null_getattr(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	attr(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void null_open(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi)
{
	if (ino != BIG_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fi->direct_io = 1; /* as a famfs client's reads */
	fuse_reply_open(req, fi);
}

static void null_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	if ((uint64_t)off >= big_size)
		size = 0;
	else if (size > big_size - (uint64_t)off)
		size = (size_t)(big_size - (uint64_t)off);
	if (size > max_bytes)
		size = max_bytes;
	fuse_reply_buf(req, data + off, size);
}

static void null_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		       mode_t mode)
{
	struct fuse_entry_param e;

	(void)parent;
	(void)name;
	(void)mode;
	memset(&e, 0, sizeof(e));
	e.ino = next_ino++ | DIR_BIT;
	e.attr_timeout = e.entry_timeout = 10;
	attr(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void null_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;

	(void)parent;
	(void)name;
	(void)mode;
	memset(&e, 0, sizeof(e));
	e.ino = next_ino++;
	e.attr_timeout = 1;
	attr(e.ino, &e.attr);
	fi->direct_io = 1;
	fuse_reply_create(req, &e, fi);
}

static void null_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *set,
			 int to_set, struct fuse_file_info *fi)
{
	struct stat st;

	(void)set;
	(void)to_set;
	(void)fi;
	attr(ino, &st);
	fuse_reply_attr(req, &st, (ino & DIR_BIT) ? 10 : 0);
}

static void null_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		       size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	(void)buf;
	(void)off;
	(void)fi;
	fuse_reply_write(req, size);
}

static void null_done(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops ops = {
	.init = null_init,
	.lookup = null_lookup,
	.getattr = null_getattr,
	.open = null_open,
	.read = null_read,
	.mkdir = null_mkdir,
	.create = null_create,
	.setattr = null_setattr,
	.write = null_write,
	.flush = null_done,
	.release = null_done,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], "-o", "fsname=famfs-bench-null", "-o",
			  argc == 6 ? argv[5] : NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(argc == 6 ? 5 : 3, fargv);
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	unsigned int threads;
	int rc;

	if (argc != 5 && argc != 6) {
		fprintf(stderr,
			"usage: %s MOUNTPOINT SIZE_MIB MAX_KIB THREADS [OPTIONS]\n",
			argv[0]);
		return 2;
	}
	big_size = strtoull(argv[2], NULL, 10) << 20;
	max_bytes = (unsigned int)strtoul(argv[3], NULL, 10) << 10;
	threads = (unsigned int)strtoul(argv[4], NULL, 10);
	data = malloc(big_size);
	if (!big_size || !max_bytes || !threads || !data)
		return 2;
	memset(data, 0x5a, big_size);
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se || fuse_session_mount(se, argv[1]))
		return 1;
	if (threads == 1) {
		rc = fuse_session_loop(se);
	} else {
		cfg = fuse_loop_cfg_create();
		fuse_loop_cfg_set_clone_fd(cfg, 1);
		fuse_loop_cfg_set_max_threads(cfg, threads);
		fuse_loop_cfg_set_idle_threads(cfg, threads);
		rc = fuse_session_loop_mt(se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	return rc ? 1 : 0;
}
