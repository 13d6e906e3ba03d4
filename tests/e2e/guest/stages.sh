#!/bin/sh
# Guest side of the e2e tier. e2e-stage-runner (in the image) runs
# /run/e2e/stage.sh, which the host writes as `sh stages.sh STAGE`; each
# stage is one boot of the same disk. Every check prints
#   ok - CASE: what           or           not ok - CASE: what
# (with the failing command's output before it); the host folds them into
# one line per case. The share is /run/e2e: debs/cur, debs/next,
# debs/kernel-7.3, data/.
set -u

S=/run/e2e
MNT=/mnt/famfs
DEV=/dev/dax0.0
FSTAB_LINE="$DEV $MNT fuse.famfs defaults,nofail 0 0"
# A device that never appears: only its own mount may fail.
MISSING_LINE="/dev/dax9.9 /mnt/missing fuse.famfs defaults,nofail,x-systemd.device-timeout=10s 0 0"
CONF=/etc/famfs/famfs.conf
CONF_MARK="# famfs-e2e: local edit kept across upgrades"
# The data the tests write, all in the first HASH_MB MiB of the device.
HASH_MB=96
# The kernel-upgrade case: the 7.3 kernel's packages, and the sha256 of
# every file as the 6.12 kernel read them before the 7.3 kernel came.
K73=$S/debs/kernel-7.3
MANIFEST=/var/lib/famfs-e2e/manifest

export DEBIAN_FRONTEND=noninteractive
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

tmp=$(mktemp)
now() { date +%s; }

# t CASE "what" CMD...: run CMD, report it.
t() {
	c=$1 what=$2
	shift 2
	if "$@" >"$tmp" 2>&1; then
		echo "ok - $c: $what"
	else
		rc=$?
		sed 's/^/#   /' "$tmp" | tail -n 40
		echo "not ok - $c: $what (exit $rc)"
	fi
}
note() { echo "# $*"; }

wait_for() { # PATH SECONDS
	i=0
	while [ ! -e "$1" ] && [ "$i" -lt "$(($2 * 5))" ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# The nvdimm's drivers; /dev/dax0.0 once a namespace exists.
dax_up() {
	modprobe -a nd_pmem dax_pmem device_dax 2>/dev/null
	udevadm settle -t 30
	wait_for $DEV 20
}

# sha256 of the first HASH_MB MiB of the device, read with mmap (a devdax
# node supports nothing else).
dev_hash() {
	python3 - "$DEV" "$HASH_MB" <<'EOF'
import hashlib, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
n = int(sys.argv[2]) << 20
m = mmap.mmap(fd, n, mmap.MAP_SHARED, mmap.PROT_READ)
h = hashlib.sha256()
for off in range(0, n, 2 << 20):
    h.update(m[off:off + (2 << 20)])
print(h.hexdigest())
EOF
}

# sha256 of a file read through mmap.
mmap_hash() {
	python3 - "$1" <<'EOF'
import hashlib, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
print(hashlib.sha256(m[:]).hexdigest())
EOF
}

# "SHA256 SIZE PATH" of every file on the mount (but .meta), read through
# mmap, sorted by path.
manifest() {
	python3 - "$MNT" <<'EOF'
import hashlib, mmap, os, sys
lines = []
for d, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [x for x in dirs if x != ".meta"]
    for f in files:
        p = os.path.join(d, f)
        fd = os.open(p, os.O_RDONLY)
        size = os.fstat(fd).st_size
        h = hashlib.sha256()
        if size:
            m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
            h.update(m[:])
            m.close()
        os.close(fd)
        lines.append("%s %d %s" % (h.hexdigest(), size, p))
print("\n".join(sorted(lines, key=lambda l: l.split(" ", 2)[2])))
EOF
}

mount_mode() {
	famfs status --json $MNT 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["mounts"][0]["mode"])'
}

# Wait until systemd is done with the fstab mount (active, or failed).
wait_mount_settled() {
	i=0
	while [ $i -lt 180 ]; do
		st=$(systemctl show -P ActiveState mnt-famfs.mount 2>/dev/null)
		case $st in active|failed) break ;; esac
		# Not queued at all (inactive, no job): nothing will come.
		[ "$st" = inactive ] && [ -z "$(systemctl list-jobs --no-legend mnt-famfs.mount 2>/dev/null)" ] &&
			[ $i -gt 10 ] && break
		sleep 1
		i=$((i + 1))
	done
	note "mnt-famfs.mount: $(systemctl show -P ActiveState mnt-famfs.mount) after ${i}s"
}

show_mount_state() {
	note "--- findmnt $MNT"
	findmnt $MNT 2>&1 | sed 's/^/#   /'
	note "--- systemctl status mnt-famfs.mount"
	systemctl status --no-pager -n 15 mnt-famfs.mount 2>&1 | sed 's/^/#   /'
}

mounted_famfs() { findmnt -n -o FSTYPE $MNT | grep -q famfs; }
# The mount's id: a restart that takes the connection over keeps it.
mount_id() { awk -v m=$MNT '$5 == m { print $1 }' /proc/self/mountinfo; }

# After the boot-time check of the fstab mount: if it is not there, show
# why, and mount it by hand so that the data checks still run (the
# boot-time check has failed already). One check of CASE either way, so
# that every run of a stage prints the same number of checks.
ensure_mounted() { # CASE
	if ! mounted_famfs; then
		note "--- journal lines about famfs, dax and the mount"
		journalctl -b --no-pager -o short-monotonic 2>/dev/null |
			grep -iE 'famfs|dax|mnt-famfs|fuse' | tail -n 30 | sed 's/^/#   /'
		note "mounting $MNT by hand (fstab line)"
		mount $MNT 2>&1 | sed 's/^/#   /'
		sleep 1
	fi
	t "$1" "$MNT is mounted for the data checks (by hand if the boot did not)" mounted_famfs
}

kernel_mode() {
	m=$(mount_mode)
	echo "mode: ${m:-unknown}"
	[ "$m" = famfs ]
}

# The files every later boot verifies.
check_data() { # CASE
	t "$1" "file a verifies (famfs verify, mmap)" famfs verify -S 42 -f $MNT/a
	t "$1" "file d/b verifies (famfs verify, mmap)" famfs verify -S 7 -f $MNT/d/b
	h=$(mmap_hash $MNT/blob 2>&1 | tail -n 1)
	t "$1" "file blob read via mmap is byte-exact" \
		test "$h" = "$(cat $S/data/blob.sha256)"
	t "$1" "read(2) and mmap agree on blob" famfs chkread $MNT/blob
}

# Files and directories the famfs package owns (units, udev, modules-load).
pkg_units() { dpkg -L famfs 2>/dev/null | grep -E '/systemd/system/|/udev/rules.d/|/modules-load.d/' | grep -v '/$'; }

stage_install() {
	c=install
	mkdir -p /root/debs
	cp $S/debs/cur/*.deb /root/debs/
	rm -f /root/debs/famfs-dbgsym_*.deb
	t0=$(now)
	t $c "apt installs famfs and famfs-dkms offline" \
		sh -c 'cd /root/debs && apt-get install -y --no-install-recommends ./famfs_*.deb ./famfs-dkms_*.deb'
	note "apt install took $(($(now) - t0)) s (includes the DKMS build)"
	kv=$(uname -r)
	note "$(dkms status 2>&1)"
	t $c "dkms built and installed famfs-fuse for $kv" \
		sh -c "dkms status -m famfs-fuse | grep -q '$kv.*installed'"
	t $c "famfs_fuse.ko is installed for $kv" sh -c "modinfo -k $kv -n famfs_fuse | grep -q '^/lib/modules/$kv/\|^/usr/lib/modules/$kv/'"
	t $c "modprobe famfs_fuse" modprobe famfs_fuse
	t $c "/dev/famfs-fuse appears" sh -c "udevadm settle -t 10; [ -c /dev/famfs-fuse ] || { sleep 3; [ -c /dev/famfs-fuse ]; }"
	t $c "the tools run" sh -c 'famfs --version && mkfs.famfs --help >/dev/null'
	# libfamfs-cache as an application developer gets it: the packages,
	# the header and the library in the multiarch paths, a program built
	# with the compiler famfs-dkms brought.
	t $c "apt installs libfamfs-cache1 and libfamfs-cache-dev offline" \
		sh -c 'cd /root/debs && apt-get install -y --no-install-recommends ./libfamfs-cache1_*.deb ./libfamfs-cache-dev_*.deb'
	printf '%s\n' '#include <famfs/cache.h>' '#include <stdio.h>' \
		'int main(void) { static char b[8192]; b[100] = 7;' \
		'famfs_cache_flush(b, sizeof(b)); famfs_cache_invalidate(b, sizeof(b));' \
		'famfs_cache_barrier(); printf("%s %d\n", famfs_cache_flush_insn(), b[100]); return 0; }' \
		>/tmp/app.c
	t $c "an application builds against <famfs/cache.h> and -lfamfs-cache" \
		cc -Wall -Werror -o /tmp/app /tmp/app.c -lfamfs-cache
	t $c "it runs with the installed libfamfs-cache.so.1" sh -c '
		ldd /tmp/app | tee /dev/stderr |
			grep -Eq "libfamfs-cache\.so\.1 => (/usr)?/lib/x86_64-linux-gnu/" &&
			/tmp/app | tee /dev/stderr |
			grep -Eqx "(clwb|clflushopt|clflush) 7"'

	# Device and fstab for the next boots (part of the fstab case).
	c=fstab
	dax_up
	# A fresh nvdimm has no labels; a resumed disk may have its namespace.
	t $c "a devdax namespace on the nvdimm (labelled and made if missing)" sh -c "
		[ -e $DEV ] && exit 0
		ndctl disable-region region0 &&
			ndctl init-labels -f nmem0 &&
			ndctl enable-region region0 &&
			ndctl create-namespace -r region0 -m devdax -a 2M"
	udevadm settle -t 30
	t $c "$DEV exists" wait_for $DEV 20
	t $c "mkfs.famfs $DEV" mkfs.famfs -f $DEV
	mkdir -p $MNT
	grep -q " $MNT " /etc/fstab 2>/dev/null || echo "$FSTAB_LINE" >>/etc/fstab
	mkdir -p /mnt/missing
	grep -q " /mnt/missing " /etc/fstab || echo "$MISSING_LINE" >>/etc/fstab
	t $c "fstab has: $FSTAB_LINE" grep -qx "$FSTAB_LINE" /etc/fstab
}

stage_fstab() {
	c=fstab
	wait_mount_settled
	show_mount_state
	t $c "$MNT is mounted from fstab at boot" mounted_famfs
	ensure_mounted $c
	t $c "the mount runs in famfs (kernel) mode" kernel_mode
	t $c "famfs mkdir" famfs mkdir $MNT/d
	t $c "famfs creat -r (8 MiB, seed 42)" famfs creat -r -S 42 -s 8m $MNT/a
	t $c "famfs creat -r (3 MiB, seed 7)" famfs creat -r -S 7 -s 3m $MNT/d/b
	t $c "famfs cp of a 5 MiB blob" famfs cp $S/data/blob $MNT/blob
	check_data $c
	t $c "files are mapped by the log (famfs check)" famfs check $MNT
	t $c "pcq --create in famfs mode (256 buckets of 4 KiB)" pcq --create -b 4k -n 256 $MNT/q
	t $c "pcq -pc: 5000 seeded messages through dax memory, each checked" sh -c "
		pcq -pc -S 9 -N 5000 -f /tmp/pst $MNT/q | tail -n 2; [ \"\$(cat /tmp/pst)\" = 10000 ]"
	t $c "a missing device failed only its own mount, saying so in the journal" sh -c "
		st=\$(systemctl show -P ActiveState mnt-missing.mount); echo \"mnt-missing.mount: \$st\"
		[ \"\$st\" != active ] || exit 1
		journalctl -b --no-pager | grep -E 'dax9.9|mnt-missing' | tail -n 5 | tee /dev/stderr |
			grep -qiE 'timed out|dependency failed'"

	stage_restart
	stage_daemon_upgrade

	c=status
	if [ ! -e $S/units-packaged ]; then
		note "units not packaged yet: status checks skipped by the host"
	fi
	systemctl status --no-pager -n 20 famfs >"$S/out/status.txt" 2>&1
	note "--- systemctl status famfs"
	sed 's/^/#   /' "$S/out/status.txt"
	t $c "systemctl status famfs is active" systemctl is-active famfs
	t $c "systemctl status famfs shows $MNT" grep -q "$MNT" "$S/out/status.txt"
	t $c "journalctl -u 'famfs*' has the daemon's logs" \
		sh -c "journalctl -b --no-pager -u 'famfs*' | grep -q famfs-fused"
	t $c "famfs status: healthy" famfs status $MNT
}

# A process keeps FILE mapped from before a daemon crash until after
# systemd restarted the daemon; it must read the same bytes throughout,
# and read(2) of it and stat of the mount must never fail meanwhile.
HOLDER='
import hashlib, mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED, mmap.PROT_READ)
h0 = hashlib.sha256(m[:]).hexdigest()
b0 = os.pread(fd, 4096, 0)
open(sys.argv[2], "w").close()
errors = 0
while not os.path.exists(sys.argv[3]):
    try:
        os.stat(os.path.dirname(sys.argv[1]))
        errors += os.pread(fd, 4096, 0) != b0
    except OSError as e:
        errors += 1
        print(e)
    time.sleep(0.05)
print("same" if hashlib.sha256(m[:]).hexdigest() == h0 else "DIFFERENT")
print("errors=%d" % errors)
'

stage_restart() {
	c=restart
	u=famfs@mnt-famfs.service
	t $c "mount.famfs --unit-name names the running unit" sh -c "
		[ \"\$(mount.famfs --unit-name $MNT)\" = $u ] && systemctl is-active $u"
	pid0=$(systemctl show -P MainPID $u)
	id0=$(mount_id)
	rm -f /run/held.ready /run/held.go
	python3 -c "$HOLDER" $MNT/a /run/held.ready /run/held.go >/run/held.out 2>&1 &
	holder=$!
	t $c "a process maps $MNT/a" wait_for /run/held.ready 30
	since=$(date '+%Y-%m-%d %H:%M:%S')
	t $c "daemon (pid $pid0) killed with SIGKILL" kill -9 "$pid0"
	i=0
	while [ $i -lt 60 ]; do
		pid1=$(systemctl show -P MainPID $u)
		[ "$pid1" != 0 ] && [ "$pid1" != "$pid0" ] && mounted_famfs &&
			ls $MNT/a >/dev/null 2>&1 && break
		sleep 0.5
		i=$((i + 1))
	done
	note "restart took about $((i / 2)) s; daemon pid $pid0 -> $pid1"
	t $c "systemd restarted the daemon (Restart=on-failure)" sh -c "
		[ '$pid1' != 0 ] && [ '$pid1' != '$pid0' ] && systemctl is-active $u"
	t $c "lookups work at once after the restart" ls -l $MNT/a $MNT/d/b $MNT/blob
	# The new daemon took the connection over from the fd store: the same
	# mount, and the process using it never saw an error.
	t $c "the mount is the same (mount id $id0)" sh -c "[ \"\$(awk -v m=$MNT '\$5 == m { print \$1 }' /proc/self/mountinfo)\" = '$id0' ]"
	touch /run/held.go
	wait $holder
	t $c "the mapping held across the crash reads the same bytes" grep -qx same /run/held.out
	t $c "read(2) and stat never failed across the crash" grep -qx errors=0 /run/held.out
	t $c "the mount is back, in famfs mode" kernel_mode
	check_data $c
	t $c "new files can be made after the restart" sh -c "
		famfs creat -r -S 99 -s 2m $MNT/after-restart && famfs verify -S 99 -f $MNT/after-restart"
	# journalctl may meet the journal file mid-write ("truncated,
	# ignoring file"): ask again, a few times, for what came since the kill
	t $c "the journal tells the crash and the takeover" sh -c "
		for i in 1 2 3 4 5 6 7 8 9 10; do
			journalctl --sync 2>/dev/null
			journalctl -b --no-pager -u $u --since '$since' 2>/dev/null |
				grep -q 'took over the FUSE connection' && exit 0
			sleep 1
		done
		journalctl -b --no-pager -u $u --since '$since' | tail -n 15 >&2
		exit 1"
	t $c "famfs status counts the takeover" sh -c "famfs status $MNT | tee /dev/stderr | grep -q 'restarts without unmounting: [1-9]'"
}

# An application on the mount through package upgrades: it keeps $MNT/a
# open and mapped and, in a loop, checks its bytes through the mapping and
# read(2), stats the mount and the file, opens and reads the other files
# and the newest of those a second thread keeps creating with famfs creat
# (the master's creates). Every failed or wrong operation counts as an
# error; each operation is timed. At the end: errors=N, the longest
# operation, and the first errors.
UPGRADE_APP='
import os, mmap, subprocess, sys, threading, time
mnt, ready, stop = sys.argv[1:4]
held = os.path.join(mnt, "a")
fd = os.open(held, os.O_RDONLY)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
data = bytes(m[:])
others = {p: open(p, "rb").read(4096)
          for p in (os.path.join(mnt, "d/b"), os.path.join(mnt, "blob"))}
errors, created = [], []
longest = [0.0, "", 0.0, ""]  # operation: seconds, what; creat: the same
nops = 0


def timed(what, fn, slot=0):
    global nops
    t0 = time.monotonic()
    try:
        if fn() is False:
            errors.append("%s: wrong bytes" % what)
    except Exception as e:
        errors.append("%s: %r" % (what, e))
    d = time.monotonic() - t0
    nops += slot == 0
    if d > longest[slot]:
        longest[slot:slot + 2] = [d, what]


def read_head(path):
    with open(path, "rb") as f:
        return f.read(4096)


def creator():
    i = 0
    while not os.path.exists(stop):
        path = os.path.join(mnt, "up", "f%03d" % i)

        def creat():
            p = subprocess.run(["famfs", "creat", "-r", "-S", str(100 + i),
                                "-s", "2m", path], capture_output=True,
                               text=True, timeout=300)
            if p.returncode:
                raise OSError("famfs creat %s: %s" % (path, p.stderr.strip()))
        timed("famfs creat", creat, 2)
        created.append(path)
        i += 1
        time.sleep(0.5)


def creator_or_error():
    try:
        creator()
    except Exception as e:
        errors.append("creator: %r" % e)


t = threading.Thread(target=creator_or_error, daemon=True)
open(ready, "w").close()
t.start()
off = 0
while not os.path.exists(stop):
    off = (off + 4096 * 37) % size
    timed("mmap read of a", lambda: m[off:off + 4096] == data[off:off + 4096])
    timed("pread of a", lambda: os.pread(fd, 4096, off) == data[off:off + 4096])
    timed("stat of the mount", lambda: os.stat(mnt) and None)
    timed("stat of a", lambda: os.stat(held).st_size == size)
    for p, head in others.items():
        timed("open+read of " + p, lambda: read_head(p) == head)
    if created:
        new = created[-1]
        timed("stat of a new file", lambda: os.stat(new) and None)
        timed("open+read of a new file", lambda: len(read_head(new)) == 4096)
    timed("readdir", lambda: os.listdir(mnt) and None)
    time.sleep(0.05)
t.join(timeout=300)
if bytes(m[:]) != data:
    errors.append("the mapping of a changed")
print("operations=%d files_created=%d" % (nops, len(created)))
print("longest_op_ms=%.0f (%s)" % (longest[0] * 1000, longest[1]))
print("longest_creat_ms=%.0f" % (longest[2] * 1000))
for e in errors[:10]:
    print("error: " + e)
print("errors=%d" % len(errors))
'

# KEY of the running daemon's status (famfs status --json).
daemon_status() {
	famfs status --json $MNT 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["mounts"][0]["status"][sys.argv[1]])' "$1"
}

# One apt install of the famfs package (alone: famfs-dkms stays) while
# the application runs: the daemon must be replaced by the installed
# version and take the connection over (same mount, no remount).
upgrade_daemon() { # WHAT VERSION DEBDIR ID0
	c=daemon-upgrade
	u=famfs@mnt-famfs.service
	cur=$(journalctl -n 1 --show-cursor --no-pager -o cat | sed -n 's/^-- cursor: //p')
	pid0=$(systemctl show -P MainPID $u)
	t0=$(now)
	t $c "$1: apt install famfs $2 alone, the mount in use" sh -c "
		cd $3 && apt-get install -y --no-install-recommends --allow-downgrades ./famfs_*_amd64.deb"
	note "daemon-upgrade: $1: apt install took $(($(now) - t0)) s"
	t $c "$1: famfs is at $2" sh -c "[ \"\$(dpkg-query -W -f='\${Version}' famfs)\" = '$2' ]"
	pid1=$(systemctl show -P MainPID $u)
	note "daemon-upgrade: $1: daemon pid $pid0 -> $pid1"
	t $c "$1: the daemon was replaced (pid $pid0 -> $pid1)" sh -c "
		[ '$pid1' != 0 ] && [ '$pid1' != '$pid0' ] && systemctl is-active $u"
	t $c "$1: the mount is the same (mount id $4)" sh -c "[ \"\$(awk -v m=$MNT '\$5 == m { print \$1 }' /proc/self/mountinfo)\" = '$4' ]"
	# journald may take a moment to write the new daemon's lines.
	t $c "$1: the journal shows a takeover, not a remount" sh -c "
		for i in \$(seq 20); do
			journalctl --no-pager -o cat --after-cursor='$cur' -u $u >/run/dupgrade.journal
			grep -q 'took over the FUSE connection' /run/dupgrade.journal && break
			sleep 0.5
		done
		cat /run/dupgrade.journal
		grep -q 'took over the FUSE connection' /run/dupgrade.journal &&
			! grep -E 'mounting anew|unmounted from|replacing a famfs mount' /run/dupgrade.journal"
	v=$(daemon_status version) p=$(daemon_status pid)
	t $c "$1: the running daemon is version $2 (famfs status: $v, pid $p)" \
		test "$v" = "$2" -a "$p" = "$pid1"
	t $c "$1: the mount still runs in famfs (kernel) mode" kernel_mode
}

stage_daemon_upgrade() {
	c=daemon-upgrade
	n=$(dpkg-query -W -f='${Version}' famfs)
	n1=$(cat $S/debs/next-version)
	id0=$(mount_id)
	note "daemon-upgrade: famfs $n -> $n1 -> $n, mount id $id0"
	mkdir -p /run/debs-next
	cp $S/debs/next/famfs_*_amd64.deb /run/debs-next/
	t $c "famfs mkdir $MNT/up (for the files made meanwhile)" famfs mkdir $MNT/up
	rm -f /run/app.ready /run/app.stop
	# Bounded: an operation that never returns must not hang the boot.
	timeout -k 5 900 python3 -c "$UPGRADE_APP" $MNT /run/app.ready /run/app.stop >/run/app.out 2>&1 &
	app=$!
	t $c "an application holds $MNT/a open and mapped" wait_for /run/app.ready 60
	sleep 3
	upgrade_daemon "N+1" "$n1" /run/debs-next "$id0"
	sleep 3
	upgrade_daemon "back to N" "$n" /root/debs "$id0"
	sleep 3
	touch /run/app.stop
	wait $app
	sed 's/^/# daemon-upgrade: app: /' /run/app.out
	t $c "the application saw no error through both installs" grep -qx errors=0 /run/app.out
	t $c "the files made during the installs verify" sh -c "
		for f in $MNT/up/f*; do
			i=\${f##*/f}; famfs verify -S \$(expr 100 + \$i) -f \$f || exit 1
		done"
	note "daemon-upgrade: longest operation the application saw: $(sed -n 's/^longest_op_ms=\([0-9]*\)/\1 ms/p' /run/app.out)"
}

stage_persist() {
	c=persist
	wait_mount_settled
	show_mount_state
	t $c "$MNT is mounted again after reboot" mounted_famfs
	ensure_mounted $c
	t $c "the mount runs in famfs (kernel) mode" kernel_mode
	t $c "all three files are listed" sh -c "ls $MNT/a $MNT/d/b $MNT/blob"
	check_data $c
	t $c "famfs fsck $MNT is clean" famfs fsck $MNT

	# Upgrade N -> N+1 with the file system mounted and a config edit.
	c=upgrade
	t $c "$CONF is shipped" test -f $CONF
	[ -f $CONF ] && echo "$CONF_MARK" >>$CONF
	pid0=$(pgrep -o famfs-fused || true)
	note "daemon pid before the upgrade: ${pid0:-none}"
	id0=$(mount_id)
	rm -f /run/held.ready /run/held.go
	python3 -c "$HOLDER" $MNT/a /run/held.ready /run/held.go >/run/held.out 2>&1 &
	holder=$!
	t $c "a process maps and reads $MNT/a through the upgrade" wait_for /run/held.ready 30
	old=$(dpkg-query -W -f='${Version}' famfs)
	mkdir -p /root/debs-next
	cp $S/debs/next/*.deb /root/debs-next/
	rm -f /root/debs-next/famfs-dbgsym_*.deb
	t0=$(now)
	t $c "apt installs N+1 over N offline" \
		sh -c 'cd /root/debs-next && apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold ./famfs_*.deb ./famfs-dkms_*.deb'
	note "apt upgrade took $(($(now) - t0)) s (includes the DKMS build)"
	new=$(dpkg-query -W -f='${Version}' famfs)
	note "famfs $old -> $new"
	t $c "famfs and famfs-dkms are at N+1" sh -c "
		[ '$new' = \"\$(cat $S/debs/next-version)\" ] &&
		[ \"\$(dpkg-query -W -f='\${Version}' famfs-dkms)\" = '$new' ]"
	kv=$(uname -r)
	note "$(dkms status 2>&1)"
	t $c "dkms rebuilt famfs-fuse $new for $kv" sh -c "dkms status -m famfs-fuse -v '$new' | grep -q '$kv.*installed'"
	t $c "dkms no longer has $old" sh -c "! dkms status -m famfs-fuse -v '$old' | grep -q ."
	t $c "config edit kept in $CONF" grep -qxF "$CONF_MARK" $CONF
	t $c "no .dpkg-dist/.dpkg-new config left" sh -c '! ls /etc/famfs/*.dpkg-* 2>/dev/null | grep -q .'
	wait_mount_settled
	pid1=$(pgrep -o famfs-fused || true)
	note "daemon pid after the upgrade: ${pid1:-none}"
	t $c "the daemon was restarted" sh -c "[ -n '$pid1' ] && [ '$pid0' != '$pid1' ]"
	touch /run/held.go
	wait $holder
	t $c "the process saw no error through the upgrade, same bytes" sh -c "
		cat /run/held.out; grep -qx same /run/held.out && grep -qx errors=0 /run/held.out"
	t $c "the mount is the same (mount id $id0): the new daemon took it over" sh -c "
		[ \"\$(awk -v m=$MNT '\$5 == m { print \$1 }' /proc/self/mountinfo)\" = '$id0' ]"
	t $c "the running daemon is version $new" sh -c "grep -x 'version=$new' $MNT/.meta/.status"
	t $c "the mount works again after the upgrade" mounted_famfs
	ensure_mounted $c
	check_data $c
}

stage_upgraded() {
	c=upgrade
	wait_mount_settled
	show_mount_state
	kv=$(uname -r)
	t $c "famfs_fuse was loaded at boot" sh -c "lsmod | grep -q '^famfs_fuse '"
	lsmod | grep -q '^famfs_fuse ' || modprobe famfs_fuse
	t $c "the loaded famfs_fuse is the N+1 build on disk" sh -c "
		f=\$(modinfo -k $kv -n famfs_fuse) && echo \$f &&
		[ \"\$(cat /sys/module/famfs_fuse/srcversion)\" = \"\$(modinfo -F srcversion \$f)\" ] &&
		dkms status -m famfs-fuse -v \"\$(cat $S/debs/next-version)\" | grep -q installed"
	t $c "after reboot $MNT is mounted" mounted_famfs
	ensure_mounted $c
	t $c "after reboot $MNT is mounted in famfs (kernel) mode" kernel_mode
	check_data $c
	t $c "config edit still in $CONF" grep -qxF "$CONF_MARK" $CONF

	# Remove and purge.
	c=remove
	umount $MNT 2>/dev/null || true
	t $c "$MNT unmounted before removal" sh -c "! mountpoint -q $MNT"
	dax_up
	h0=$(dev_hash)
	note "device hash (first $HASH_MB MiB) before purge: $h0"
	units=$(pkg_units | tr '\n' ' ')
	note "units/rules shipped by famfs: $(echo $units)"
	t $c "apt purge famfs famfs-dkms" apt-get purge -y famfs famfs-dkms
	t $c "both packages are gone" sh -c "! dpkg-query -W -f='\${Status}\n' famfs famfs-dkms 2>/dev/null | grep -q installed"
	t $c "no famfs_fuse.ko left under /lib/modules" sh -c "! find /lib/modules/ /usr/lib/modules/ -name 'famfs_fuse.ko*' | grep ."
	t $c "dkms has no famfs-fuse" sh -c "! dkms status -m famfs-fuse | grep . && ! ls -d /usr/src/famfs-fuse-* /var/lib/dkms/famfs-fuse 2>/dev/null | grep ."
	t $c "famfs_fuse not loaded (or unloads)" sh -c "! lsmod | grep -q '^famfs_fuse ' || modprobe -r famfs_fuse || rmmod famfs_fuse"
	t $c "no famfs units, udev rules or modules-load files left" sh -c "
		for f in $units; do [ ! -e \"\$f\" ] || { echo \"left: \$f\"; exit 1; }; done
		! systemctl list-unit-files --no-legend 'famfs*' | grep . &&
		! ls /etc/systemd/system/*/famfs* /etc/systemd/system/famfs* 2>/dev/null | grep ."
	t $c "/etc/famfs is gone after purge" test ! -e /etc/famfs
	t $c "no famfs programs left" sh -c '! command -v famfs && ! command -v famfs-fused && ! ls /sbin/mount.famfs /usr/sbin/mount.famfs 2>/dev/null'
	# Unloading famfs_fuse leaves the devices famfs_dax had without a
	# driver; the admin gives them back to device_dax (dkms/README.md).
	t $c "dax0.0 goes back to device_dax" sh -c "
		d=/sys/bus/dax/devices/dax0.0
		[ -e \$d/driver ] || echo dax0.0 >/sys/bus/dax/drivers/device_dax/bind
		basename \$(readlink \$d/driver) | grep -qx device_dax"
	h1=$(dev_hash)
	note "device hash after purge: $h1"
	t $c "data on $DEV untouched by removal" test -n "$h0" -a "$h0" = "$h1"
}

# The kernel-upgrade case, three boots: on 6.12, install trixie-backports'
# 7.3 kernel (DKMS's kernel hook builds the module for it) and copy it out
# for the host to boot; on 7.3, the fstab mount in famfs mode on
# fsdev_dax with the same files; on 6.12 again, the same on famfs_dax.
stage_kernel_install() {
	c=kernel-upgrade
	kv=$(cat $K73/kver)
	wait_mount_settled
	t $c "before: $MNT is mounted from fstab on $(uname -r)" mounted_famfs
	ensure_mounted $c
	t $c "before: the mount runs in famfs (kernel) mode" kernel_mode
	mkdir -p ${MANIFEST%/*}
	manifest >$MANIFEST 2>/run/manifest.err
	cat /run/manifest.err
	cp $MANIFEST $S/out/manifest
	note "kernel-upgrade: $(wc -l <$MANIFEST) files recorded (sha256 through mmap) on $(uname -r)"
	t $c "the sha256 of every file recorded" sh -c "
		[ -s $MANIFEST ] && [ ! -s /run/manifest.err ] && grep -q ' $MNT/blob\$' $MANIFEST"
	# The source first: famfs-dkms is content with linux-source-6.12, so
	# nothing else orders linux-source-7.3 before the kernel's hooks run.
	t $c "apt installs linux-source-7.3 offline" sh -c "
		cd $K73 && apt-get install -y --no-install-recommends ./linux-source-7.3_*.deb"
	t0=$(now)
	t $c "apt installs the $kv kernel and headers offline ($(ls $K73/*.deb | wc -l) packages)" sh -c "
		cd $K73 && apt-get install -y --no-install-recommends \
			\$(ls *.deb | grep -v '^linux-source-7\.3_' | sed 's|^|./|') >/root/kernel-apt.log 2>&1
		rc=\$?; tail -n 30 /root/kernel-apt.log; exit \$rc"
	note "kernel-upgrade: apt install of the $kv kernel took $(($(now) - t0)) s (the DKMS build and the initramfs included)"
	cp /root/kernel-apt.log $S/out/kernel-apt.log
	grep -iE 'dkms|autoinstall|famfs|initrd' /root/kernel-apt.log | sed 's/^/#   /'
	t $c "DKMS's kernel hook built famfs-fuse for $kv during the install" \
		grep -q "Autoinstall on $kv succeeded for module(s) famfs-fuse" /root/kernel-apt.log
	note "$(dkms status 2>&1)"
	t $c "dkms status: famfs-fuse installed for $kv" sh -c "dkms status -m famfs-fuse | grep -q '$kv.*installed'"
	t $c "dkms status: famfs-fuse still installed for $(uname -r)" \
		sh -c "dkms status -m famfs-fuse | grep -q '$(uname -r).*installed'"
	t $c "famfs_fuse.ko of $kv is DKMS's" sh -c "
		modinfo -k $kv -n famfs_fuse | tee /dev/stderr | grep -q 'lib/modules/$kv/updates/dkms/famfs_fuse\.ko'"
	el=$(find /var/lib/dkms/famfs-fuse/ -path "*/$kv/*/log/make.log" -exec sed -n 's/^# elapsed time: //p' {} + | tail -n 1)
	note "kernel-upgrade: DKMS build of famfs-fuse for $kv took ${el:-?} (its make.log)"
	t $c "/boot has vmlinuz and initrd.img of $kv" test -f /boot/vmlinuz-$kv -a -f /boot/initrd.img-$kv
	mkdir -p $S/out/boot
	cp /boot/vmlinuz-$kv $S/out/boot/vmlinuz && cp /boot/initrd.img-$kv $S/out/boot/initrd &&
		echo "$kv" >$S/out/boot/kver
}

# What each boot after the kernel install checks on the running kernel:
# the module DKMS built for it, loaded at boot; the fstab mount in famfs
# mode on the kernel's dax driver; the recorded files, byte for byte.
kernel_boot_checks() { # CASE DAX-DRIVER
	k=$(uname -r)
	t $1 "on $k: famfs_fuse loaded at boot is DKMS's build for $k" sh -c "
		f=\$(modinfo -n famfs_fuse) && echo \$f && echo \$f | grep -q '/$k/updates/dkms/' &&
		lsmod | grep -q '^famfs_fuse ' &&
		[ \"\$(cat /sys/module/famfs_fuse/srcversion)\" = \"\$(modinfo -F srcversion \$f)\" ]"
	wait_mount_settled
	show_mount_state
	t $1 "on $k: $MNT is mounted from fstab at boot" mounted_famfs
	ensure_mounted $1
	t $1 "on $k: the mount runs in famfs (kernel) mode" kernel_mode
	t $1 "on $k: $DEV is bound to $2" sh -c "
		basename \$(readlink /sys/bus/dax/devices/dax0.0/driver) | tee /dev/stderr | grep -qx $2"
	manifest >/run/manifest.now 2>&1
	t $1 "on $k: the $(wc -l <$MANIFEST) files recorded on 6.12 read the same (sha256 via mmap)" sh -c "
		cat /run/manifest.now; [ -s $MANIFEST ] && ! grep -vxF -f /run/manifest.now $MANIFEST"
	check_data $1
}

stage_kernel_new() {
	c=kernel-upgrade
	kv=$(cat $K73/kver)
	t $c "booted the new kernel: uname -r is $(uname -r), want $kv" test "$(uname -r)" = "$kv"
	kernel_boot_checks $c fsdev_dax
	t $c "on $kv: famfs creat makes a new file that verifies" sh -c "
		famfs creat -r -S 73 -s 2m $MNT/on-7.3 && famfs verify -S 73 -f $MNT/on-7.3"
}

stage_kernel_back() {
	c=kernel-upgrade
	kv=$(cat $K73/kver)
	t $c "booted 6.12 again: uname -r is $(uname -r)" sh -c "uname -r | grep -q '^6\.12\.'"
	kernel_boot_checks $c famfs_dax
	t $c "the file made on $kv verifies on $(uname -r)" famfs verify -S 73 -f $MNT/on-7.3
}

case ${1:-} in
install|fstab|persist|upgraded) "stage_$1" ;;
kernel-install|kernel-new|kernel-back) "stage_$(echo "$1" | tr - _)" ;;
*) echo "stages.sh: unknown stage ${1:-}" >&2; exit 2 ;;
esac
rm -f "$tmp"
echo "# stage ${1} done"
