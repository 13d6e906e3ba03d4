// SPDX-License-Identifier: GPL-2.0
/*
 * minifuse: a tiny FUSE server that speaks the raw protocol (no libfuse),
 * for testing famfs_fuse.ko in the VM guest. It serves a read-only root
 * directory with one file, "hello", whose content is HELLO below.
 *
 *   minifuse [-d DEV] [-t FSTYPE] [-i FILE] MOUNTPOINT
 *     -d DEV     device to open (default /dev/famfs-fuse)
 *     -t FSTYPE  file system type for mount(2) (default famfs_fuse)
 *     -i FILE    write the INIT flags the kernel offered (hex, 64 bit:
 *                flags | flags2 << 32) to FILE
 *     -F         accept FUSE_DAX_FMAP (famfs mode) in the INIT reply
 *     -R         drop CAP_SYS_RAWIO before opening the device: mounter and
 *                server both lack it
 *     -r         open the device and mount without CAP_SYS_RAWIO in the
 *                effective set, then raise it again to serve: a privileged
 *                server on an unprivileged mounter's connection
 *     -P         mount without default_permissions (on by default)
 *     -a         mount with allow_other (other users may use the mount)
 *     -N KIND    when hello is opened, send FUSE_NOTIFY_STORE (KIND
 *                "store"), FUSE_NOTIFY_RETRIEVE ("retrieve") or
 *                FUSE_NOTIFY_INVAL_INODE of the whole page cache ("inval")
 *                for it before answering, and log "notify-KIND ERRNO"
 *                (0: accepted)
 *     -M         accept FUSE_AUTO_INVAL_DATA, and give hello a newer mtime
 *                in every attribute reply (the kernel then drops the
 *                file's page cache at each attribute refresh)
 *     -b SIZE    the block size (st_blksize) the attributes give
 *                (default 4096)
 *     -S         hello is setuid and setgid and open to all (06777);
 *                FUSE_SETATTR changes its mode
 *     -l FILE    append the opcode of every request received to FILE
 *     -m MODE    how to answer FUSE_GET_FMAP (see fmap_reply(); default
 *                "good": one 2 MiB simple extent at offset 0 of device 0;
 *                "good-2m": the same at offset 2 MiB;
 *                "split": hello as "good", twin (-T) at offset 0 of
 *                device 1;
 *                "fuzz:SEED": a good map changed at random, fuzz_reply())
 *     -D PATH[,PATH1]  the device FUSE_GET_DAXDEV names (default
 *                /dev/dax0.0); PATH1, if given, for device index 1
 *     -x MODE    how to answer FUSE_GET_DAXDEV (see daxdev_reply(); default
 *                "good"; "upstream": as upstream's famfs server does, the
 *                device index taken from the request's nodeid, not its
 *                body)
 *     -C         answer FUSE_CREATE of "made": a new file with hello's
 *                attributes and map, found by later lookups
 *     -T         also serve "twin", a second file with hello's attributes
 *                and (as every file here) the same map: two files over
 *                the same memory, which the kernel must refuse
 *
 * FUSE_COPY_FILE_RANGE is answered as if the server had copied.
 *
 * It mounts, then forks: the parent exits 0 once the mount is in place and
 * the child serves requests until the connection goes away (unmount).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "famfs_fuse_abi.h"

#define HELLO "hello from famfs_fuse\n"
#define HELLO_INO 2
#define TWIN_INO 3
#define MADE_INO 4
#define BUFSZ (128 * 1024 + 4096)

static const char *init_file, *log_file;
static int accept_famfs, drop_rawio, mount_norawio, twin, can_create, made;
static const char *notify_kind;
static int no_default_perms, allow_other, moving_mtime;
static uint64_t hello_mtime;
static unsigned int hello_mode = 0444, blksize = 4096;
static int fmap_calls;
static const char *fmap_mode = "good";
static const char *daxdev_path = "/dev/dax0.0";
static const char *daxdev_path1; /* index 1, when -D names two */
static uint64_t fmap_ino;	  /* the file GET_FMAP asks about */
static const char *daxdev_mode = "good";

#define MIB2 (2ULL << 20)

static size_t put_se(char *p, uint32_t dev, uint64_t off, uint64_t len)
{
	struct fuse_famfs_simple_ext se = {
		.se_devindex = dev, .se_offset = off, .se_len = len,
	};

	memcpy(p, &se, sizeof(se));
	return sizeof(se);
}

static size_t put_ie(char *p, uint32_t nstrips, uint32_t chunk, uint64_t nbytes)
{
	struct fuse_famfs_iext ie = {
		.ie_nstrips = nstrips, .ie_chunk_size = chunk,
		.ie_nbytes = nbytes,
	};

	memcpy(p, &ie, sizeof(ie));
	return sizeof(ie);
}

/*
 * Build the GET_FMAP reply for fmap_mode into buf; returns its length, or
 * a negative errno to answer with an error. The "good*" modes are valid,
 * every other one breaks one rule the kernel must check.
 */
static int fmap_reply(char *buf, size_t max)
{
	struct fuse_famfs_fmap_header h = {
		.file_type = FUSE_FAMFS_FILE_REG, .fmap_version = 1,
		.ext_type = FUSE_FAMFS_EXT_SIMPLE, .nextents = 1,
		.file_size = strlen(HELLO),
	};
	const char *m = fmap_mode;
	size_t n = sizeof(h);
	uint32_t i;

	memset(buf, 0, max);
	fmap_calls++;
	if (!strcmp(m, "nodata-once"))	/* no map first, a good one later */
		m = fmap_calls == 1 ? "nodata" : "good";
	if (!strcmp(m, "split"))	/* each file on a device of its own */
		m = fmap_ino == TWIN_INO ? "good-dev1" : "good";
	if (!strcmp(m, "good") || !strcmp(m, "trailing") ||
	    !strcmp(m, "good-2m")) {
		n += put_se(buf + n, 0, !strcmp(m, "good-2m") ? MIB2 : 0, MIB2);
		if (!strcmp(m, "trailing"))
			n += 24;
	} else if (!strcmp(m, "good-dev1")) {
		n += put_se(buf + n, 1, 0, MIB2);
	} else if (!strcmp(m, "good-multi")) {
		h.nextents = 3;
		for (i = 0; i < 3; i++)
			n += put_se(buf + n, i, 4 * MIB2 * i, MIB2);
	} else if (!strcmp(m, "selfdup") || !strcmp(m, "dupdev")) {
		/* The same memory twice: by one index, or by two naming one device */
		h.nextents = 2;
		n += put_se(buf + n, 0, 0, MIB2);
		n += put_se(buf + n, !strcmp(m, "dupdev"), 0, MIB2);
	} else if (!strcmp(m, "good-iext") || !strcmp(m, "iext-shortstrip") ||
		   !strcmp(m, "iext-manystrips") || !strcmp(m, "iext-chunk0")) {
		uint32_t ns = 2, chunk = MIB2;
		uint64_t nb = strlen(HELLO), slen = MIB2;

		if (!strcmp(m, "iext-shortstrip"))
			nb = 4 * MIB2;	/* 4 chunks, 2 stripes: needs 4 MiB */
		if (!strcmp(m, "iext-manystrips"))
			ns = 33;
		if (!strcmp(m, "iext-chunk0"))
			chunk = 0;
		h.ext_type = FUSE_FAMFS_EXT_INTERLEAVE;
		n += put_ie(buf + n, ns, chunk, nb);
		for (i = 0; i < ns && n + 24 <= max; i++)
			n += put_se(buf + n, i, 4 * MIB2 * i, slen);
	} else if (!strcmp(m, "iext-hugenbytes")) {
		/* nbytes + chunk - 1 wraps: must not pass for a short extent */
		h.ext_type = FUSE_FAMFS_EXT_INTERLEAVE;
		n += put_ie(buf + n, 2, MIB2, ~0ULL - MIB2 + 2);
		n += put_se(buf + n, 0, 0, MIB2);
		n += put_se(buf + n, 0, 4 * MIB2, MIB2);
	} else if (!strcmp(m, "reserved")) {
		h.reserved0 = 1;
		n += put_se(buf + n, 0, 0, MIB2);
	} else if (!strcmp(m, "se-reserved")) {
		n += put_se(buf + n, 0, 0, MIB2);
		buf[sizeof(h) + 4] = 1;	/* the extent's reserved field */
	} else if (!strcmp(m, "filesize")) {
		h.file_size = strlen(HELLO) + 1;	/* not the file's size */
		n += put_se(buf + n, 0, 0, MIB2);
	} else if (!strcmp(m, "short")) {
		n = 16;
	} else if (!strcmp(m, "version")) {
		h.fmap_version = 2;
		n += put_se(buf + n, 0, 0, MIB2);
	} else if (!strcmp(m, "exttype")) {
		h.ext_type = 7;
		n += put_se(buf + n, 0, 0, MIB2);
	} else if (!strcmp(m, "noext")) {
		h.nextents = 0;
	} else if (!strcmp(m, "toomany")) {
		h.nextents = 33;
		for (i = 0; i < 33; i++)
			n += put_se(buf + n, 0, MIB2 * i, MIB2);
	} else if (!strcmp(m, "unaligned")) {
		n += put_se(buf + n, 0, 4096, MIB2);
	} else if (!strcmp(m, "zerolen")) {
		n += put_se(buf + n, 0, 0, 0);
	} else if (!strcmp(m, "baddev")) {
		n += put_se(buf + n, 24, 0, MIB2);
	} else if (!strcmp(m, "shortmap")) {
		h.file_size = 3 * MIB2;
		n += put_se(buf + n, 0, 0, MIB2);
	} else if (!strcmp(m, "truncated")) {
		h.nextents = 2;
		n += put_se(buf + n, 0, 0, MIB2);
	} else if (!strcmp(m, "wrap")) {
		n += put_se(buf + n, 0, ~0ULL - MIB2 + 1, 2 * MIB2);
	} else if (!strcmp(m, "oversize")) {
		n = 5000;
	} else if (!strcmp(m, "garbage")) {
		uint32_t x = 2463534242u;

		for (i = 0; i < 512; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = x;
		}
		return 512;
	} else if (!strcmp(m, "error")) {
		return -EIO;
	} else if (!strcmp(m, "iext-midpage")) {
		/* The first of two extents ends inside a page. */
		h.ext_type = FUSE_FAMFS_EXT_INTERLEAVE;
		h.nextents = 2;
		for (i = 0; i < 2; i++) {
			n += put_ie(buf + n, 2, MIB2, i ? MIB2 : 4097);
			n += put_se(buf + n, 0, 4 * MIB2 * i, MIB2);
			n += put_se(buf + n, 0, 4 * MIB2 * i + MIB2, MIB2);
		}
	} else if (!strcmp(m, "outofdev")) {
		n += put_se(buf + n, 0, 64ULL << 30, MIB2);
	} else if (!strcmp(m, "nodata")) {
		return -ENODATA;
	} else {
		return -ENOSYS;
	}
	memcpy(buf, &h, sizeof(h));
	return n > max ? (int)max : (int)n;
}

static uint32_t rnd_x;

static uint32_t rnd(void)
{
	rnd_x ^= rnd_x << 13;
	rnd_x ^= rnd_x >> 17;
	rnd_x ^= rnd_x << 5;
	return rnd_x;
}

/*
 * "fuzz:SEED": one of the good maps, then one to four random changes: a
 * bit flipped, a 4- or 8-byte field set to an edge value, the reply cut
 * short or grown by random bytes. Whatever comes of it, the kernel must
 * refuse the map cleanly or serve it inside the device.
 */
static int fuzz_reply(char *buf, size_t max, unsigned long seed)
{
	static const char *const base[] = { "good", "good-multi", "good-iext" };
	static const uint64_t edge[] = {
		0, 1, 2, 24, 32, 33, 4096, MIB2 - 1, MIB2, MIB2 + 1,
		1ULL << 31, 1ULL << 32, 64ULL << 30, ~0ULL - MIB2 + 1, ~0ULL,
	};
	const char *mode = fmap_mode;
	int n, k;

	rnd_x = (uint32_t)(seed * 2654435761u) | 1;
	fmap_mode = base[rnd() % 3];
	n = fmap_reply(buf, max);
	fmap_mode = mode;
	for (k = 1 + rnd() % 4; k > 0 && n > 0; k--) {
		switch (rnd() % 4) {
		case 0:
			buf[rnd() % n] ^= (char)(1 << (rnd() % 8));
			break;
		case 1: {
			uint64_t v = edge[rnd() % (sizeof(edge) / sizeof(edge[0]))];
			size_t w = rnd() % 2 ? 8 : 4;
			size_t o = (rnd() % (unsigned int)n) & ~(size_t)3;

			memcpy(buf + o, &v, o + w <= (size_t)n ? w : (size_t)n - o);
			break;
		}
		case 2:
			n = (int)(rnd() % (unsigned int)n);
			break;
		default:
			for (int i = 0; i < 24 && (size_t)n < max; i++)
				buf[n++] = (char)rnd();
		}
	}
	return n;
}

/*
 * The GET_DAXDEV reply for device @idx into @out; returns its length, or a
 * negative errno. "good" names daxdev_path; every other mode breaks one
 * rule the kernel must check.
 */
static int daxdev_reply(uint32_t idx, struct fuse_daxdev_out *out)
{
	const char *m = daxdev_mode;
	const char *name = idx == 1 && daxdev_path1 ? daxdev_path1 :
							  daxdev_path;

	memset(out, 0, sizeof(*out));
	out->index = idx;
	if (!strcmp(m, "short"))
		return 8;
	if (!strcmp(m, "error"))
		return -EIO;
	if (!strcmp(m, "badindex"))
		out->index = idx + 1;
	else if (!strcmp(m, "relative"))
		name = "dev/dax0.0";
	else if (!strcmp(m, "missing"))
		name = "/dev/nonexistent-dax";
	else if (!strcmp(m, "notchr"))
		name = "/dev";
	else if (!strcmp(m, "notdax"))
		name = "/dev/null";
	if (!strcmp(m, "noterm"))
		memset(out->name, 'a', sizeof(out->name));
	else
		snprintf(out->name, sizeof(out->name), "%s", name);
	return sizeof(*out);
}

static void drop_cap_sys_rawio(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0) {
		perror("capget");
		return;
	}
	d[CAP_SYS_RAWIO / 32].effective &= ~(1u << (CAP_SYS_RAWIO % 32));
	d[CAP_SYS_RAWIO / 32].permitted &= ~(1u << (CAP_SYS_RAWIO % 32));
	if (syscall(SYS_capset, &h, d) < 0)
		perror("capset");
}

/* FUSE_NOTIFY_STORE of 4 bytes at offset 0 of @nodeid: 0 or errno. */
static int send_notify_store(int fd, uint64_t nodeid)
{
	char m[sizeof(struct fuse_out_header) +
	       sizeof(struct fuse_notify_store_out) + 4];
	struct fuse_out_header oh = {
		.len = sizeof(m), .error = FUSE_NOTIFY_STORE,
	};
	struct fuse_notify_store_out st = { .nodeid = nodeid, .size = 4 };

	memcpy(m, &oh, sizeof(oh));
	memcpy(m + sizeof(oh), &st, sizeof(st));
	memcpy(m + sizeof(oh) + sizeof(st), "XXXX", 4);
	return write(fd, m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : errno;
}

/* FUSE_NOTIFY_RETRIEVE of 4 bytes at offset 0 of @nodeid: 0 or errno. */
static int send_notify_retrieve(int fd, uint64_t nodeid)
{
	char m[sizeof(struct fuse_out_header) +
	       sizeof(struct fuse_notify_retrieve_out)];
	struct fuse_out_header oh = {
		.len = sizeof(m), .error = FUSE_NOTIFY_RETRIEVE,
	};
	struct fuse_notify_retrieve_out rt = {
		.notify_unique = 1, .nodeid = nodeid, .size = 4,
	};

	memcpy(m, &oh, sizeof(oh));
	memcpy(m + sizeof(oh), &rt, sizeof(rt));
	return write(fd, m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : errno;
}

/* FUSE_NOTIFY_INVAL_INODE of all of @nodeid's page cache: 0 or errno. */
static int send_notify_inval(int fd, uint64_t nodeid)
{
	char m[sizeof(struct fuse_out_header) +
	       sizeof(struct fuse_notify_inval_inode_out)];
	struct fuse_out_header oh = {
		.len = sizeof(m), .error = FUSE_NOTIFY_INVAL_INODE,
	};
	struct fuse_notify_inval_inode_out in = { .ino = nodeid };

	memcpy(m, &oh, sizeof(oh));
	memcpy(m + sizeof(oh), &in, sizeof(in));
	return write(fd, m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : errno;
}

/* FUSE_NOTIFY_@kind for @nodeid: 0 or errno. */
static int send_notify(int fd, const char *kind, uint64_t nodeid)
{
	if (!strcmp(kind, "store"))
		return send_notify_store(fd, nodeid);
	if (!strcmp(kind, "retrieve"))
		return send_notify_retrieve(fd, nodeid);
	return send_notify_inval(fd, nodeid);
}

/* Clear (@on == 0) or set CAP_SYS_RAWIO in the effective set only. */
static void effective_rawio(int on)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	uint32_t bit = 1u << (CAP_SYS_RAWIO % 32);

	if (syscall(SYS_capget, &h, d) < 0) {
		perror("capget");
		return;
	}
	if (on)
		d[CAP_SYS_RAWIO / 32].effective |= bit;
	else
		d[CAP_SYS_RAWIO / 32].effective &= ~bit;
	if (syscall(SYS_capset, &h, d) < 0)
		perror("capset");
}

static int reply(int fd, uint64_t unique, int error, const void *p, size_t n)
{
	char buf[BUFSZ];
	struct fuse_out_header *oh = (void *)buf;

	if (n > sizeof(buf) - sizeof(*oh))
		n = sizeof(buf) - sizeof(*oh);
	oh->len = sizeof(*oh) + (error ? 0 : n);
	oh->error = error;
	oh->unique = unique;
	if (!error && n)
		memcpy(buf + sizeof(*oh), p, n);
	if (write(fd, buf, oh->len) != (ssize_t)oh->len)
		return -1;
	return 0;
}

static void fill_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | hello_mode;
		a->nlink = 1;
		if (moving_mtime && ino == HELLO_INO)
			a->mtime = ++hello_mtime;
		a->size = strlen(HELLO);
		a->blocks = 1;
	}
	a->blksize = blksize;
}

static size_t add_dirent(char *buf, size_t off, size_t max, uint64_t ino,
			 const char *name, uint64_t next, uint32_t type)
{
	struct fuse_dirent *d = (void *)(buf + off);
	size_t nl = strlen(name), sz = FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + nl);

	if (off + sz > max)
		return 0;
	memset(d, 0, sz);
	d->ino = ino;
	d->off = next;
	d->namelen = nl;
	d->type = type;
	memcpy(d->name, name, nl);
	return sz;
}

static void serve(int fd)
{
	static char buf[BUFSZ];

	FILE *log = log_file ? fopen(log_file, "a") : NULL;

	if (log)
		setvbuf(log, NULL, _IOLBF, 0);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		struct fuse_in_header *ih = (void *)buf;
		void *arg = buf + sizeof(*ih);

		if (n < 0 && (errno == EINTR || errno == EAGAIN ||
			      errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*ih))
			return; /* ENODEV: unmounted */
		if (log)
			fprintf(log, "%u\n", ih->opcode);

		switch (ih->opcode) {
		case FUSE_INIT: {
			struct fuse_init_in *in = arg;
			struct fuse_init_out out;
			uint64_t offered = in->flags;

			if (in->flags & FUSE_INIT_EXT)
				offered |= (uint64_t)in->flags2 << 32;
			if (init_file) {
				FILE *f = fopen(init_file, "w");

				if (f) {
					fprintf(f, "0x%llx\n",
						(unsigned long long)offered);
					fclose(f);
				}
			}
			memset(&out, 0, sizeof(out));
			out.major = FUSE_KERNEL_VERSION;
			out.minor = FUSE_KERNEL_MINOR_VERSION;
			out.max_readahead = in->max_readahead;
			out.max_write = 64 * 1024;
			out.max_background = 16;
			out.congestion_threshold = 12;
			out.time_gran = 1;
			if (moving_mtime && (offered & FUSE_AUTO_INVAL_DATA))
				out.flags |= FUSE_AUTO_INVAL_DATA;
			if (accept_famfs &&
			    (offered & FUSE_DAX_FMAP_FOR_MINOR(in->minor))) {
				out.flags |= FUSE_INIT_EXT;
				out.flags2 |= (uint32_t)(FUSE_DAX_FMAP_FOR_MINOR(in->minor) >> 32);
			}
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out out;

			uint64_t ino = !strcmp(arg, "hello") ? HELLO_INO :
				       twin && !strcmp(arg, "twin") ? TWIN_INO :
				       made && !strcmp(arg, "made") ? MADE_INO : 0;

			if (ih->nodeid != FUSE_ROOT_ID || !ino) {
				reply(fd, ih->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&out, 0, sizeof(out));
			out.nodeid = ino;
			out.generation = 1;
			out.entry_valid = 1;
			out.attr_valid = 1;
			fill_attr(&out.attr, ino);
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_CREATE: {
			struct {
				struct fuse_entry_out e;
				struct fuse_open_out o;
			} out;
			const char *name = (const char *)arg +
					   sizeof(struct fuse_create_in);

			if (!can_create || ih->nodeid != FUSE_ROOT_ID ||
			    strcmp(name, "made")) {
				reply(fd, ih->unique, can_create ? -EACCES :
					  -ENOSYS, NULL, 0);
				break;
			}
			made = 1;
			memset(&out, 0, sizeof(out));
			out.e.nodeid = MADE_INO;
			out.e.generation = 1;
			out.e.entry_valid = 1;
			out.e.attr_valid = 1;
			fill_attr(&out.e.attr, MADE_INO);
			out.o.fh = MADE_INO;
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out out;

			memset(&out, 0, sizeof(out));
			out.attr_valid = 1;
			fill_attr(&out.attr, ih->nodeid);
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_OPEN:
			if (notify_kind && ih->nodeid == HELLO_INO && log)
				fprintf(log, "notify-%s %d\n", notify_kind,
					send_notify(fd, notify_kind, ih->nodeid));
			/* fall through */
		case FUSE_OPENDIR: {
			struct fuse_open_out out;

			memset(&out, 0, sizeof(out));
			out.fh = ih->nodeid;
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_READ: {
			struct fuse_read_in *in = arg;
			size_t len = strlen(HELLO), cnt = 0;

			if (in->offset < len) {
				cnt = len - in->offset;
				if (cnt > in->size)
					cnt = in->size;
			}
			reply(fd, ih->unique, 0, HELLO + in->offset, cnt);
			break;
		}
		case FUSE_READDIR: {
			struct fuse_read_in *in = arg;
			static char d[4096];
			size_t o = 0, max = in->size < sizeof(d) ? in->size :
								     sizeof(d);

			if (in->offset < 1)
				o += add_dirent(d, o, max, FUSE_ROOT_ID, ".", 1,
						S_IFDIR >> 12);
			if (in->offset < 2)
				o += add_dirent(d, o, max, FUSE_ROOT_ID, "..", 2,
						S_IFDIR >> 12);
			if (in->offset < 3)
				o += add_dirent(d, o, max, HELLO_INO, "hello", 3,
						S_IFREG >> 12);
			if (twin && in->offset < 4)
				o += add_dirent(d, o, max, TWIN_INO, "twin", 4,
						S_IFREG >> 12);
			reply(fd, ih->unique, 0, d, o);
			break;
		}
		case FUSE_GET_FMAP: {
			static char f[8192];
			int len;

			fmap_ino = ih->nodeid;
			len = strncmp(fmap_mode, "fuzz:", 5) ?
				fmap_reply(f, sizeof(f)) :
				fuzz_reply(f, sizeof(f),
					   strtoul(fmap_mode + 5, NULL, 0));

			if (len < 0)
				reply(fd, ih->unique, len, NULL, 0);
			else
				reply(fd, ih->unique, 0, f, len);
			break;
		}
		case FUSE_GET_DAXDEV: {
			struct fuse_get_daxdev_in *in = arg;
			struct fuse_daxdev_out out;
			/* upstream's server: the index is the nodeid */
			uint32_t idx = strcmp(daxdev_mode, "upstream") ?
					       in->daxdev_num :
					       (uint32_t)ih->nodeid;
			int len = daxdev_reply(idx, &out);

			if (len < 0)
				reply(fd, ih->unique, len, NULL, 0);
			else
				reply(fd, ih->unique, 0, &out, len);
			break;
		}
		case FUSE_COPY_FILE_RANGE: {
			struct fuse_copy_file_range_in *in = arg;
			struct fuse_write_out out;

			memset(&out, 0, sizeof(out));
			out.size = in->len > 4096 ? 4096 : in->len;
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_SETATTR: {
			struct fuse_setattr_in *in = arg;
			struct fuse_attr_out out;

			if (in->valid & FATTR_MODE)
				hello_mode = in->mode & 07777;
			memset(&out, 0, sizeof(out));
			fill_attr(&out.attr, ih->nodeid);
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_STATFS: {
			struct fuse_statfs_out out;

			memset(&out, 0, sizeof(out));
			out.st.bsize = 4096;
			out.st.frsize = 4096;
			out.st.namelen = 255;
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
		case FUSE_FLUSH:
		case FUSE_DESTROY:
			reply(fd, ih->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
		case FUSE_NOTIFY_REPLY: /* the data a NOTIFY_RETRIEVE asked for */
			break; /* no reply */
		default:
			reply(fd, ih->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
}

/* @mode is one of the NULL-terminated @modes (a misspelt test mode must
 * fail the test, not turn into an ENOSYS answer that "fails" the open). */
static int known_mode(const char *mode, const char *const *modes)
{
	for (; *modes; modes++)
		if (!strcmp(mode, *modes))
			return 1;
	return 0;
}

static const char *const fmap_modes[] = {
	"good", "good-2m", "good-multi", "good-iext", "trailing", "selfdup",
	"dupdev", "iext-shortstrip", "iext-manystrips", "iext-chunk0", "short",
	"version", "exttype", "noext", "toomany", "unaligned", "zerolen",
	"baddev", "shortmap", "truncated", "wrap", "oversize", "garbage",
	"error", "iext-midpage", "outofdev", "iext-hugenbytes", "reserved",
	"se-reserved", "filesize", "nodata", "nodata-once", "split", NULL
};
static const char *const daxdev_modes[] = {
	"good", "short", "error", "badindex", "relative", "missing",
	"notchr", "notdax", "noterm", "upstream", NULL
};

int main(int argc, char **argv)
{
	const char *dev = "/dev/famfs-fuse", *type = "famfs_fuse";
	char opts[192];
	int fd, c;

	while ((c = getopt(argc, argv, "d:t:i:l:m:D:x:N:b:CFMRTrPaS")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 't':
			type = optarg;
			break;
		case 'i':
			init_file = optarg;
			break;
		case 'l':
			log_file = optarg;
			break;
		case 'm':
			fmap_mode = optarg;
			break;
		case 'D': {
			char *comma = strchr(optarg, ',');

			daxdev_path = optarg;
			if (comma) {
				*comma = '\0';
				daxdev_path1 = comma + 1;
			}
			break;
		}
		case 'x':
			daxdev_mode = optarg;
			break;
		case 'F':
			accept_famfs = 1;
			break;
		case 'C':
			can_create = 1;
			break;
		case 'T':
			twin = 1;
			break;
		case 'R':
			drop_rawio = 1;
			break;
		case 'r':
			mount_norawio = 1;
			break;
		case 'P':
			no_default_perms = 1;
			break;
		case 'a':
			allow_other = 1;
			break;
		case 'N':
			notify_kind = optarg;
			if (strcmp(optarg, "store") && strcmp(optarg, "retrieve") &&
			    strcmp(optarg, "inval"))
				return 2;
			break;
		case 'M':
			moving_mtime = 1;
			break;
		case 'b':
			blksize = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			hello_mode = 06777;
			break;
		default:
			return 2;
		}
	}
	if ((!known_mode(fmap_mode, fmap_modes) &&
	     strncmp(fmap_mode, "fuzz:", 5)) ||
	    !known_mode(daxdev_mode, daxdev_modes)) {
		fprintf(stderr, "minifuse: unknown mode -m %s -x %s\n",
			fmap_mode, daxdev_mode);
		return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: minifuse [-d DEV] [-t TYPE] [-i FILE] [-l FILE] [-m MODE] [-D PATH] [-x MODE] [-N KIND] [-b SIZE] [-CFRrPaST] MNT\n");
		return 2;
	}
	if (drop_rawio)
		drop_cap_sys_rawio();
	if (mount_norawio)
		effective_rawio(0);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(dev);
		return 1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0%s%s", fd,
		 no_default_perms ? "" : ",default_permissions",
		 allow_other ? ",allow_other" : "");
	if (mount("minifuse", argv[optind], type, MS_NOSUID | MS_NODEV,
		  opts) < 0) {
		perror("mount");
		return 1;
	}
	switch (fork()) {
	case -1:
		perror("fork");
		return 1;
	case 0:
		if (mount_norawio)
			effective_rawio(1);
		serve(fd);
		_exit(0);
	default:
		return 0;
	}
}
