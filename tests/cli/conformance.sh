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
	need_f42 || return 1
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
	# --fuse selects FUSE (the only mode) and leaves the fallback policy
	# alone: upstream's scripts pass it on every mount.
	FAMFS_MOUNT_HELPER=/bin/true run 0 "$FAMFS" mount --fuse -M -D "$IMG" "$T" &&
		has_out "^/bin/true $IMG $T\$" && ! grep -q fallback "$OUT" || return 1
	FAMFS_MOUNT_HELPER=/bin/true run 0 "$FAMFS" mount -f -D -o fallback=no "$IMG" "$T" &&
		has_out "^/bin/true $IMG $T -o fallback=no\$"
}
check "compat: logplay -c accepted; logplay and mount -r -m refused as mutually exclusive; mount --fuse -M keeps the fallback policy" t_c_logplay_opts

# -- creat -B: upstream's 1 GiB buckets from its 4 GiB device minimum ------

t_c_bucket_rule() {
	local img=$T/c-big.img
	rm -f "$img" && truncate -s 4G "$img" && "$MKFS" "$img" >/dev/null || return 1
	# upstream: devsize / nbuckets must be at least 1 GiB
	run 0 F creat -D "$img" -s 8m -N 2 -B 4 c-b4 || return 1
	run 1 F creat -D "$img" -s 8m -N 2 -B 5 c-b5 && has_err "1 GiB" || return 1
	run 1 F cp -D "$img" -N 2 -B 8 "$SRC/big" c-cp8 && has_err "1 GiB" || return 1
	# smaller devices (which upstream refuses) keep small buckets
	run 0 F creat -D "$IMG" -s 8m -N 2 -B 8 c-small8
}
check "compat: creat/cp -B: buckets under 1 GiB refused on devices of 4 GiB or more, allowed below" t_c_bucket_rule

# -- fsck as upstream's scripts read it -------------------------------------

# field N of the first line of $OUT matching PATTERN (grep | awk, as they do)
field() { grep -- "$1" "$OUT" | awk -v n="$2" '{ print $n }'; }

t_c_fsck_lines() {
	local img=$T/c-fsck.img v
	newimg "$img" 256M || return 1
	run 0 F creat -D "$img" -s 10m c1 || return 1
	# smoke/prepare.sh: fsck -v DEV | grep log_len | awk '{print $2}'
	run 0 F fsck -v "$img" || return 1
	v=$(field log_len 2)
	[ "$v" = 8388608 ] || { echo "# log_len field: '$v'"; return 1; }
	run 0 "$MKFS" -f --loglen 16m "$img" || return 1
	run 0 F fsck --fuse -v "$img" || return 1
	[ "$(field log_len 2)" = 16777216 ] || { echo "# log_len after -l 16m"; return 1; }
	run 0 F creat -D "$img" -s 10m c1 || return 1
	# test_funcs.sh famfs_get_capacity, test_fio.sh: awk '{print $3}'
	run 0 F fsck "$img" || return 1
	[ "$(field "Device capacity" 3)" = 268435456 ] || { echo "# Device capacity"; return 1; }
	# 256 MiB less the superblock (2), the 16 MiB log and one 10 MiB file
	[ "$(field "Free space" 3)" = $(((256 - 2 - 16 - 10) << 20)) ] ||
		{ echo "# Free space: $(field "Free space" 3)"; return 1; }
	run 0 F fsck --human "$img" && [ "$(field "Device capacity" 3)" = 0.25G ] || return 1
	run 0 F fsck -h "$img" && [ "$(field "Free space" 3)" = 0.22G ] || return 1
	# --json stays one object with our keys
	run 0 F fsck --json -v "$img" || return 1
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["space"]["free"] != (228 << 20))' "$OUT"
}
check "compat: fsck prints upstream's log_len (-v), Device capacity and Free space (-h: GiB); --json unchanged" t_c_fsck_lines

t_c_fsck_opts() {
	local img=$T/c-fsck.img
	[ -f "$img" ] || newimg "$img" 256M || return 1	# t_c_fsck_lines's
	run 0 F fsck -? && has_out "Usage: famfs fsck" || return 1
	run 0 F fsck --help && has_out "Usage: famfs fsck" || return 1
	run 0 F fsck -m "$img" || return 1
	run 0 F fsck --read --force --nodax "$img" || return 1
	run 16 F fsck -m -r "$img" && has_err "mutually exclusive" || return 1
	run 0 F fsck -B 2 "$img" && has_out "Bitmap range 1" || return 1
	[ "$(field "Free fragments" 3 | head -1)" = 1 ] || return 1
	run 0 F fsck --nbuckets 4 -h "$img" && has_out "Wasted overhang" || return 1
	run 16 F fsck -F "$img" && has_err "standalone" || return 1
	run 16 F fsck -L "$img" && has_err "kernel modules"
}
check "compat: fsck -?, -m, -r, -f, --nodax, -B/--nbuckets as upstream; -m -r, -F, -L refused" t_c_fsck_opts

# upstream's -r is --read: a script passing it must never get a repair
t_c_fsck_r_reads() {
	local img=$T/c-torn.img
	newimg "$img" 64M || return 1
	run 0 F creat -D "$img" -s 2m t1 || return 1
	run 0 F creat -D "$img" -s 2m t2 || return 1
	# damage the last entry (index 1; entries follow the 48-byte header)
	printf 'X' | dd of="$img" bs=1 seek=$(((2 << 20) + 48 + 544 + 100)) \
		conv=notrunc 2>/dev/null || return 1
	cp "$img" "$T/c-torn.before"
	run 1 F fsck -r "$img" || return 1
	cmp -s "$img" "$T/c-torn.before" || { echo "# fsck -r wrote to the device"; return 1; }
	run 1 F fsck --read "$img" && cmp -s "$img" "$T/c-torn.before" || return 1
	run 1 F fsck --repair "$img" && has_err "repaired" || return 1
	run 0 F fsck "$img"
}
check "compat: fsck -r (upstream's --read) never repairs; --repair is long-only" t_c_fsck_r_reads

# -- shadow logplay: upstream's YAML tree ---------------------------------

t_c_shadow_dev() {
	local img=$T/c-shadow.img sp=$T/c-shadow/root y
	newimg "$img" 256M || return 1
	run 0 F mkdir -D "$img" -m 0750 -u 7 -g 8 sd || return 1
	run 0 F creat -D "$img" -s 3m -m 0640 sd/f1 || return 1
	run 0 F creat -D "$img" -s 8m -N 2 -B 4 il || return 1
	# smoke/test4.sh: the shadow dir must exist (its parent is not made)
	run 1 F logplay --shadow "$sp" --daxdev "$img" -vv || return 1
	run 2 F logplay --daxdev "$img" -vv "$sp" || return 1	# needs --shadow
	mkdir -p "$sp"
	run 2 F logplay --shadow "$sp" --shadow "$sp" --daxdev "$img" || return 1
	run 0 F logplay --shadow "$sp" --daxdev "$img" -vv && has_out "2 files, 1 directories" || return 1
	run 0 F logplay --shadow "$sp" --daxdev "$img" -vv || return 1	# again
	[ -d "$sp/sd" ] && [ "$(stat -c %a:%u:%g "$sp/sd")" = 750:7:8 ] ||
		{ echo "# shadow directory mode/owner"; return 1; }
	# one YAML document per file, upstream's keys, read by an independent parser
	$PY - "$sp/sd/f1" "$sp/il" <<'PYEOF' || return 1
import sys, yaml
f = yaml.safe_load(open(sys.argv[1]))["file"]
assert f["path"] == "sd/f1" and f["size"] == 3 << 20 and f["nextents"] == 1, f
assert f["mode"] == 0o640, f
e = f["simple_ext_list"][0]
assert e["devindex"] == 0 and e["length"] == 4 << 20 and e["offset"] % (2 << 20) == 0, e
s = yaml.safe_load(open(sys.argv[2]))["file"]["striped_ext_list"][0]
assert s["nstrips"] == 2 and s["chunk_size"] == 2 << 20 and len(s["simple_ext_list"]) == 2, s
PYEOF
	run 0 F logplay -Ss "$T/c-shadow" -D "$img" && has_out "2 YAML files checked" || return 1
	y=$sp/sd/f1
	sed -i 's/^  size: .*/  size: 1/' "$y"
	run 1 F logplay --shadow "$T/c-shadow" --shadowtest --daxdev "$img" &&
		has_err "does not match"
}
check "compat: logplay --shadow DIR --daxdev DEV writes upstream's YAML tree; --shadowtest / -Ss check it" t_c_shadow_dev

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

t_c_fsck_mounted() {
	run 8 F fsck "$MIMG" && has_err "cannot fsck by device .* when mounted" ||
		return 1
	has_err "EBUSY" || return 1
	run 8 F fsck --repair "$MIMG" || return 1
	run 0 F fsck "$MNT"
}
mcase "compat: fsck of a mounted device refuses (EBUSY, upstream's message); the mount point is checked" t_c_fsck_mounted

t_c_shadow_mount() {
	local sp=$T/c-shadow-m/root
	need_m1 && need_m "$MNT/x/y" mkdir -p "$MNT/x/y" || return 1
	mkdir -p "$sp"
	run 0 F logplay --shadow "$sp" --shadowtest "$MNT" -vv && has_out "YAML files checked" || return 1
	[ -f "$sp/m1" ] && [ -d "$sp/x/y" ] || { echo "# shadow tree from the mount"; return 1; }
	run 0 F logplay -Ss "$T/c-shadow-m" "$MNT"
}
mcase "compat: logplay --shadow DIR --shadowtest MOUNTPOINT (smoke's -Ss DIR MPT)" t_c_shadow_mount

# -- the daemon as upstream's famfs_fused ----------------------------------

# uds_get SOCK URL [METHOD BODY]: an HTTP request on a unix socket, as
# upstream's scripts make with curl --unix-socket; the body on stdout,
# non-zero unless the answer is 200.
uds_get() {
	$PY - "$@" <<'PYEOF'
import http.client, socket, sys
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
c = C("localhost", timeout=10)
c.request(sys.argv[3] if len(sys.argv) > 3 else "GET", sys.argv[2],
          body=sys.argv[4] if len(sys.argv) > 4 else None)
r = c.getresponse()
sys.stdout.write(r.read().decode())
sys.exit(r.status != 200)
PYEOF
}

t_c_fused_refusals() {
	local fd=$T/c-bin/famfs_fused mp=$T/c-fused
	[ -x "$FUSED" ] || { echo "# $FUSED not built"; return 1; }
	mkdir -p "$T/c-bin" "$T/c-shd" "$mp" && ln -sf "$FUSED" "$fd" || return 1
	run 0 "$fd" --help && has_out "daxdev=" || return 1
	run 0 "$fd" --version || return 1
	# upstream's smoke/test_shadow_yaml.sh: each of these must fail
	run 2 "$fd" -df -o source="$T/c-shd" || return 1
	run 1 "$fd" -o source=/bad/mpt "$mp" && has_err "/bad/mpt" || return 1
	run 1 "$fd" -o source=/etc/passwd "$mp" && has_err "not a famfs" || return 1
	# a shadow directory alone: we read the log from the device
	run 1 "$fd" -o source="$T/c-shd" "$mp" && has_err "no device" || return 1
	run 1 "$fd" -o daxdev="$IMG",timeout=-1 "$mp" && has_err "timeout" || return 1
	run 1 "$fd" -o daxdev="$IMG",cache=sometimes "$mp" && has_err "unknown option" || return 1
	! mountpoint -q "$mp"
}
check "compat: famfs_fused --help/--version; no mount point, a bad source, a shadow tree without device, timeout<0 refused" t_c_fused_refusals

t_c_fused_mount() {
	local fd=$T/c-bin/famfs_fused mp=$T/c-fused shd=$T/c-shd img=$T/c-fused.img sh gone_sock
	newimg "$img" 64M && chmod 600 "$img" || return 1
	mkdir -p "$mp" "$shd" "$T/c-bin" && ln -sf "$FUSED" "$fd" || return 1
	# upstream's famfs mount: daxdev, shadow, fsname, timeout, allow_other
	run 0 "$fd" -s -o daxdev="$img",shadow="$shd",fsname="$img",timeout=1.000000,allow_other,default_permissions,flock,cache=auto,readdirplus,pass_yaml,debug=0 "$mp" || return 1
	mountpoint -q "$mp" || { echo "# not mounted"; return 1; }
	sh=$($PY -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.famfs.shadow").decode())' "$mp") || return 1
	[ "$sh" = "$shd" ] || { echo "# user.famfs.shadow is '$sh', not $shd"; return 1; }
	[ -S "$shd/sock" ] && [ "$(stat -c %a "$shd/sock")" = 600 ] || { echo "# no 0600 $shd/sock"; return 1; }
	uds_get "$shd/sock" /pid >"$OUT" && has_out "^pid: $(sed -n 's/^pid=//p' "$mp/.meta/.status")\$" || return 1
	uds_get "$shd/sock" /icache_stats >"$OUT" && has_out "^  search_fail_ct: [0-9]" || return 1
	uds_get "$shd/sock" /log_level POST 7 >"$OUT" && has_out "log level set to 7" || return 1
	uds_get "$shd/sock" /icache_dump >/dev/null || return 1
	umount "$mp" || return 1
	gone_sock=0
	for _ in $(seq 50); do [ -e "$shd/sock" ] || { gone_sock=1; break; }; sleep 0.1; done
	[ "$gone_sock" = 1 ] || { echo "# $shd/sock left behind"; return 1; }
	# -o source=DEVICE: the device itself (the socket then in a directory of ours)
	run 0 "$fd" -o source="$img" "$mp" || return 1
	sh=$($PY -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.famfs.shadow").decode())' "$mp")
	uds_get "$sh/sock" /pid >/dev/null || { umount "$mp"; return 1; }
	umount "$mp"
}
mcase "compat: famfs_fused -o daxdev=,shadow=,fsname=,timeout= MPT mounts; user.famfs.shadow/sock answers; -o source=DEVICE" t_c_fused_mount
