# Mappings outlive the mount and the daemon: lazy unmount with a file
# still mapped, the daemon killed (SIGKILL) while a file is mapped, and
# the module unloads once everything is gone.
plan 16
M=/mnt/famfs
S=$M/.meta/.status
export FAMFS_FUSED=/usr/bin/famfs-fused


t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
# The famfs 60-famfs made, or one made here when this case runs alone.
famfs_of_60 $M >/dev/console 2>&1
t "mount.famfs again (the famfs persists)" mount.famfs /dev/dax0.0 $M -o fallback=no
t "files are still there" famfs verify -S 13 $M/il2
pid=$(kv pid $S)
famfs creat -s 16m -r -S 31 $M/held >/dev/console 2>&1
rm -f /tmp/r1 /tmp/g1
fvt holdmap $M/held /tmp/r1 /tmp/g1 >/tmp/h1 2>&1 &
h1=$!
t "a process holds $M/held mapped" wait_for /tmp/r1 20
t "umount while mapped: busy" sh -c "! umount $M"
t "lazy unmount while mapped" umount -l $M
t "mapping still reads the same after the unmount" sh -c "
	touch /tmp/g1; wait $h1 2>/dev/null; while kill -0 $h1 2>/dev/null; do sleep 0.1; done
	cat /tmp/h1; grep -q ' same' /tmp/h1"
t "daemon exits once the last mapping is gone" wait_gone "$pid"

t "mount.famfs for the daemon-kill test" mount.famfs /dev/dax0.0 $M -o fallback=no
pid=$(kv pid $S)
rm -f /tmp/r2 /tmp/g2
fvt holdmap $M/held /tmp/r2 /tmp/g2 >/tmp/h2 2>&1 &
h2=$!
t "a process holds $M/held mapped" wait_for /tmp/r2 20
# (An exiting daemon tears down its mappings: on a loaded host that takes
# longer than a moment, so wait for it to be gone.)
t "daemon killed with SIGKILL" kill -9 "$pid"
t "the daemon is gone" wait_gone "$pid"
t "mapped file keeps working without the daemon" sh -c "
	touch /tmp/g2; while kill -0 $h2 2>/dev/null; do sleep 0.1; done
	cat /tmp/h2; grep -q ' same' /tmp/h2"
t "unmount after the daemon died" umount $M
t "module unloads after unmount" unload famfs_fuse
t "kernel log clean after lifecycle tests" dmesg_clean
