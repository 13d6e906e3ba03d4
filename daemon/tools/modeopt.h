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

#include <getopt.h>
#include <stdbool.h>

/* getopt value of --fuse, which has no short form upstream either */
#define MODEOPT_FUSE 0x100

/* clang-format off */
#define MODEOPT_LONG_OPTIONS                               \
	{ "fuse", no_argument, NULL, MODEOPT_FUSE },       \
	{ "nofuse", no_argument, NULL, 'F' },              \
	{ "nodax", no_argument, NULL, 'D' },               \
	{ "set-daxmode", no_argument, NULL, 'M' }
/* clang-format on */

/* their short forms, for a getopt string */
#define MODEOPT_SHORT "FDM"

struct modeopt {
	bool set_daxmode;
};

/*
 * Handle option @c for program @prog: 1 when it was one of these (and is
 * accepted), -1 when it is refused (a one-line reason was printed), 0 when
 * @c is not one of them.
 */
int modeopt_parse(struct modeopt *m, const char *prog, int c);
/*
 * Do what the options ask for DEVICE @path before it is opened: with -M,
 * move a devdax device to famfs_dax (nothing to do for an image file).
 * Returns 0, or -1 after printing why not.
 */
int modeopt_apply(const struct modeopt *m, const char *prog, const char *path,
		  int verbose);

#endif
