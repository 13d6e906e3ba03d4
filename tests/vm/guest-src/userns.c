// SPDX-License-Identifier: GPL-2.0
/*
 * userns: run a command as an unprivileged user who made their own user
 * and mount namespaces, and bound one path over another in them (what
 * "unshare -U -r -m" then "mount --bind" does; busybox's unshare cannot
 * change user first). For the VM tests of device resolution.
 *
 *   userns UID SRC DST CMD [ARG...]
 *
 * Becomes UID (and group UID) in the initial namespaces, unshares a user
 * namespace (UID mapped to root in it) and a mount namespace, bind-mounts
 * SRC over DST there and runs CMD. With SRC "-" it only becomes UID and
 * runs CMD (no namespaces). Exit status: CMD's, or 125 when a step
 * before it fails.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

static int put(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

int main(int argc, char **argv)
{
	char map[64];
	unsigned int uid;

	if (argc < 5) {
		fprintf(stderr, "usage: userns UID SRC DST CMD [ARG...]\n");
		return 125;
	}
	uid = strtoul(argv[1], NULL, 0);
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
		perror("userns: becoming the user");
		return 125;
	}
	if (!strcmp(argv[2], "-")) {
		execvp(argv[4], argv + 4);
		perror("userns: exec");
		return 125;
	}
	/* A changed uid made us undumpable: /proc/self would be root's. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)) {
		perror("userns: dumpable");
		return 125;
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		perror("userns: unshare");
		return 125;
	}
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	if (put("/proc/self/setgroups", "deny") ||
	    put("/proc/self/uid_map", map) || put("/proc/self/gid_map", map)) {
		perror("userns: id maps");
		return 125;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(argv[2], argv[3], NULL, MS_BIND, NULL)) {
		perror("userns: bind mount");
		return 125;
	}
	execvp(argv[4], argv + 4);
	perror("userns: exec");
	return 125;
}
