#!/bin/sh
# The units tier: what units/ installs, checked on this host (no systemd
# runs here as PID 1; tests/e2e boots them for real).
#   - systemd-analyze verify is silent on both units, installed with the
#     programs they run into a scratch root (DESTDIR install of build/);
#   - famfs status --watch, as famfs.service runs it: READY=1 and a STATUS=
#     naming the module state and every mount, a new STATUS= when that
#     changes, exit 0 on SIGTERM;
#   - mount.famfs names the unit as systemd does (systemd-escape --path).
# One line per case: ok - NAME / not ok - NAME.
set -u
cd "$(dirname "$0")/../.." || exit 1
top=$(pwd)
B=${FAMFS_BUILD:-$top/build}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
# The plan: every check call in this file runs once.
echo "1..$(grep -Ec '^[[:space:]]*check "' "$0")"

check() { # NAME CMD...
	name=$1
	shift
	if "$@" >"$W/out" 2>&1; then
		echo "ok - $name"
	else
		sed 's/^/#   /' "$W/out" | tail -n 30
		echo "not ok - $name"
		fails=$((fails + 1))
	fi
}

[ -x "$B/daemon/tools/famfs" ] || { echo "not ok - units tier: no build in $B (make)"; exit 1; }
prefix=$(meson introspect "$B" --buildoptions | /usr/bin/python3 -c \
	'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')

# ---- systemd-analyze verify ---------------------------------------------
verify_units() {
	R=$W/root
	# The units as this build configured them, the programs where they
	# name them (the build's prefix), the units they depend on
	# (sysinit.target, modprobe@.service...) from this host.
	mkdir -p "$R/usr/lib/systemd/system" "$R$prefix/bin" "$R$prefix/sbin"
	for d in /lib/systemd/system /usr/lib/systemd/system; do
		[ -d "$d" ] && cp -an "$d/." "$R/usr/lib/systemd/system/"
	done
	cp "$B/units/famfs.service" "$B/units/famfs@.service" "$R/usr/lib/systemd/system/"
	grep -qx "ExecStart=$prefix/bin/famfs status --watch" "$R/usr/lib/systemd/system/famfs.service" ||
		{ echo "famfs.service does not run $prefix/bin/famfs"; return 1; }
	grep -q "^ExecStart=$prefix/sbin/famfs-fused " "$R/usr/lib/systemd/system/famfs@.service" ||
		{ echo "famfs@.service does not run $prefix/sbin/famfs-fused"; return 1; }
	cp "$B/daemon/tools/famfs" "$R$prefix/bin/"
	cp "$B/daemon/fused/famfs-fused" "$R$prefix/sbin/"
	# Silent means clean: unknown keys are only warned about.
	systemd-analyze --root="$R" --man=no verify famfs.service \
		famfs@mnt-famfs.service >"$W/verify" 2>&1
	rc=$?
	cat "$W/verify"
	[ $rc -eq 0 ] && [ ! -s "$W/verify" ]
}
check "systemd-analyze verify: famfs.service and famfs@.service are clean" verify_units

installed_files() {
	D=$W/dest
	DESTDIR=$D meson install -C "$B" --no-rebuild --quiet >/dev/null || return 1
	p=$prefix
	for f in systemd/system/famfs.service systemd/system/famfs@.service \
		udev/rules.d/60-famfs.rules modules-load.d/famfs-fuse.conf; do
		ls "$D$p/lib/$f" || return 1
	done
	grep -q '^SUBSYSTEM=="dax".*TAG+="systemd"' "$D$p/lib/udev/rules.d/60-famfs.rules" &&
		grep -qx famfs_fuse "$D$p/lib/modules-load.d/famfs-fuse.conf"
}
check "meson install puts units, udev rule and modules-load file under PREFIX/lib" installed_files

# make install: mount(8) finds the helpers (it looks in /sbin only), the
# default famfs.conf lands where mount.famfs reads it, and an
# administrator's edited famfs.conf survives a second install.
make_install() {
	D=$W/mi
	make -s install BUILD="$B" DESTDIR="$D" >"$W/mi.log" 2>&1 || { cat "$W/mi.log"; return 1; }
	h=/sbin
	[ "$prefix" = /usr ] && h=/usr/sbin
	[ -x "$D$h/mount.famfs" ] || { echo "no $h/mount.famfs"; return 1; }
	[ "$(readlink "$D$h/mount.fuse.famfs")" = mount.famfs ] || { echo "no $h/mount.fuse.famfs"; return 1; }
	[ -x "$D$prefix/sbin/famfs-fused" ] && [ -x "$D$prefix/bin/famfs" ] &&
		[ -x "$D$prefix/sbin/mkfs.famfs" ] || { echo "programs missing under $prefix"; return 1; }
	[ -f "$D$prefix/share/man/man8/famfs.8" ] || { echo "no famfs(8)"; return 1; }
	# upstream famfs's daemon name, and its man page
	[ "$(readlink "$D$prefix/sbin/famfs_fused")" = famfs-fused ] &&
		[ "$(readlink "$D$prefix/share/man/man8/famfs_fused.8")" = famfs-fused.8 ] ||
		{ echo "no famfs_fused symlinks under $prefix"; return 1; }
	cmp etc/famfs.conf "$D/etc/famfs/famfs.conf" || return 1
	echo "role = client" >>"$D/etc/famfs/famfs.conf"
	make -s install BUILD="$B" DESTDIR="$D" >"$W/mi.log" 2>&1 || { cat "$W/mi.log"; return 1; }
	tail -n 1 "$D/etc/famfs/famfs.conf" | grep -qx "role = client" ||
		{ echo "make install overwrote an edited famfs.conf"; return 1; }
}
check "make install: helpers where mount(8) looks, famfs_fused, famfs.conf installed once and kept" make_install

# What the packages ship for applications: pcq with its page, and
# libfamfs-cache as an application builds against it (pkg-config, the
# header, the versioned .so) and runs with it.
cache_library() {
	D=$W/lib
	DESTDIR=$D meson install -C "$B" --no-rebuild --quiet >/dev/null || return 1
	[ -x "$D$prefix/bin/pcq" ] && [ -f "$D$prefix/share/man/man1/pcq.1" ] &&
		[ -f "$D$prefix/share/man/man3/famfs_cache.3" ] ||
		{ echo "pcq, pcq(1) or famfs_cache(3) missing"; return 1; }
	pc=$(find "$D" -name famfs-cache.pc) && [ -n "$pc" ] || { echo "no famfs-cache.pc"; return 1; }
	so=$(find "$D" -name 'libfamfs-cache.so.1') && [ -n "$so" ] || { echo "no libfamfs-cache.so.1"; return 1; }
	objdump -p "$so" | grep -q 'SONAME *libfamfs-cache.so.1$' || { echo "wrong SONAME"; return 1; }
	# Exported: the seven functions, each under its version, nothing else.
	nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sort >"$W/syms"
	printf '%s\n' famfs_cache_barrier@@FAMFS_CACHE_1 \
		famfs_cache_copy@@FAMFS_CACHE_1.1 famfs_cache_flush@@FAMFS_CACHE_1 \
		famfs_cache_flush_insn@@FAMFS_CACHE_1 \
		famfs_cache_invalidate@@FAMFS_CACHE_1 \
		famfs_cache_invalidate_insn@@FAMFS_CACHE_1 \
		famfs_cache_zero@@FAMFS_CACHE_1.1 | diff - "$W/syms" || return 1
	cat >"$W/app.c" <<'EOF2'
#include <famfs/cache.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	static char buf[4096], src[300];
	memset(buf, 7, sizeof(buf));
	memset(src, 9, sizeof(src));
	famfs_cache_flush(buf, sizeof(buf));
	famfs_cache_invalidate(buf + 1, 100);
	famfs_cache_barrier();
	famfs_cache_copy(buf + 5, src, sizeof(src));
	famfs_cache_zero(buf + 1000, 200);
	printf("%s %s %d %d%d%d %d%d%d\n", famfs_cache_flush_insn(),
	       famfs_cache_invalidate_insn(), buf[4095], buf[4], buf[5],
	       buf[304], buf[305], buf[999], buf[1000] + buf[1199] + buf[1200]);
	return 0;
}
EOF2
	flags=$(PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs famfs-cache) || return 1
	cc -Wall -Werror -o "$W/app" "$W/app.c" $flags || return 1
	LD_LIBRARY_PATH=$(dirname "$so") "$W/app" >"$W/app.out" || return 1
	cat "$W/app.out"
	grep -Eqx '(clwb|clflushopt|clflush) (clflushopt|clflush) 7 799 777' "$W/app.out"
}
check "libfamfs-cache: pkg-config, header and .so build and run an application; pcq and its pages installed" cache_library

# ---- famfs status --watch under a notify socket ---------------------------
watch_notify() {
	mkdir -p "$W/sys/module" "$W/mnt/.meta"
	printf 'mode=famfs\nrole=master\npid=4242\nunit=famfs@x.service\n' >"$W/mnt/.meta/.status"
	printf '/dev/dax0.0 %s famfs_fuse.famfs rw,user_id=0,group_id=0 0 0\n' "$W/mnt" >"$W/mounts"
	FAMFS_MOUNTS=$W/mounts FAMFS_SYSFS=$W/sys /usr/bin/python3 - "$B/daemon/tools/famfs" "$W" <<'PY'
import os, signal, socket, subprocess, sys, time
famfs, w = sys.argv[1], sys.argv[2]
path = os.path.join(w, "notify")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(20)
env = dict(os.environ, NOTIFY_SOCKET=path)
p = subprocess.Popen([famfs, "status", "--watch"], env=env,
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
def status():
    while True:
        msg = s.recv(4096).decode()
        for line in msg.split("\n"):
            if line.startswith("STATUS="):
                return msg, line[7:]
msg, st = status()
print("first:", msg.replace("\n", " | "))
assert "READY=1" in msg, msg
assert "famfs_fuse not loaded" in st and "1 mount" in st, st
assert w + "/mnt (famfs mode, master, healthy)" in st, st
# The module appears: the next look (every 5 s) reports it.
os.makedirs(os.path.join(w, "sys/module/famfs_fuse"))
with open(os.path.join(w, "sys/module/famfs_fuse/version"), "w") as f:
    f.write("9.9.9\n")
t0 = time.time()
msg, st = status()
print("second after %.1f s:" % (time.time() - t0), st)
assert "famfs_fuse loaded" in st, st
# The daemon goes away: the mount is reported unhealthy.
os.unlink(os.path.join(w, "mnt/.meta/.status"))
msg, st = status()
print("third:", st)
assert "NOT HEALTHY" in st, st
p.send_signal(signal.SIGTERM)
out = p.communicate(timeout=20)[0].decode()
print(out)
assert p.returncode == 0, p.returncode
assert "kernel module: famfs_fuse loaded (9.9.9)" in out, out
assert "pid 4242, famfs@x.service" in out, out
PY
}
check "famfs status --watch: READY=1, STATUS= follows module and mounts, SIGTERM exits 0" watch_notify

# ---- unit names ---------------------------------------------------------
unit_names() {
	command -v systemd-escape >/dev/null || { echo "systemd-escape missing"; return 1; }
	for p in /mnt/famfs / /mnt/fam-fs /srv//data/ "/mnt/with space" /mnt/.hidden \
		/mnt/a.b /mnt/x_y:z /mnt/ü /data/famfs0 '/mnt/back\slash'; do
		want=famfs@$(systemd-escape --path -- "$p").service
		got=$(FAMFS_CONF=/dev/null "$B/daemon/mount/mount.famfs" --unit-name "$p") || return 1
		echo "$p -> $got (systemd: $want)"
		[ "$got" = "$want" ] || return 1
	done
}
check "mount.famfs --unit-name matches systemd-escape --path" unit_names

# A restart takes the FUSE connection over from the fd store: the unit
# must give the daemon a store that holds its four fds (two on 6.12), and
# treat its hand-over exit (75, SIGUSR1) as a restart rather than a failure.
fd_store() {
	u=$B/units/famfs@.service
	max=$(sed -n 's/^FileDescriptorStoreMax=//p' "$u")
	echo "FileDescriptorStoreMax=$max"
	[ "${max:-0}" -ge 4 ] &&
		grep -qx 'SuccessExitStatus=75' "$u" &&
		grep -qx 'RestartForceExitStatus=75' "$u" &&
		grep -q 'define FUSED_EXIT_HANDOVER 75$' daemon/fused/takeover.h
}
check "famfs@.service: fd store for the FUSE connection, hand-over exit 75 restarts" fd_store

[ $fails -eq 0 ]
