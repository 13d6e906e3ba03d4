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
 *     -R         drop CAP_SYS_RAWIO before serving (an unprivileged server)
 *     -l FILE    append the opcode of every request received to FILE
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
#define BUFSZ (128 * 1024 + 4096)

static const char *init_file, *log_file;
static int accept_famfs, drop_rawio;

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
		a->mode = S_IFREG | 0444;
		a->nlink = 1;
		a->size = strlen(HELLO);
		a->blocks = 1;
	}
	a->blksize = 4096;
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
			if (accept_famfs && (offered & FUSE_DAX_FMAP)) {
				out.flags |= FUSE_INIT_EXT;
				out.flags2 |= (uint32_t)(FUSE_DAX_FMAP >> 32);
			}
			reply(fd, ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out out;

			if (ih->nodeid != FUSE_ROOT_ID ||
			    strcmp(arg, "hello") != 0) {
				reply(fd, ih->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&out, 0, sizeof(out));
			out.nodeid = HELLO_INO;
			out.generation = 1;
			out.entry_valid = 1;
			out.attr_valid = 1;
			fill_attr(&out.attr, HELLO_INO);
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
			reply(fd, ih->unique, 0, d, o);
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
			break; /* no reply */
		default:
			reply(fd, ih->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/famfs-fuse", *type = "famfs_fuse";
	char opts[128];
	int fd, c;

	while ((c = getopt(argc, argv, "d:t:i:l:FR")) != -1) {
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
		case 'F':
			accept_famfs = 1;
			break;
		case 'R':
			drop_rawio = 1;
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: minifuse [-d DEV] [-t TYPE] [-i FILE] [-l FILE] [-F] [-R] MNT\n");
		return 2;
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(dev);
		return 1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
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
		if (drop_rawio)
			drop_cap_sys_rawio();
		serve(fd);
		_exit(0);
	default:
		return 0;
	}
}
