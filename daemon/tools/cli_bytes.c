// SPDX-License-Identifier: GPL-2.0-or-later
/* Reaching a famfs file's bytes from a command; see cli.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_file_open(struct cli_file *f, const struct cli_fs *fs,
		  const struct famfs_ns *ns, const char *rel, bool write)
{
	memset(f, 0, sizeof(*f));
	f->fs = fs;
	f->fd = -1;
	cli_show(fs, rel, f->name, sizeof(f->name));
	if (fs->mounted) {
		char path[PATH_MAX + 96];
		struct stat st;

		/* f->name is escaped for messages: open the real name */
		cli_mount_path(fs, rel, path, sizeof(path));
		f->fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		if (f->fd < 0) {
			int err = errno;

			fprintf(stderr, "famfs: cannot open %s: %s\n", f->name,
				strerror(err));
			return -err;
		}
		if (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "famfs: %s is not a regular file\n",
				f->name);
			cli_file_close(f);
			return -EISDIR;
		}
		f->size = (uint64_t)st.st_size;
		return 0;
	}

	const struct famfs_node *n = famfs_ns_resolve(ns, rel);

	if (!n) {
		fprintf(stderr, "famfs: %s: no such file in the log\n", f->name);
		return -ENOENT;
	}
	if (n->is_dir) {
		fprintf(stderr, "famfs: %s is a directory\n", f->name);
		return -EISDIR;
	}
	f->fmap = n->fmap;
	f->size = n->size;
	return 0;
}

/*
 * @len bytes at @off of @f, read into @buf (@out NULL) or written from
 * @out: through the mount, to its end; from the device for a file of an
 * unmounted famfs. A message says what failed.
 */
static ssize_t file_io(struct cli_file *f, void *buf, const void *out,
		       size_t len, uint64_t off)
{
	const char *what = out ? "write" : "read";
	size_t done = 0;

	if (f->fd < 0) {
		ssize_t n = out ? famfs_data_write(&f->fs->dev, &f->fmap,
						   f->size, off, out, len) :
				  famfs_data_read(&f->fs->dev, &f->fmap,
						  f->size, off, buf, len);

		if (n < 0)
			fprintf(stderr, "famfs: %s: %s\n", f->name,
				famfs_errmsg());
		return n;
	}
	while (done < len) {
		off_t at = (off_t)(off + done);
		ssize_t n = out ? pwrite(f->fd, (const char *)out + done,
					 len - done, at) :
				  pread(f->fd, (char *)buf + done, len - done,
					at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && !out)
			break; /* the end of the file */
		if (n <= 0) {
			int err = n < 0 ? errno : ENOSPC;

			fprintf(stderr, "famfs: %s %s at %llu: %s\n", what,
				f->name, (unsigned long long)(off + done),
				strerror(err));
			return -err;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

ssize_t cli_file_pread(struct cli_file *f, void *buf, size_t len,
		       uint64_t off)
{
	return file_io(f, buf, NULL, len, off);
}

ssize_t cli_file_pwrite(struct cli_file *f, const void *buf, size_t len,
			uint64_t off)
{
	return file_io(f, NULL, buf, len, off);
}

void cli_file_close(struct cli_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
