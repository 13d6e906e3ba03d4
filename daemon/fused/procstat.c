// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Whether the task closing a file being written was killed half way
 * (then the file is not logged), from its /proc/PID/stat.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fused.h"

bool fused_stat_says_killed(const char *line)
{
	unsigned long long flags = 0, code = 0;
	const char *f = strrchr(line, ')');
	int i = 2;

	if (!f)
		return false;
	/* field 2 (the command's name) ends at the last ')': count from it */
	for (f++; *f && i < 52; f++) {
		if (*f != ' ')
			continue;
		if (++i == 9)
			flags = strtoull(f + 1, NULL, 10);
		else if (i == 52)
			code = strtoull(f + 1, NULL, 10);
	}
	return (flags & 0x4 /* PF_EXITING */) && (code & 0x7f);
}

bool fused_task_killed(pid_t pid)
{
	char path[64], buf[2048];
	ssize_t n;
	int fd;

	/* one read: the kernel makes the whole line at once (no stdio) */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = pid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return fused_stat_says_killed(buf);
}
