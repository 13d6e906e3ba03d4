// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>

#include "libfamfs.h"
#include "modeopt.h"

int modeopt_parse(struct modeopt *m, const char *prog, int c)
{
	switch (c) {
	case MODEOPT_FUSE:
	case 'D':
		/*
		 * --fuse: upstream's FUSE path is the only one here.
		 * --nodax: upstream avoids mapping a device that is in famfs
		 * mode; famfs_dax serves the device node, so mapping it is
		 * always allowed and nothing changes.
		 */
		return 1;
	case 'F':
		fprintf(stderr,
			"%s: -F/--nofuse asks for upstream's standalone famfs v1 kernel module, which famfs-fuse does not use; drop it\n",
			prog);
		return -1;
	case 'M':
		m->set_daxmode = true;
		return 1;
	}
	return 0;
}

int modeopt_apply(const struct modeopt *m, const char *prog, const char *path,
		  int verbose)
{
	int rc;

	if (!m->set_daxmode)
		return 0;
	if (famfs_kernel_dax_driver() && !famfs_kernel_dax_node_maps()) {
		/* This tool could not read the device there. */
		if (verbose)
			printf("%s: -M: %s cannot be read on %s, so %s stays on device_dax; famfs-fused moves it there when it mounts\n",
			       prog, famfs_kernel_dax_driver(),
			       famfs_kernel_dax_driver(), path);
		return 0;
	}
	rc = famfs_dax_bind(path);
	if (rc == -ENODEV) {
		/* an image file: no driver to switch */
		if (verbose)
			printf("%s: -M: %s is not a devdax device; no dax mode to set\n",
			       prog, path);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "%s: -M: cannot put %s in famfs mode: %s\n",
			prog, path, famfs_errmsg());
		return -1;
	}
	if (verbose)
		printf("%s: %s is served by %s (famfs mode)\n", prog, path,
		       famfs_kernel_dax_driver());
	return 0;
}
