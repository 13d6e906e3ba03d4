#!/bin/sh
# The main job on a development host: make a file-backed famfs, check it,
# damage a copy and watch fsck name the damage, then mount it with the famfs
# daemon on this machine's FUSE (fallback mode), create, copy and verify
# files, show famfs status, and unmount. Loads no kernel module.
set -eu
BUILD=${1:-build}
bin=$(cd "$BUILD/daemon" && pwd)
work=$(mktemp -d /tmp/famfs-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
# This demo host's identity, kept apart from the machine's /opt/famfs.
export FAMFS_SYSTEM_UUID_FILE="$work/system_uuid"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a 1 GiB sparse file stands in for a devdax device (0600: readers of an image read every file)"
(umask 077 && truncate -s 1G "$work/famfs.img")
ls -ls "$work/famfs.img"

step "mkfs.famfs $work/famfs.img"
"$bin/tools/mkfs.famfs" "$work/famfs.img"

step "famfs fsck: a clean, empty file system"
"$bin/tools/famfs" fsck "$work/famfs.img"

step "mkfs.famfs refuses to overwrite it without -f"
"$bin/tools/mkfs.famfs" "$work/famfs.img" || echo "(exit status $?)"

step "famfs fsck --json, for scripts"
"$bin/tools/famfs" fsck --json "$work/famfs.img"

step "flip bytes of the log header in a copy: fsck names the damage"
cp --sparse=always -p "$work/famfs.img" "$work/bad.img"
printf '\377\377' | dd of="$work/bad.img" bs=1 seek=$((2 * 1024 * 1024 + 3)) \
	conv=notrunc status=none
"$bin/tools/famfs" fsck "$work/bad.img" || echo "(exit status $?)"

step "mount it with the famfs daemon (fallback mode: this host has no famfs kernel module)"
mkdir -p "$work/mnt"
export FAMFS_FUSED="$bin/fused/famfs-fused" FAMFS_CONF=/dev/null
"$bin/mount/mount.famfs" "$work/famfs.img" "$work/mnt"
cleanup() { umount "$work/mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
famfs() { "$bin/tools/famfs" "$@"; }

step "create files and directories with the CLI; they appear in the mount at once"
famfs mkdir -p "$work/mnt/data/logs"
famfs creat -r -S 42 -s 64m "$work/mnt/data/random.bin"
famfs creat -N 2 -B 4 -C 2m -s 32m "$work/mnt/data/striped.bin"
seq 1 100000 >"$work/numbers.txt"
famfs cp "$work/numbers.txt" "$work/mnt/data/logs/"
ls -lR "$work/mnt/data"

step "verify the seeded file, compare the copy, read through mmap"
famfs verify -S 42 -f "$work/mnt/data/random.bin" && echo "random.bin verifies"
cmp "$work/numbers.txt" "$work/mnt/data/logs/numbers.txt" && echo "numbers.txt is byte-exact"
python3 -c 'import mmap,sys; f=open(sys.argv[1],"rb"); m=mmap.mmap(f.fileno(),0,prot=mmap.PROT_READ); print("mmap read", len(m), "bytes, last line:", m[:].rstrip().rsplit(b"\n",1)[1].decode())' "$work/mnt/data/logs/numbers.txt"

step "famfs getmap: where a striped file lives on the device"
famfs getmap "$work/mnt/data/striped.bin"

step "famfs status"
famfs status

step "famfs is append-only: these are refused"
rm "$work/mnt/data/random.bin" || true
truncate -s 0 "$work/mnt/data/random.bin" || true

step "unmount; fsck sees every file"
umount "$work/mnt"
famfs fsck "$work/famfs.img"
