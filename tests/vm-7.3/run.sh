#!/bin/sh
# The VM tier on trixie-backports' 7.3 kernel: tests/vm/run.sh with
# FAMFS_KLINE=7.3 (the 7.3 cache, linux-source-7.3 and dkms/patches/7.3),
# the module cases that apply there, the cases of tests/vm/cases-7.3 (the
# daemon in famfs mode on fsdev_dax; fsdev_dax with a raw server), the
# full-tree check of the 7.3 series and its ABI check, then the pair. The
# 6.12-only cases (famfs_dax, the driver that 7.3 does not need) stay in
# the vm tier.
#
#   tests/vm-7.3/run.sh [CASE,...]   default: the list below
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
FAMFS_KLINE=7.3
VM_FULLTREE=1
VM_EXTRA_CASES=$top/tests/vm/cases-7.3
# Eighteen cases in one guest: room beyond the default 300 s (and beyond the
# debug kernel's 2400 s, KASAN being about eight times slower).
case ${VM_DEBUG:-} in
'' | 0) VM_TIMEOUT=${VM_TIMEOUT:-600} ;;
*) VM_TIMEOUT=${VM_TIMEOUT:-4800} ;;
esac
export FAMFS_KLINE VM_FULLTREE VM_EXTRA_CASES VM_TIMEOUT
exec "$top/tests/vm/run.sh" "${1:-10-module,20-devdax,30-fuse-mount,40-famfs-mode,46-fsdev,48-openmapped,50-fmap,55-hardening,60-famfs,62-fused,63-create,65-lifecycle,67-restart,68-takeover,75-devgone,80-crosslink,85-openrace,90-devices,pair}"
