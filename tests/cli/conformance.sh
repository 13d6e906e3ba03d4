# shellcheck shell=bash
# The CLI conformance section, sourced by tests/cli/run.sh: each case runs a
# command as an upstream famfs script does (the options and output lines
# named in upstream's CLI reference and source) and asserts the exit code
# and the line such a script parses. Uses run.sh's helpers (run, check,
# mcase, has_out, has_err), its image $IMG and, when mounted, $MNT/$MIMG.

# -- upstream's mode options ----------------------------------------------

t_c_kill_nosuper() {
	local img=$T/c-kill.img
	rm -f "$img" && truncate -s 64M "$img" || return 1
	# a device that never held a famfs: killing is a no-op, not an error
	run 0 "$MKFS" -f -k "$img" && has_out "nothing to invalidate" || return 1
	newimg "$img" 64M || return 1
	run 0 "$MKFS" -f -k "$img" && has_out "invalidated" || return 1
	run 0 "$MKFS" -f -k "$img" || return 1
	run 1 "$MKFS" -f -k "$T/c-no-such.img"
}
check "compat: mkfs.famfs -f -k succeeds on a device with no superblock" t_c_kill_nosuper

t_c_mkfs_opts() {
	local img=$T/c-opts.img
	rm -f "$img" && truncate -s 64M "$img" || return 1
	# upstream's fuse-mode scripts: mkfs.famfs --fuse [--nodax] DEV
	run 0 "$MKFS" --fuse --nodax "$img" || return 1
	run 0 "$MKFS" -v -f "$img" || return 1
	run 0 "$MKFS" --verbose -f -D "$img" || return 1
	run 0 "$MKFS" --set-daxmode -f "$img" || return 1
	run 0 "$MKFS" -M -v -f "$img" && has_out "not a devdax device" || return 1
	run 2 "$MKFS" --nofuse "$img" && has_err "standalone" || return 1
	run 2 "$MKFS" -F "$img" && has_err "standalone" || return 1
	run 0 "$MKFS" -? && has_out "Usage: mkfs.famfs" || return 1
	run 2 "$MKFS" --no-such-option "$img"
}
check "compat: mkfs.famfs -v/--verbose, --fuse, -D/--nodax, -M accepted; -F refused with a reason" t_c_mkfs_opts

t_c_threads() {
	run 2 F verify -D "$IMG" -S 42 -f f42 --threadct 257 && has_err "256" || return 1
	run 2 F verify -D "$IMG" -m f42,42 -t 1000 || return 1
	run 0 F verify -D "$IMG" -m f42,42 -t 256 || return 1
	run 2 F creat -D "$IMG" -M c-t1,2m -t 257 && has_err "256" || return 1
	run 0 F verify -D "$IMG" -v -S 42 -f f42 && has_out "match"
}
check "compat: verify -v accepted; creat/verify --threadct above 256 refused" t_c_threads

t_c_logplay_opts() {
	run 0 F logplay -D "$IMG" -c || return 1
	run 0 F logplay -D "$IMG" --client -m || return 1
	run 2 F logplay -D "$IMG" -r -m && has_err "mutually exclusive" || return 1
	run 2 F logplay -D "$IMG" --mmap --read && has_err "mutually exclusive" || return 1
	FAMFS_MOUNT_HELPER=/bin/true run 2 "$FAMFS" mount -r -m "$IMG" "$T" &&
		has_err "mutually exclusive" || return 1
	FAMFS_MOUNT_HELPER=/bin/true run 0 "$FAMFS" mount --fuse -M -D "$IMG" "$T" &&
		has_out "fallback=no"
}
check "compat: logplay -c accepted; logplay and mount -r -m refused as mutually exclusive; mount --fuse -M" t_c_logplay_opts

# -- through a mount ------------------------------------------------------

t_c_mkmeta_dev() {
	run 0 F mkmeta "$MIMG" && has_out "nothing to do" || return 1
	run 0 F mkmeta "$MNT" || return 1
	run 1 F mkmeta "$IMG" && has_err "not mounted"
}
mcase "compat: famfs mkmeta DEVICE (the mounted device)" t_c_mkmeta_dev

t_c_flush_find() {
	local files
	files=$(find "$MNT" -type f) || return 1
	grep -q "/.meta/" <<<"$files" || { echo "# find lists no .meta file"; return 1; }
	# shellcheck disable=SC2086 # one argument per file, as upstream's scripts do
	run 0 F flush $files || return 1
	run 0 F flush -v "$MNT/.meta/.status" && has_out "skipped"
}
mcase "compat: famfs flush \$(find MNT -type f) accepts every file, .meta skipped (-v says so)" t_c_flush_find
