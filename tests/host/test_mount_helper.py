# SPDX-License-Identifier: GPL-2.0-or-later
"""Which daemon mount.famfs starts: the one of its own build when run from a
build directory (not installed), the installed one otherwise, and always
the one $FAMFS_FUSED names."""
import os
import shutil

from famfs_host import FUSED, MOUNT, Host, mkfs, run

MiB = 1 << 20


def planned_daemon(env, helper, img, mnt):
    """The daemon path mount.famfs -f -v says it would run."""
    env = dict(env, FAMFS_NO_SYSTEMD="1")
    p = run([helper, "-f", "-v", img, mnt], env=env)
    lines = [l for l in p.stderr.splitlines() if " -o " in l]
    assert len(lines) == 1, p.stderr
    return lines[0].split()[1]


def test_mount_helper_starts_the_daemon_it_should(tmp_path):
    host = Host(str(tmp_path), "a")
    img, mnt = str(tmp_path / "img"), str(tmp_path / "mnt")
    os.mkdir(mnt)
    mkfs(host, img, 64 * MiB)
    env = dict(host.env)
    env.pop("FAMFS_FUSED")
    # From the build tree: the build's own daemon.
    assert planned_daemon(env, MOUNT, img, mnt) == os.path.realpath(FUSED)
    # A copy outside any build tree: the installed path.
    copy = str(tmp_path / "mount.famfs")
    shutil.copy(MOUNT, copy)
    installed = planned_daemon(env, copy, img, mnt)
    assert installed.endswith("/sbin/famfs-fused"), installed
    assert not installed.startswith(os.path.dirname(os.path.dirname(FUSED)))
    # $FAMFS_FUSED wins over both.
    env["FAMFS_FUSED"] = "/nonexistent/famfs-fused"
    assert planned_daemon(env, MOUNT, img, mnt) == "/nonexistent/famfs-fused"
