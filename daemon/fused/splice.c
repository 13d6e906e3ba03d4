// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fallback-mode reads from an image file by splice: the reply to a READ
 * names pieces of the image file (its descriptor and a device offset per
 * piece) instead of bytes in our mapping, and libfuse splices them from
 * the image's page cache into /dev/fuse. The daemon then never touches
 * the bytes: no copy through its mapping, no pinning of its pages.
 *
 * Each piece is resolved from the file's extents and clipped to the file
 * and the device, exactly as the copying path does; a read that needs
 * more pieces than a reply holds is left to that path.
 *
 * Two things the copying path gets from SIGBUS come here from sizes: an
 * image file truncated under us makes the splice come up short, which
 * would reach the reader as a short read. So the reply's length is
 * checked on its way to the kernel (fused_splice_send), and a short one
 * is replaced by EIO and the device marked lost.
 *
 * Only where the whole reply fits in a pipe: libfuse sizes its pipe for a
 * reply plus a page per piece and two more, and when it cannot grow it
 * that far it copies the reply twice, slower than our mapping. A pipe
 * may grow to fs.pipe-max-size (1 MiB by default) without
 * CAP_SYS_RESOURCE: then a 1 MiB READ does not fit, and the kernel is
 * asked for READs no larger than what does (two spliced READs for a
 * 1 MiB read(2) beat one copied: bench/README.md); a larger READ, from a
 * kernel that agreed to more before a handover, takes the mapping.
 *
 * Replies that name bytes in our mapping instead (the copying path's
 * fuse_reply_data() and fuse_reply_buf() straight from the device) need
 * the kernel to pin the mapping's pages while it copies them into the
 * reader's: fused_map_pinnable() says whether it can.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fused.h"

/* Pieces of one reply: a file's extents crossed by one read. */
#define SPLICE_PIECES 8

/* The largest READ the kernel sends: 256 pages (FUSE_MAX_MAX_PAGES). */
#define SPLICE_MAX_READ (1U << 20)

/* The reply the read handler has just handed to libfuse. */
static uint64_t expect_len;

/* What libfuse's pipe must hold to splice @len bytes in @pieces pieces. */
static size_t pipe_need(size_t len, size_t pieces)
{
	return (size_t)sysconf(_SC_PAGESIZE) * (pieces + 2) +
	       sizeof(struct fuse_out_header) + len;
}

/* The largest pipe we may make: 2 MiB, or fs.pipe-max-size. */
static size_t pipe_room(void)
{
	int p[2], got;

	if (pipe2(p, O_CLOEXEC) < 0)
		return 0;
	got = fcntl(p[0], F_SETPIPE_SZ, (int)(2 * SPLICE_MAX_READ));
	if (got < 0) /* no CAP_SYS_RESOURCE: fs.pipe-max-size at most */
		got = fcntl(p[0], F_SETPIPE_SZ, SPLICE_MAX_READ);
	if (got < 0)
		got = fcntl(p[0], F_GETPIPE_SZ);
	close(p[0]);
	close(p[1]);
	return got < 0 ? 0 : (size_t)got;
}

const char *fused_splice_setup(struct fused *fs)
{
	struct stat st;

	fs->splice_reads = false;
	if (!fs->splice_allowed)
		return "off (splice=no)";
	if (fs->dev.kind != FAMFS_DEV_FILE || fstat(fs->dev.fd, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return "off (the device is not an image file)";
	fs->splice_pipe = pipe_room();
	if (fs->splice_pipe < pipe_need(2 * (size_t)sysconf(_SC_PAGESIZE), 1))
		return "off (a pipe cannot be made large enough)";
	fs->splice_reads = true;
	return fs->splice_pipe >= pipe_need(SPLICE_MAX_READ, SPLICE_PIECES)
		       ? "on"
		       : "on, requests kept to what a pipe holds (no CAP_SYS_RESOURCE, fs.pipe-max-size)";
}

bool fused_map_pinnable(const struct fused *fs)
{
	struct iovec iov = { .iov_base = fs->dev.base, .iov_len = 1 };
	int p[2];
	ssize_t n;

	if (!fs->dev.base || pipe2(p, O_CLOEXEC) < 0)
		return false;
	/* vmsplice pins the page as writing a reply to /dev/fuse would */
	n = vmsplice(p[1], &iov, 1, 0);
	close(p[0]);
	close(p[1]);
	return n == 1;
}

size_t fused_splice_fit(const struct fused *fs)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;

	if (!fs->splice_reads ||
	    pipe_need(SPLICE_MAX_READ, SPLICE_PIECES) <= fs->splice_pipe)
		return 0;
	len = fs->splice_pipe - pipe_need(0, SPLICE_PIECES);
	return len - len % page;
}

bool fused_read_spliced(fuse_req_t req, struct fused *fs,
			const struct famfs_node *n, size_t size, off_t off)
{
	struct {
		struct fuse_bufvec bv;
		struct fuse_buf more[SPLICE_PIECES - 1];
	} v;
	uint64_t pos = (uint64_t)off, left;
	size_t count = 0;
	int rc;

	/* libfuse would copy a reply under two pages: the mapping is faster */
	if (!fs->splice_reads || size < 2 * (size_t)sysconf(_SC_PAGESIZE) ||
	    pipe_need(size, 1) > fs->splice_pipe)
		return false;
	if (pos >= n->size) {
		fuse_reply_buf(req, NULL, 0);
		return true;
	}
	left = n->size - pos < size ? n->size - pos : size;
	memset(&v, 0, sizeof(v));
	while (left) {
		struct fuse_buf *b = &v.bv.buf[count];
		uint64_t di, dev_off, contig;
		const struct famfs_dev *d;

		if (count == SPLICE_PIECES ||
		    famfs_fmap_resolve(&n->fmap, pos, &di, &dev_off, &contig))
			return false;
		/* missing, or past the device: the copying path answers */
		d = famfs_dev_member(&fs->dev, di);
		if (!d || d->kind != FAMFS_DEV_FILE || dev_off > d->size)
			return false;
		if (contig > left)
			contig = left;
		if (contig > d->size - dev_off)
			return false;
		b->size = (size_t)contig;
		b->flags =
			FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK | FUSE_BUF_FD_RETRY;
		b->fd = d->fd;
		b->pos = (off_t)dev_off;
		count++;
		pos += contig;
		left -= contig;
	}
	if (pipe_need(size, count) > fs->splice_pipe)
		return false;
	v.bv.count = count;
	fs->spliced_reads++;
	expect_len = sizeof(struct fuse_out_header) + fuse_buf_size(&v.bv);
	rc = fuse_reply_data(req, &v.bv, 0);
	expect_len = 0;
	if (rc < 0)
		fused_log(L_ERR, "read of inode %llu: reply by splice: %s",
			  (unsigned long long)n->ino, strerror(-rc));
	return true;
}

/* Take @len bytes out of pipe @fd, into @buf (may be NULL) up to @cap. */
static bool drain(int fd, void *buf, size_t cap, size_t len)
{
	char scratch[65536];

	while (len) {
		char *to = buf && cap ? buf : scratch;
		size_t room = buf && cap ? cap : sizeof(scratch);
		ssize_t got = read(fd, to, len < room ? len : room);

		if (got <= 0)
			return false;
		if (buf && cap) {
			buf = (char *)buf + got;
			cap -= (size_t)got;
		}
		len -= (size_t)got;
	}
	return true;
}

/*
 * Fewer bytes than the file holds there: the image shrank between our
 * check and the splice (or libfuse's read when it could not splice). The
 * reader gets EIO, never a short read. @oh is the reply's header.
 */
static bool answer_eio(struct fused *fs, int fd, struct fuse_out_header oh,
		       size_t len)
{
	fused_dev_lost(fs);
	fused_log(L_ERR, "read from the image came up short (%zu of %llu bytes): answering EIO",
		  len, (unsigned long long)expect_len);
	oh.len = sizeof(oh);
	oh.error = -EIO;
	return write(fd, &oh, sizeof(oh)) == (ssize_t)sizeof(oh);
}

ssize_t fused_splice_short(struct fused *fs, int fd, const struct iovec *iov,
			   int count)
{
	struct fuse_out_header oh;
	size_t len = 0;

	for (int i = 0; i < count; i++)
		len += iov[i].iov_len;
	if (!expect_len || len == expect_len || count < 1 ||
	    iov[0].iov_len < sizeof(oh))
		return 0;
	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	if (!answer_eio(fs, fd, oh, len))
		fused_log(L_WARN, "EIO reply to request %llu not delivered: %s",
			  (unsigned long long)oh.unique, strerror(errno));
	return (ssize_t)len;
}

ssize_t fused_splice_send(int fdin, off_t *offin, int fdout, off_t *offout,
			  size_t len, unsigned int flags, void *userdata)
{
	struct fuse_out_header oh;

	if (!expect_len || len == expect_len)
		return splice(fdin, offin, fdout, offout, len, flags);
	if (len < sizeof(oh) || !drain(fdin, &oh, sizeof(oh), len) ||
	    !answer_eio(userdata, fdout, oh, len)) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)len;
}
