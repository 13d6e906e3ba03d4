#!/bin/sh
# The main job on a development host: make a file-backed famfs, look at it,
# damage a copy and watch fsck name the damage. Loads no kernel module.
set -eu
BUILD=${1:-build}
bin=$(cd "$BUILD/daemon" && pwd)
work=$(mktemp -d /tmp/famfs-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
# This demo host's identity, kept apart from the machine's /opt/famfs.
export FAMFS_SYSTEM_UUID_FILE="$work/system_uuid"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a 1 GiB sparse file stands in for a devdax device"
truncate -s 1G "$work/famfs.img"
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
cp --sparse=always "$work/famfs.img" "$work/bad.img"
printf '\377\377' | dd of="$work/bad.img" bs=1 seek=$((2 * 1024 * 1024 + 3)) \
	conv=notrunc status=none
"$bin/tools/famfs" fsck "$work/bad.img" || echo "(exit status $?)"
