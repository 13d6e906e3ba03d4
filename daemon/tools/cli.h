/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the famfs subcommands share: exit codes, option parsing, finding
 * the famfs a path names (mounted, or an unmounted device given with
 * --device), reaching a file's bytes, progress and worker threads.
 */
#ifndef FAMFS_CLI_H
#define FAMFS_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "libfamfs.h"
#include "namespace.h"
#include "tool_opts.h"
#include "writer.h"

/*
 * Exit codes of the upstream-compatible commands (mkdir, creat, cp, verify,
 * flush, logplay, chkread, mount, status): upstream returns 1 for any
 * failure, and so do we. Upstream also returns 1 (or 0, after printing
 * the help) for a bad command line; we return 2 so a script can tell a
 * typo from a failure. getmap and check keep upstream's own codes.
 */
#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

/* -t/--threadct above this is refused, as upstream's creat and verify do */
#define CLI_MAX_THREADS 256

/* Set by global options of famfs(8), before the subcommand runs. */
extern const char *cli_device; /* --device DEV */
extern bool cli_dryrun;	       /* --dryrun */

/*
 * Read a command's options from the table @opts (tool_opts_parse()).
 * Returns -1 to go on with the operands at optind; otherwise the exit code
 * to return: @ok once the help was printed on stdout, @bad after a usage
 * error (and the line that points to --help).
 */
int cli_parse_opts(int argc, char **argv, const struct tool_opt *opts,
		   void (*usage)(FILE *), int ok, int bad);
/*
 * After the one line that says what is wrong with the command line:
 * "Try 'famfs CMD --help' for more information." on stderr; returns @code.
 */
int cli_usage_error(int code);
/*
 * The whole option parsing of a command whose options are only -D/--device,
 * -v/--verbose and -h/--help: *@device starts as --device's value. Returns
 * -1 to go on with the operands at optind, else the exit code to return
 * (the help was printed, or a usage error said).
 */
int cli_parse_device_verbose(int argc, char **argv, void (*usage)(FILE *),
			     const char **device, int *verbose);
extern const char *cli_cmd; /* the subcommand running, for messages */
/* "famfs CMD" (or "famfs"), for the messages */
const char *cli_prog(void);
/*
 * The device or mount a command opened last (cli_fs_open()), for the
 * message when its memory goes away under us: see famfs.c's SIGBUS.
 */
extern char cli_open_dev[4096];

/*
 * Parsers (famfs_parse_number and famfs_parse_size): print a message
 * naming @what and return -1 on junk or a value out of range.
 */
int cli_parse_size(const char *what, const char *s, uint64_t *out);
int cli_parse_number(const char *what, const char *s, uint64_t min,
		     uint64_t max, uint64_t *out);
int cli_parse_mode(const char *what, const char *s, uint32_t *out);
int cli_parse_u32(const char *what, const char *s, uint32_t *out);

/*
 * Upstream's -m/--mmap and -r/--read (how to reach the log), which change
 * nothing here but exclude each other: the option's letter into an int.
 */
int cli_opt_how(const struct tool_opt *o, const char *arg);
/* The same, with a note on stderr that says it changes nothing */
int cli_opt_how_noted(const struct tool_opt *o, const char *arg);

/* The owner options -m, -u, -g of the commands that make files and dirs. */
struct cli_owner {
	uint32_t mode, uid, gid;
};

/* Table entries (tool_opts.h) for the parsers below */
#define CLI_OWNER_OPTS(own)                                   \
	OPT_VALUE('m', "mode", &(own)->mode, cli_opt_mode),   \
	OPT_VALUE('u', "uid", &(own)->uid, cli_opt_u32),      \
	OPT_VALUE('g', "gid", &(own)->gid, cli_opt_u32)

/*
 * Option values for a table: an octal mode, a 32-bit number and a size
 * (k, m, g suffixes) into the uint32_t or uint64_t the entry points to.
 * The messages name the option by its letter.
 */
int cli_opt_mode(const struct tool_opt *o, const char *arg);
int cli_opt_u32(const struct tool_opt *o, const char *arg);
int cli_opt_size(const struct tool_opt *o, const char *arg);

/* The interleave options -N, -B, -C shared by creat and cp. */
struct cli_interleave {
	bool set;
	uint32_t nstrips, nbuckets;
	uint64_t chunk_size;
};

/* Table entries for -N, -B, -C into a struct cli_interleave */
#define CLI_INTERLEAVE_OPTS(il)                                  \
	OPT_VALUE('N', "nstrips", (il), cli_opt_nstrips),        \
	OPT_VALUE('B', "nbuckets", (il), cli_opt_nbuckets),      \
	OPT_VALUE('C', "chunksize", (il), cli_opt_chunksize)

int cli_opt_nstrips(const struct tool_opt *o, const char *arg);
int cli_opt_nbuckets(const struct tool_opt *o, const char *arg);
int cli_opt_chunksize(const struct tool_opt *o, const char *arg);
/* Fill in defaults; NULL in *@out for a contiguous allocation. */
int cli_interleave_finish(struct cli_interleave *il,
			  struct famfs_interleave *out_buf,
			  const struct famfs_interleave **out);

/*
 * The famfs a command works on. Mounted: @dev was opened through the
 * mount's .meta files, @root is the mount point, and file bytes move
 * through the mounted files. Device: @dev maps the device or image and
 * file bytes move through that mapping by fmap.
 */
struct cli_fs {
	bool mounted;
	bool by_device; /* opened with --device: paths are famfs-relative */
	char root[PATH_MAX];
	struct famfs_dev dev;
};

/*
 * Open the famfs for @path. With @device (the --device option) paths are
 * relative to the root of the famfs on that device; otherwise @path must
 * lie inside a mounted famfs (it need not exist yet; its nearest existing
 * ancestor is used). @rw asks for the right to append to the log: on a
 * client host this fails with EPERM and a message that says so.
 */
int cli_fs_open(struct cli_fs *fs, const char *device, const char *path,
		bool rw);
/*
 * Only find the mount that holds @path, for commands that just open its
 * files through the mount (flush, verify): the metadata in .meta is
 * root's, and they need none of it (fs->dev stays closed).
 */
int cli_mount_open(struct cli_fs *fs, const char *path);
/* The same, saying nothing when @path is in no famfs mount (-ENOENT) */
int cli_mount_find(struct cli_fs *fs, const char *path);
/*
 * The mounted famfs that holds @path, opened (cli_fs_open(), read-only),
 * when this host is its master: its daemon can create there itself
 * (mkdir(2), creat(2)). -1 otherwise, the reason unsaid (the log path
 * says it).
 */
int cli_master_mount(struct cli_fs *fs, const char *path);
void cli_fs_close(struct cli_fs *fs);
/* One value of the daemon's <root>/.meta/.status; -ENOENT if absent. */
int cli_mount_status(const char *root, const char *key, char *val,
		     size_t len);

/*
 * The famfs-relative path ("a/b/c", "" for the root) of @path. Mounted:
 * @path may be relative to the working directory and name something that
 * does not exist yet. Device: @path is taken relative to the famfs root.
 * Returns -1 after printing why (outside the famfs, too long, "..").
 */
int cli_relpath(const struct cli_fs *fs, const char *path,
		char rel[FAMFS_PATH_LEN]);
/* The same for something to be created: refuses the reserved .meta. */
int cli_relpath_new(const struct cli_fs *fs, const char *path,
		    char rel[FAMFS_PATH_LEN]);
/* .meta at the root is the daemon's: no file or directory may be made there */
bool cli_reserved(const char *rel);
/* "<root>/<rel>" for a mounted famfs. */
void cli_mount_path(const struct cli_fs *fs, const char *rel, char *buf,
		    size_t len);
/* What a user should see for @rel: the path in the mount, or DEV:rel. */
const char *cli_show(const struct cli_fs *fs, const char *rel, char *buf,
		     size_t len);

/* Start a writer, printing a message on failure. */
int cli_writer_begin(struct cli_fs *fs, struct famfs_writer *w,
		     const char *cmd);
/*
 * The start of every command that logs: open the famfs that holds @path
 * for appending (cli_fs_open()) and take the writer's lock. -1 after
 * printing why; nothing is left open then.
 */
int cli_writer_open(struct cli_fs *fs, struct famfs_writer *w,
		    const char *device, const char *path, const char *cmd);
/* Release what cli_writer_open() took. */
void cli_writer_close(struct cli_fs *fs, struct famfs_writer *w);

/* A famfs file opened for its bytes. */
struct cli_file {
	const struct cli_fs *fs;
	int fd; /* mounted */
	struct famfs_omf_fmap fmap; /* device */
	uint64_t size;
	char name[PATH_MAX + 96]; /* for messages only: escaped, never a path */
};

/*
 * Open file @rel of @fs. Device mode looks it up in @ns (which the caller
 * loaded or holds in a writer); mounted mode opens it in the mount.
 */
int cli_file_open(struct cli_file *f, const struct cli_fs *fs,
		  const struct famfs_ns *ns, const char *rel, bool write);
ssize_t cli_file_pread(struct cli_file *f, void *buf, size_t len,
		       uint64_t off);
ssize_t cli_file_pwrite(struct cli_file *f, const void *buf, size_t len,
			uint64_t off);
void cli_file_close(struct cli_file *f);

/* Load the namespace of @fs for reading, printing a message on failure. */
int cli_ns_load(struct cli_fs *fs, struct famfs_ns *ns, const char *cmd);

/*
 * Progress on stderr for long operations, only when stderr is a terminal
 * (scripts and logs get no carriage-return noise). Thread safe.
 */
struct cli_progress;
struct cli_progress *cli_progress_start(const char *verb, uint64_t total);
void cli_progress_add(struct cli_progress *p, uint64_t bytes);
void cli_progress_end(struct cli_progress *p);

/*
 * Run fn(i, arg) for i in [0, n) on up to @threads threads (1: in this
 * thread). Returns the number of calls that returned non-zero.
 */
unsigned int cli_parallel(unsigned int threads, unsigned int n,
			  int (*fn)(unsigned int i, void *arg), void *arg);
/*
 * -t N of creat and verify, into a uint32_t: 0 (one per CPU) to
 * CLI_MAX_THREADS.
 */
int cli_opt_threads(const struct tool_opt *o, const char *arg);
/* @threads, or the number of CPUs for 0. */
uint32_t cli_threads_or_cpus(uint32_t threads);

/* The test pattern of creat -r / verify -S (upstream's, for compatibility) */
struct cli_pattern {
	uint64_t s[2];
};

void cli_pattern_init(struct cli_pattern *p, uint64_t seed);
/* Fill @len bytes (a multiple of 4, except at the very end). */
void cli_pattern_fill(struct cli_pattern *p, void *buf, size_t len);
/* Compare; returns the offset of the first 4-byte word that differs, or -1 */
int64_t cli_pattern_check(struct cli_pattern *p, const void *buf, size_t len);

/* "%o" etc. helpers for messages */
const char *cli_errno_name(int err);

#endif
