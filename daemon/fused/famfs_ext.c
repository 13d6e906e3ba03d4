// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The famfs extension of the FUSE protocol, on a stock libfuse that knows
 * nothing of it. libfuse lets a server supply its own read and writev for
 * the connection (fuse_session_custom_io); we use them to
 *  - answer FUSE_GET_FMAP and FUSE_GET_DAXDEV ourselves, before libfuse
 *    sees them (it would answer ENOSYS), and
 *  - accept FUSE_DAX_FMAP in the INIT reply: libfuse 3.14 has no way to
 *    set flags2 bit 11, so we add it to the reply on its way out; the
 *    same for FUSE_DIRECT_IO_ALLOW_MMAP (flags2 bit 4), which 3.14 does
 *    not know either.
 * Everything else passes through unchanged. This is the only file that
 * knows the wire layout beyond what libfuse exposes.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "famfs_fuse_abi.h"
#include "fmap_msg.h"
#include "fused.h"
#include "takeover.h"

/* Linux 6.6; bookworm's headers predate it. */
#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36)
#endif

static size_t reply_err(const struct fuse_in_header *ih, int err, void *out)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh),
		.error = -err,
		.unique = ih->unique,
	};

	memcpy(out, &oh, sizeof(oh));
	return sizeof(oh);
}

static size_t reply_ok(const struct fuse_in_header *ih, void *out,
		       size_t payload)
{
	struct fuse_out_header oh = {
		.len = (uint32_t)(sizeof(oh) + payload),
		.unique = ih->unique,
	};

	memcpy(out, &oh, sizeof(oh));
	return oh.len;
}

/*
 * GET_FMAP: the map of the file @ih->nodeid. Directories and .status
 * have none: ENODATA tells the kernel to serve them as plain FUSE files.
 */
static size_t get_fmap(struct fused *fs, const struct fuse_in_header *ih,
		       uint8_t *out, size_t outsz)
{
	uint8_t *payload = out + sizeof(struct fuse_out_header);
	size_t room = outsz - sizeof(struct fuse_out_header);
	const struct famfs_node *n;
	struct famfs_omf_fmap meta;
	const struct famfs_omf_fmap *fm;
	unsigned int type = FUSE_FAMFS_FILE_REG;
	uint64_t size;
	ssize_t len;

	fs->get_fmaps++;
	if (room > FAMFS_FMAP_MAX)
		room = FAMFS_FMAP_MAX;
	if (fused_is_meta(ih->nodeid)) {
		if (fused_meta_fmap(fs, ih->nodeid, &meta, &size))
			return reply_err(ih, ENODATA, out);
		fm = &meta;
		type = ih->nodeid == FUSED_META_LOG_INO ?
			       FUSE_FAMFS_FILE_LOG :
			       FUSE_FAMFS_FILE_SUPERBLOCK;
	} else if (fused_is_stage(ih->nodeid)) {
		if (fused_stage_fmap(fs, ih->nodeid, &meta, &size))
			return reply_err(ih, ENOENT, out);
		fm = &meta;
	} else if (fused_is_pending(ih->nodeid)) {
		/* being written through the mount: we serve its bytes */
		return reply_err(ih, ENODATA, out);
	} else {
		n = famfs_ns_get(&fs->ns, ih->nodeid);
		if (!n)
			return reply_err(ih, ENOENT, out);
		if (n->is_dir)
			return reply_err(ih, ENODATA, out);
		if (n->overlaps)
			return reply_err(ih, EUCLEAN, out);
		fm = &n->fmap;
		size = n->size;
	}
	len = famfs_fmap_msg_encode(type, fm, size, payload, room);
	if (len < 0) {
		fused_log(L_ERR, "GET_FMAP of inode %llu: its map cannot be sent (%s)",
			  (unsigned long long)ih->nodeid, strerror((int)-len));
		return reply_err(ih, (int)-len, out);
	}
	return reply_ok(ih, out, (size_t)len);
}

/*
 * GET_DAXDEV: the device of an index the log has added, by the name it has
 * on this host; ENODEV for one that is missing here, so that only the
 * files on it fail. Our kernel names the index in a fuse_get_daxdev_in body; upstream's
 * series sends no body and carries the index in the header's nodeid.
 */
static size_t get_daxdev(struct fused *fs, const struct fuse_in_header *ih,
			 const uint8_t *body, size_t bodylen, uint8_t *out,
			 size_t outsz)
{
	struct fuse_get_daxdev_in in;
	const struct famfs_dev *dev;
	struct fuse_daxdev_out d;
	const char *name;
	uint64_t index;

	fs->get_daxdevs++;
	if (bodylen == 0) {
		index = ih->nodeid;
	} else if (bodylen >= sizeof(in)) {
		memcpy(&in, body, sizeof(in));
		index = in.daxdev_num;
	} else {
		return reply_err(ih, EINVAL, out);
	}
	if (index >= famfs_geo_ndevs(&fs->g))
		return reply_err(ih, EINVAL, out);
	dev = famfs_dev_member(&fs->dev, index);
	if (!dev) {
		fused_log(L_ERR, "GET_DAXDEV %llu: that device of this famfs is missing on this host",
			  (unsigned long long)index);
		return reply_err(ih, ENODEV, out);
	}
	name = index ? dev->path : fs->devpath;
	if (outsz < sizeof(struct fuse_out_header) + sizeof(d))
		return reply_err(ih, ENOSPC, out);
	memset(&d, 0, sizeof(d));
	d.index = (uint16_t)index;
	/* A longer path cannot be named: refuse rather than cut it. */
	if (strlen(name) >= sizeof(d.name))
		return reply_err(ih, ENAMETOOLONG, out);
	memcpy(d.name, name, strlen(name));
	memcpy(out + sizeof(struct fuse_out_header), &d, sizeof(d));
	return reply_ok(ih, out, sizeof(d));
}

size_t famfs_ext_request(struct fused *fs, const void *in, size_t inlen,
			 void *out, size_t outsz)
{
	struct fuse_in_header ih;
	const uint8_t *body = (const uint8_t *)in + sizeof(ih);

	if (inlen < sizeof(ih) || outsz < sizeof(struct fuse_out_header))
		return 0;
	memcpy(&ih, in, sizeof(ih));
	if (ih.len < sizeof(ih) || ih.len > inlen)
		return 0;
	/* Opcodes 54 and 55 are famfs's only in famfs mode. */
	if (!fs->famfs_mode)
		return 0;
	switch (ih.opcode) {
	case FUSE_GET_FMAP:
		return get_fmap(fs, &ih, out, outsz);
	case FUSE_GET_DAXDEV:
		return get_daxdev(fs, &ih, body, ih.len - sizeof(ih), out,
				  outsz);
	default:
		return 0;
	}
}

/*
 * The famfs module registers its device as misc "famfs-fuse", whose number
 * sysfs gives: compared by number, so neither a node of another name nor
 * the stock /dev/fuse passes.
 */
bool famfs_ext_module_fd(int fd)
{
	unsigned int maj, min;
	struct stat st;
	bool ours;
	FILE *f;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return false;
	f = fopen("/sys/class/misc/famfs-fuse/dev", "re");
	if (!f)
		return false;
	ours = fscanf(f, "%u:%u", &maj, &min) == 2 &&
	       st.st_rdev == makedev(maj, min);
	fclose(f);
	return ours;
}

/* INIT is on its way to libfuse: note whether famfs mode is on offer. */
static void saw_init(struct fused *fs, const struct fuse_in_header *ih,
		     const uint8_t *body, size_t bodylen)
{
	struct fuse_init_in init;

	memset(&init, 0, sizeof(init));
	memcpy(&init, body,
	       bodylen < sizeof(init) ? bodylen : sizeof(init));
	fs->init_seen = true;
	fs->init_unique = ih->unique;
	/*
	 * The famfs bit is the famfs module's, and moved with protocol 7.46
	 * (famfs_fuse_abi.h): on another device, or a protocol no series
	 * speaks, the same bit is some other feature.
	 */
	fs->dax_fmap = fs->module_dev ? FUSE_DAX_FMAP_FOR_MINOR(init.minor) : 0;
	fs->dax_offered = (init.flags & FUSE_INIT_EXT) &&
			  ((uint64_t)init.flags2 << 32 & fs->dax_fmap);
	fs->famfs_mode = fs->dax_offered && fs->allow_famfs;
	/* Our INIT handler logs this before the reply goes out: decide now. */
	fs->direct_reads =
		fs->readonly && !fs->famfs_mode &&
		(init.flags & FUSE_INIT_EXT) &&
		((uint64_t)init.flags2 << 32 & FUSE_DIRECT_IO_ALLOW_MMAP);
}

static ssize_t ext_read(int fd, void *buf, size_t len, void *userdata)
{
	struct fused *fs = userdata;
	uint8_t out[sizeof(struct fuse_out_header) + FAMFS_FMAP_MAX];
	struct fuse_in_header ih;
	ssize_t n = fused_takeover_feed(buf, len);
	size_t rlen;

	if (!n)
		n = read(fd, buf, len);
	if (n < (ssize_t)sizeof(ih))
		return n;
	fs->requests++;
	memcpy(&ih, buf, sizeof(ih));
	if (ih.opcode == FUSE_INIT) {
		saw_init(fs, &ih, (uint8_t *)buf + sizeof(ih),
			 (size_t)n - sizeof(ih));
		fused_takeover_note_init(buf, (size_t)n);
		return n;
	}
	rlen = famfs_ext_request(fs, buf, (size_t)n, out, sizeof(out));
	if (!rlen)
		return n;
	/* Answered here; libfuse never sees it. */
	if (write(fd, out, rlen) != (ssize_t)rlen)
		fused_log(L_WARN, "reply to request %llu (opcode %u) not delivered: %s",
			  (unsigned long long)ih.unique, ih.opcode,
			  strerror(errno));
	/* Back to the poll loop (libfuse retries on EAGAIN, silently). */
	errno = EAGAIN;
	return -1;
}

/*
 * Accept FUSE_DAX_FMAP in libfuse's INIT reply when we want famfs mode,
 * and FUSE_DIRECT_IO_ALLOW_MMAP when a read-only mount serves data itself.
 * True when @iov is the (successful) INIT reply.
 */
static bool patch_init_reply(struct fused *fs, struct iovec *iov, int count)
{
	struct fuse_out_header oh;
	struct fuse_init_out *io;
	uint64_t accept = 0;

	if (count < 2 || iov[0].iov_len < sizeof(oh))
		return false;
	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	if (oh.unique != fs->init_unique || oh.error)
		return false;
	fs->init_seen = false;
	if (fs->famfs_mode)
		accept |= fs->dax_fmap;
	if (fs->direct_reads)
		accept |= FUSE_DIRECT_IO_ALLOW_MMAP;
	if (iov[1].iov_len < offsetof(struct fuse_init_out, flags2) +
				     sizeof(io->flags2)) {
		/* An old kernel has no flags2: it cannot be ours. */
		fs->famfs_mode = false;
		fs->direct_reads = false;
		return true;
	}
	if (!accept)
		return true;
	io = iov[1].iov_base;
	io->flags |= FUSE_INIT_EXT;
	io->flags2 |= (uint32_t)(accept >> 32);
	return true;
}

static ssize_t ext_writev(int fd, struct iovec *iov, int count,
			  void *userdata)
{
	struct fused *fs = userdata;
	ssize_t replaced;

	if (fs->init_seen && patch_init_reply(fs, iov, count))
		return fused_takeover_init_reply(fs, fd, iov, count);
	replaced = fused_splice_short(fs, fd, iov, count);
	return replaced ? replaced : writev(fd, iov, count);
}

int famfs_ext_attach(struct fused *fs, struct fuse_session *se, int fd)
{
	static const struct fuse_custom_io io = {
		.read = ext_read,
		.writev = ext_writev,
		.splice_send = fused_splice_send,
	};

	fs->se = se;
	return fuse_session_custom_io(se, &io, fd);
}
