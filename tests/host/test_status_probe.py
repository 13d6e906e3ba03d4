# SPDX-License-Identifier: GPL-2.0-or-later
"""famfs status with a daemon that does not answer: a stopped famfs-fused
leaves every read of its mount waiting; status must report the mount and
return, not wait with it (famfs.service runs status --watch)."""
import json
import os
import signal

import famfs_host as fh


def status(master, *args):
    env = dict(master.env)
    env.pop("FAMFS_MOUNTS", None)
    return fh.run([fh.FAMFS, "status"] + list(args), env=env, check=False,
                  timeout=30)


def test_status_reports_a_stopped_daemon_and_returns(mnt, master):
    assert status(master, "--json", mnt.mnt).returncode == 0
    os.kill(mnt.pid, signal.SIGSTOP)
    try:
        p = status(master, "--json", mnt.mnt)
        assert p.returncode == 1, p.stdout + p.stderr
        (m,) = [x for x in json.loads(p.stdout)["mounts"]
                if x["mountpoint"] == mnt.mnt]
        assert not m["healthy"]
        assert any("does not answer" in x for x in m["problems"]), m
        t = status(master, mnt.mnt)
        assert t.returncode == 1 and "does not answer" in t.stdout, t.stdout
    finally:
        os.kill(mnt.pid, signal.SIGCONT)
    # Once it runs again the same mount is healthy: nothing was lost.
    p = status(master, "--json", mnt.mnt)
    assert p.returncode == 0, p.stdout + p.stderr
