// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finding the famfs a path names: a mount, or an unmounted device given
 * with --device; see cli.h.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tool_util.h"

/* Make @path absolute and tidy: no repeated or trailing slashes. */
static int absolute(const char *path, char *out, size_t len)
{
	char cwd[PATH_MAX], tmp[PATH_MAX * 2];
	size_t j = 0;

	if (path[0] == '/') {
		snprintf(tmp, sizeof(tmp), "%s", path);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		snprintf(tmp, sizeof(tmp), "%s/%s", cwd, path);
	}
	for (size_t i = 0; tmp[i] && j < len - 1; i++) {
		if (tmp[i] == '/' && j && out[j - 1] == '/')
			continue;
		out[j++] = tmp[i];
	}
	while (j > 1 && out[j - 1] == '/')
		j--;
	out[j] = '\0';
	return strlen(tmp) >= len ? -ENAMETOOLONG : 0;
}

/*
 * Split @abs into the real path of its longest existing prefix and the
 * rest, which does not exist yet.
 */
static int split_existing(const char *abs, char *real, char *rest,
			  size_t len)
{
	char head[PATH_MAX];

	snprintf(head, sizeof(head), "%s", abs);
	rest[0] = '\0';
	for (;;) {
		char *slash, tmp[PATH_MAX];

		if (realpath(head, real))
			return 0;
		if (errno != ENOENT)
			return -errno;
		slash = strrchr(head, '/');
		if (!slash || slash == head) {
			/* Even "/x" is missing: the prefix is "/". */
			snprintf(tmp, sizeof(tmp), "%s%s%s", head + 1,
				 rest[0] ? "/" : "", rest);
			snprintf(rest, len, "%s", tmp);
			snprintf(real, len, "/");
			return 0;
		}
		snprintf(tmp, sizeof(tmp), "%s%s%s", slash + 1,
			 rest[0] ? "/" : "", rest);
		snprintf(rest, len, "%s", tmp);
		*slash = '\0';
	}
}

/*
 * The existing directory that is or holds @path (which need not exist):
 * the library opens a regular file as a device image, so it gets this.
 */
static int existing_dir(const char *path, char real[PATH_MAX])
{
	char abs[PATH_MAX], rest[PATH_MAX];
	struct stat st;
	int rc;

	rc = absolute(path, abs, sizeof(abs));
	if (rc == 0)
		rc = split_existing(abs, real, rest, PATH_MAX);
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	if (stat(real, &st) == 0 && !S_ISDIR(st.st_mode))
		*(strrchr(real, '/') == real ? real + 1 : strrchr(real, '/')) =
			'\0';
	return 0;
}

int cli_mount_find(struct cli_fs *fs, const char *path)
{
	char real[PATH_MAX];

	memset(fs, 0, sizeof(*fs));
	fs->dev.fd = -1;
	if (existing_dir(path, real))
		return -1;
	if (famfs_mount_root(real, fs->root, sizeof(fs->root)))
		return -ENOENT;
	fs->mounted = true;
	return 0;
}

int cli_master_mount(struct cli_fs *fs, const char *path)
{
	if (cli_mount_find(fs, path))
		return -1;
	cli_fs_close(fs);
	if (cli_fs_open(fs, NULL, path, false))
		return -1;
	if (famfs_role(&fs->dev) != FAMFS_ROLE_MASTER) {
		cli_fs_close(fs);
		return -1;
	}
	return 0;
}

int cli_mount_open(struct cli_fs *fs, const char *path)
{
	int rc = cli_mount_find(fs, path);

	if (rc == -ENOENT)
		fprintf(stderr, "famfs: %s: not in a mounted famfs\n", path);
	return rc;
}

static int open_mounted(struct cli_fs *fs, const char *path, bool rw)
{
	char real[PATH_MAX];
	int rc;

	if (existing_dir(path, real))
		return -1;
	rc = famfs_dev_open_fs(real, rw ? FAMFS_OPEN_RW : 0, &fs->dev);
	if (rc && rw && (rc == -EACCES || rc == -EROFS || rc == -EPERM)) {
		/*
		 * The daemon serves the log read-only on a client: say that
		 * rather than "permission denied". The client may be this
		 * host (its identity differs from the superblock's master) or
		 * the mount (mounted with role=client).
		 */
		char msg[512], role[32] = "";
		bool client = false;

		snprintf(msg, sizeof(msg), "%s", famfs_errmsg());
		if (famfs_dev_open_fs(real, 0, &fs->dev) == 0) {
			client = famfs_role(&fs->dev) == FAMFS_ROLE_CLIENT;
			if (!client &&
			    cli_mount_status(fs->dev.path, "role", role,
					     sizeof(role)) == 0)
				client = !strcmp(role, "client");
			famfs_dev_close(&fs->dev);
		}
		if (client) {
			fprintf(stderr, "famfs: %s: this host is a client of this famfs%s; only the master host can create files and directories\n",
				path, role[0] ? " (the mount has role=client)" : "");
			return -EPERM;
		}
		fprintf(stderr, "famfs: %s: %s\n", path, msg);
		return rc;
	}
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", path,
			rc == -ENOENT || rc == -ENOTDIR ?
				"not in a mounted famfs (give --device DEV to work on an unmounted device)" :
				famfs_errmsg());
		return rc;
	}
	if (fs->dev.kind != FAMFS_DEV_META) {
		fprintf(stderr, "famfs: %s: not in a mounted famfs\n", path);
		famfs_dev_close(&fs->dev);
		return -ENOENT;
	}
	fs->mounted = true;
	snprintf(fs->root, sizeof(fs->root), "%s", fs->dev.path);
	return 0;
}

int cli_mount_status(const char *root, const char *key, char *val,
		     size_t len)
{
	return famfs_mount_status(root, key, val, len);
}

int cli_fs_open(struct cli_fs *fs, const char *device, const char *path,
		bool rw)
{
	int rc;

	memset(fs, 0, sizeof(*fs));
	fs->dev.fd = -1;
	snprintf(cli_open_dev, sizeof(cli_open_dev), "%s",
		 device ? device : path);
	if (!device)
		return open_mounted(fs, path, rw);
	fs->by_device = true;
	rc = famfs_dev_open_fs(device, rw ? FAMFS_OPEN_RW : 0, &fs->dev);
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", device,
			rc == -ENOENT && access(device, F_OK) == 0 ?
				"no famfs on this device (run mkfs.famfs)" :
				famfs_errmsg());
		return rc;
	}
	if (fs->dev.kind == FAMFS_DEV_META) {
		/* --device /mnt/famfs: fine, treat it as the mount. */
		fs->mounted = true;
		snprintf(fs->root, sizeof(fs->root), "%s", fs->dev.path);
	}
	return 0;
}

void cli_fs_close(struct cli_fs *fs)
{
	famfs_dev_close(&fs->dev);
}

static int check_components(const char *orig, const char *rel)
{
	const char *p = rel;

	while (*p) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2))) {
			fprintf(stderr, "famfs: %s: \".\" and \"..\" cannot name something that does not exist yet\n",
				orig);
			return -1;
		}
		p += n;
		if (*p)
			p++;
	}
	if (strlen(rel) >= FAMFS_PATH_LEN) {
		fprintf(stderr, "famfs: %s: the path inside the famfs (%zu bytes) is longer than the %d bytes famfs allows\n",
			orig, strlen(rel), FAMFS_PATH_LEN - 1);
		return -1;
	}
	return 0;
}

bool cli_reserved(const char *rel)
{
	return !strcmp(rel, ".meta") || !strncmp(rel, ".meta/", 6);
}

int cli_relpath_new(const struct cli_fs *fs, const char *path,
		    char rel[FAMFS_PATH_LEN])
{
	if (cli_relpath(fs, path, rel))
		return -1;
	if (cli_reserved(rel)) {
		fprintf(stderr, "famfs: %s: .meta holds the file system's metadata (the daemon serves it); nothing can be made there\n",
			path);
		return -1;
	}
	return 0;
}

int cli_relpath(const struct cli_fs *fs, const char *path,
		char rel[FAMFS_PATH_LEN])
{
	char abs[PATH_MAX], real[PATH_MAX], rest[PATH_MAX], full[PATH_MAX * 2];
	size_t rl = strlen(fs->root);
	const char *r;
	int rc;

	if (fs->by_device) {
		/* A path inside the famfs: tidy it lexically. */
		char tmp[PATH_MAX * 2];
		size_t j = 0;

		for (size_t i = 0; path[i] && j < sizeof(tmp) - 1; i++) {
			if (path[i] == '/' && (!j || tmp[j - 1] == '/'))
				continue;
			tmp[j++] = path[i];
		}
		while (j && tmp[j - 1] == '/')
			j--;
		tmp[j] = '\0';
		if (!strcmp(tmp, "."))
			tmp[0] = '\0';
		if (check_components(path, tmp))
			return -1;
		snprintf(rel, FAMFS_PATH_LEN, "%s", tmp);
		return 0;
	}

	rc = absolute(path, abs, sizeof(abs));
	if (rc == 0)
		rc = split_existing(abs, real, rest, sizeof(real));
	if (rc) {
		fprintf(stderr, "famfs: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	snprintf(full, sizeof(full), "%s%s%s", strcmp(real, "/") ? real : "",
		 rest[0] ? "/" : "", rest);
	if (!full[0])
		snprintf(full, sizeof(full), "/");
	if (strncmp(full, fs->root, rl) ||
	    (full[rl] != '/' && full[rl] != '\0' && strcmp(fs->root, "/"))) {
		fprintf(stderr, "famfs: %s: not in the famfs mounted at %s\n",
			path, fs->root);
		return -1;
	}
	r = full + rl;
	while (*r == '/')
		r++;
	if (check_components(path, r))
		return -1;
	snprintf(rel, FAMFS_PATH_LEN, "%s", r);
	return 0;
}

void cli_mount_path(const struct cli_fs *fs, const char *rel, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s%s%s", fs->root, rel[0] ? "/" : "", rel);
}

const char *cli_show(const struct cli_fs *fs, const char *rel, char *buf,
		     size_t len)
{
	char raw[PATH_MAX + 96];

	if (fs->mounted)
		cli_mount_path(fs, rel, raw, sizeof(raw));
	else
		snprintf(raw, sizeof(raw), "%s:/%s", fs->dev.path, rel);
	return famfs_escape(raw, buf, len);
}

int cli_writer_begin(struct cli_fs *fs, struct famfs_writer *w,
		     const char *cmd)
{
	int rc = famfs_writer_begin(w, &fs->dev);

	if (rc)
		fprintf(stderr, "famfs %s: %s\n", cmd, famfs_errmsg());
	return rc;
}

int cli_writer_open(struct cli_fs *fs, struct famfs_writer *w,
		    const char *device, const char *path, const char *cmd)
{
	if (cli_fs_open(fs, device, path, true))
		return -1;
	if (!cli_writer_begin(fs, w, cmd))
		return 0;
	cli_fs_close(fs);
	return -1;
}

void cli_writer_close(struct cli_fs *fs, struct famfs_writer *w)
{
	famfs_writer_end(w);
	cli_fs_close(fs);
}

int cli_ns_load(struct cli_fs *fs, struct famfs_ns *ns, const char *cmd)
{
	struct famfs_walk walk;
	int rc = famfs_ns_load(&fs->dev, ns, &walk, NULL);

	if (rc)
		fprintf(stderr, "famfs %s: %s: %s%s\n", cmd, fs->dev.path,
			famfs_errmsg(),
			walk.bad ? " (run famfs fsck)" : "");
	return rc;
}
