// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's guard against its device going away (daemon/fused/devloss.c):
 * a SIGBUS in the device mapping, or an image file found shorter than the
 * file system, marks the device lost instead of killing the daemon; a
 * SIGBUS anywhere else still kills it. Each case runs in a child process:
 * the guard is process-wide state.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fused.h"
#include "helpers.h"

#define IMAGE_SIZE (64 * MiB)

/* Child exit codes: which step went wrong. */
enum { OK, NOT_LOST, NOT_ZERO, LOST_EARLY, BAD_HEALTH, OPEN_FAILED };

static int run_child(int (*body)(struct fused *, const char *))
{
	static struct fused fs;
	struct scratch s;
	int status, rc;
	pid_t pid;

	scratch_mkfs(&s, IMAGE_SIZE);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fused_log_init(false, NULL);
		snprintf(fs.devpath, sizeof(fs.devpath), "%s", s.image);
		snprintf(fs.mountpoint, sizeof(fs.mountpoint), "/test");
		if (famfs_dev_open_fs(s.image, FAMFS_OPEN_RW, &fs.dev))
			_exit(OPEN_FAILED);
		fused_devloss_arm(&fs);
		if (fused_dev_lost(&fs))
			_exit(LOST_EARLY);
		_exit(body(&fs, s.image));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	scratch_drop(&s);
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	rc = WEXITSTATUS(status);
	return rc;
}

static int lost_and_reads_zero(struct fused *fs, const volatile uint8_t *p)
{
	if (*p != 0)
		return NOT_ZERO;
	if (!fused_dev_lost(fs))
		return NOT_LOST;
	if (strcmp(fs->health, "lost"))
		return BAD_HEALTH;
	return OK;
}

/* Shrink the image, then touch the vanished part before anyone looks. */
static int fault_first(struct fused *fs, const char *image)
{
	const volatile uint8_t *p = fs->dev.base + IMAGE_SIZE - 4096;

	if (truncate(image, 1 * MiB))
		return OPEN_FAILED;
	/* Without the guard this access kills us with SIGBUS. */
	return lost_and_reads_zero(fs, p);
}

static void sigbus_in_device_mapping_marks_it_lost(void **state)
{
	(void)state;
	assert_int_equal(run_child(fault_first), OK);
}

/* Shrink the image, then ask first: no fault is needed to notice. */
static int check_first(struct fused *fs, const char *image)
{
	if (truncate(image, 1 * MiB))
		return OPEN_FAILED;
	if (!fused_dev_lost(fs))
		return NOT_LOST;
	return lost_and_reads_zero(fs, fs->dev.base + IMAGE_SIZE - 4096);
}

static void shrunk_image_is_lost_before_any_fault(void **state)
{
	(void)state;
	assert_int_equal(run_child(check_first), OK);
}

/* A fault in some other mapping is a real bug: the process must die. */
static int fault_elsewhere(struct fused *fs, const char *image)
{
	char other[160];
	volatile uint8_t *p;
	int fd;

	snprintf(other, sizeof(other), "%s.other", image);
	fd = open(other, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 2 * 4096))
		return OPEN_FAILED;
	p = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || ftruncate(fd, 0))
		return OPEN_FAILED;
	unlink(other);
	(void)p[4096];
	return fused_dev_lost(fs) ? LOST_EARLY : OK;
}

static void sigbus_elsewhere_still_kills(void **state)
{
	(void)state;
	assert_int_equal(run_child(fault_elsewhere), 1000 + SIGBUS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sigbus_in_device_mapping_marks_it_lost),
		cmocka_unit_test(shrunk_image_is_lost_before_any_fault),
		cmocka_unit_test(sigbus_elsewhere_still_kills),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
