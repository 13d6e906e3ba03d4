// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>

#include "libfamfs.h"
#include "modeopt.h"

int modeopt_nofuse(const struct tool_opt *o, const char *arg)
{
	const struct modeopt *m = o->dest;

	(void)arg;
	fprintf(stderr,
		"%s: -F/--nofuse asks for upstream's standalone famfs v1 kernel module, which famfs-fuse does not use; drop it\n",
		m->prog);
	return -1;
}

int modeopt_apply(const struct modeopt *m, const char *path, int verbose)
{
	const char *prog = m->prog;
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
