/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Upstream's options that choose how mkfs.famfs and famfs fsck reach a
 * device: --fuse, -F/--nofuse, -D/--nodax and -M/--set-daxmode. Upstream
 * reaches a device in famfs mode through a temporary mount of its own
 * (FUSE or its standalone v1 module); our tools always map the device node,
 * which device_dax and famfs_dax both serve, so only -M has work to do.
 */
#ifndef FAMFS_MODEOPT_H
#define FAMFS_MODEOPT_H

#include <stdbool.h>

#include "tool_opts.h"

/*
 * Table entries (tool_opts.h) for the four, into a struct modeopt.
 * --fuse: upstream's FUSE path is the only one here. --nodax: upstream
 * avoids mapping a device that is in famfs mode; famfs_dax serves the
 * device node, so mapping it is always allowed. Neither changes anything.
 */
#define MODEOPT_OPTS(m)                                       \
	OPT_CALL(0, "fuse", NULL, tool_opt_ignored),          \
	OPT_CALL('F', "nofuse", (m), modeopt_nofuse),         \
	OPT_CALL('D', "nodax", NULL, tool_opt_ignored),       \
	OPT_FLAG('M', "set-daxmode", &(m)->set_daxmode)

struct modeopt {
	const char *prog; /* for the messages: "mkfs.famfs", "famfs fsck" */
	bool set_daxmode;
};

/* -F/--nofuse is refused, with the reason */
int modeopt_nofuse(const struct tool_opt *o, const char *arg);
/*
 * Do what the options ask for DEVICE @path before it is opened: with -M,
 * move a devdax device to famfs_dax (nothing to do for an image file).
 * Returns 0, or -1 after printing why not.
 */
int modeopt_apply(const struct modeopt *m, const char *path, int verbose);

#endif
