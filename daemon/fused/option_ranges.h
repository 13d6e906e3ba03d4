/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The largest value of each numeric option famfs-fused takes. mount.famfs
 * refuses a value out of range before it starts the daemon, with the
 * same numbers.
 */
#ifndef FUSED_OPTION_RANGES_H
#define FUSED_OPTION_RANGES_H

#define FUSED_POLL_MS_MAX 3600000   /* an hour */
#define FUSED_READAHEAD_KB_MAX 65536 /* 64 MiB */
#define FUSED_WRITER_WAIT_MAX 3600  /* seconds */
#define FUSED_COMMIT_DELAY_MS_MAX 60000

#endif
