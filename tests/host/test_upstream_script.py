# SPDX-License-Identifier: GPL-2.0-or-later
"""A script written the way upstream famfs's smoke scripts are: every
command carries --fuse (their FAMFS_MODE=fuse), the mount included. On a
host without the kernel side the mount must come up in fallback mode, since
--fuse only picks FUSE over upstream's old kernel module."""
import os
import subprocess

from famfs_host import BUILD, FAMFS, MKFS, Host, run

SCRIPT = r"""
set -eu
MODE_ARGS=--fuse
mkfs.famfs $MODE_ARGS "$DEV"
famfs mount $MODE_ARGS "$DEV" "$MPT"
famfs creat -s 4m -r -S 7 "$MPT/f0"
famfs mkdir "$MPT/d"
famfs cp "$MPT/f0" "$MPT/d/f1"
famfs verify -S 7 -f "$MPT/f0"
famfs verify -S 7 -f "$MPT/d/f1"
cmp "$MPT/f0" "$MPT/d/f1"
grep -q '^mode=fallback$' "$MPT/.meta/.status"
umount "$MPT"
famfs fsck $MODE_ARGS "$DEV"
"""


def test_upstream_style_script_with_fuse_mounts_in_fallback(tmp_path):
    h = Host(str(tmp_path), "master")
    dev = tmp_path / "img"
    mpt = tmp_path / "mnt"
    mpt.mkdir()
    with open(os.open(dev, os.O_CREAT | os.O_WRONLY, 0o600), "wb") as f:
        f.truncate(64 << 20)
    env = dict(h.env, DEV=str(dev), MPT=str(mpt),
               FAMFS_MOUNT_HELPER=os.path.join(BUILD,
                                               "daemon/mount/mount.famfs"),
               PATH=os.path.dirname(FAMFS) + ":" + os.path.dirname(MKFS) +
               ":" + os.environ["PATH"])
    try:
        p = run(["sh", "-c", SCRIPT], env=env, check=False, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
    finally:
        subprocess.run(["umount", "-l", str(mpt)], capture_output=True)
