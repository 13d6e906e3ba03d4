// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The device going away under the mount: an image file truncated or
 * replaced, a devdax device unbound or its namespace destroyed. Our
 * mapping of it then faults with SIGBUS, which would kill the daemon and
 * leave the mount answering ENOTCONN with no word of why. Instead the
 * first such fault (or a backing file found shorter than the file system)
 * swaps the whole mapping for anonymous zero pages, so the faulting copy
 * completes, and marks the device lost: from then on every operation that
 * needs the device fails with EIO, nothing read after the loss is served,
 * the reason is logged once and .status says device_health=lost. The
 * mount itself stays up so that umount works and the namespace can still
 * be listed from memory.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "fused.h"

/*
 * The mappings guarded: the whole device, or (mapped through the mount,
 * metamap.c) the superblock and the log.
 */
static struct {
	uint8_t *base;
	size_t len;
} guard[2];
static volatile sig_atomic_t lost;
static const char *lost_why;
static uint64_t size_seen_pass; /* fs->pass of the last look at the size */

/* Replace the mappings in place: later accesses read zeros, never fault. */
static int swap_out_mapping(void)
{
	for (size_t i = 0; i < 2; i++) {
		if (guard[i].base &&
		    mmap(guard[i].base, guard[i].len, PROT_READ | PROT_WRITE,
			 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_NORESERVE,
			 -1, 0) == MAP_FAILED)
			return -1;
	}
	return 0;
}

static bool guarded(const uint8_t *a)
{
	for (size_t i = 0; i < 2; i++)
		if (guard[i].base && a >= guard[i].base &&
		    a < guard[i].base + guard[i].len)
			return true;
	return false;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (guarded(si->si_addr) && swap_out_mapping() == 0) {
		lost_why = "a memory access to it failed (SIGBUS)";
		lost = 1;
		return; /* the access is retried and reads a zero page */
	}
	/* Not our mapping: die of it as we would have, with a core. */
	signal(sig, SIG_DFL);
}

void fused_devloss_arm(struct fused *fs)
{
	struct sigaction sa;

	memset(guard, 0, sizeof(guard));
	if (fs->dev.kind == FAMFS_DEV_META) {
		guard[0].base = fs->dev.meta_sb_map;
		guard[0].len = fs->dev.meta_sb_map ? sizeof(*fs->dev.sb) : 0;
		guard[1].base = fs->dev.meta_log_map;
		guard[1].len = fs->dev.meta_log_map ? fs->dev.log_len : 0;
	} else {
		guard[0].base = fs->dev.base;
		guard[0].len = fs->dev.size;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* Look at an image file's size once per pass (a syscall each time). */
static bool size_unseen(struct fused *fs)
{
	if (fs->pass && fs->pass == size_seen_pass)
		return false;
	size_seen_pass = fs->pass;
	return true;
}

bool fused_dev_lost(struct fused *fs)
{
	struct stat st;

	/*
	 * A shrunk image file faults only where it shrank: look first (a
	 * block device has no st_size to compare). A fault is caught at any
	 * time; only this look waits for the next pass.
	 */
	if (!lost && guard[0].base && fs->dev.kind == FAMFS_DEV_FILE &&
	    size_unseen(fs) && fstat(fs->dev.fd, &st) == 0 &&
	    S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < guard[0].len && swap_out_mapping() == 0) {
		lost_why = "the image file is now smaller than the file system";
		lost = 1;
	}
	if (!lost)
		return false;
	if (!fs->dev_lost) {
		fs->dev_lost = true;
		snprintf(fs->health, sizeof(fs->health), "lost");
		fused_log(L_ERR, "device %s is gone: %s. Its files now fail with EIO; unmount %s",
			  fs->devpath, lost_why, fs->mountpoint);
	}
	return true;
}
