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

# ---- systemd-analyze verify ---------------------------------------------
verify_units() {
	R=$W/root
	# The programs where the packages put them (prefix /usr), the units
	# they depend on (sysinit.target, modprobe@.service...) from this host.
	mkdir -p "$R/usr/lib/systemd/system" "$R/usr/bin" "$R/usr/sbin"
	for d in /lib/systemd/system /usr/lib/systemd/system; do
		[ -d "$d" ] && cp -an "$d/." "$R/usr/lib/systemd/system/"
	done
	cp units/famfs.service units/famfs@.service "$R/usr/lib/systemd/system/"
	cp "$B/daemon/tools/famfs" "$R/usr/bin/"
	cp "$B/daemon/fused/famfs-fused" "$R/usr/sbin/"
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
	p=$(meson introspect "$B" --buildoptions | /usr/bin/python3 -c \
		'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
	for f in systemd/system/famfs.service systemd/system/famfs@.service \
		udev/rules.d/60-famfs.rules modules-load.d/famfs-fuse.conf; do
		ls "$D$p/lib/$f" || return 1
	done
	grep -q '^SUBSYSTEM=="dax".*TAG+="systemd"' "$D$p/lib/udev/rules.d/60-famfs.rules" &&
		grep -qx famfs_fuse "$D$p/lib/modules-load.d/famfs-fuse.conf"
}
check "meson install puts units, udev rule and modules-load file under PREFIX/lib" installed_files

# ---- famfs status --watch under a notify socket ---------------------------
watch_notify() {
	mkdir -p "$W/sys/module" "$W/mnt/.meta"
	printf 'mode=famfs\nrole=master\npid=4242\nunit=famfs@x.service\n' >"$W/mnt/.meta/.status"
	printf '/dev/dax0.0 %s famfs_fuse.famfs rw 0 0\n' "$W/mnt" >"$W/mounts"
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

[ $fails -eq 0 ]
