# SPDX-License-Identifier: GPL-2.0-or-later
"""famfs-fused on its own: foreground under a service manager (sd_notify
READY=1, journald priority prefixes, SIGTERM) and its FUSE device choice."""
import os
import signal
import socket
import subprocess
import time

import famfs_host as fh


def test_foreground_notify_ready(tmp_path, master, device, mounts):
    mnt = str(tmp_path / "fg")
    os.makedirs(mnt)
    sock_path = str(tmp_path / "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock_path)
    s.settimeout(10)
    env = dict(master.env, NOTIFY_SOCKET=sock_path, JOURNAL_STREAM="8:1")
    p = subprocess.Popen([fh.FUSED, "-f", device, mnt], env=env,
                         stderr=subprocess.PIPE, text=True)
    m = fh.Mount(master, device, mnt, "")
    m.pid = p.pid
    mounts.append(m)
    try:
        msg = s.recv(4096).decode()
        assert "READY=1" in msg
        assert m.mounted() and m.status()["pid"] == str(p.pid)
        os.kill(p.pid, signal.SIGTERM)
        _, err = p.communicate(timeout=10)
        assert p.returncode == 0
        assert not m.mounted()
        # journald: every line carries its syslog priority
        lines = [l for l in err.splitlines() if l]
        assert lines and all(l.startswith("<") for l in lines), err
        assert any(l.startswith("<5>") and "mounted" in l for l in lines)
    finally:
        if p.poll() is None:
            p.kill()
        s.close()


def test_fuse_dev_option(tmp_path, master, device, mounts):
    m = fh.Mount(master, device, str(tmp_path / "fd"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    # the mount(2) path with an explicit FUSE device, as for the module's
    m.mount(extra="fuse_dev=/dev/fuse")
    assert m.status()["fuse_device"] == "/dev/fuse"
    m.unmount()
    p = m.mount(check=False, extra="fuse_dev=/dev/null")
    assert p.returncode == 32 and "cannot mount" in p.stderr, p.stderr
    assert not m.mounted()


def test_init_without_famfs_and_no_fallback(tmp_path, master, device, mounts):
    # /dev/fuse never offers FUSE_DAX_FMAP: with fallback=no the daemon
    # must refuse at INIT, say why, and leave no mount behind
    m = fh.Mount(master, device, str(tmp_path / "nf"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    p = m.mount(check=False, extra="fallback=no,fuse_dev=/dev/fuse")
    assert p.returncode == 32, p.returncode
    assert "does not offer famfs mode" in p.stderr, p.stderr
    for _ in range(100):
        if not m.mounted():
            break
        time.sleep(0.02)
    assert not m.mounted()


def test_a_daemon_started_by_hand_keeps_no_inherited_fd(tmp_path, master,
                                                        device, mounts):
    """famfs-fused run from a shell or a script, not by mount.famfs (which
    closes them first): what its caller left open must not live on in the
    daemon for the life of the mount. ready_fd= is kept: it is asked for."""
    mnt = str(tmp_path / "byhand")
    os.makedirs(mnt)
    m = fh.Mount(master, device, mnt, str(tmp_path / "fused.log"))
    mounts.append(m)
    ready_r, ready_w = os.pipe()
    held = open(str(tmp_path / "held-by-the-caller"), "wb")
    p = subprocess.Popen(
        [fh.FUSED, "-f", "-o", "logfile=%s,ready_fd=%d" % (m.logfile, ready_w),
         device, mnt], env=master.env, pass_fds=(ready_w, held.fileno()),
        stderr=subprocess.PIPE, text=True)
    m.pid = p.pid
    os.close(ready_w)
    held.close()
    try:
        with os.fdopen(ready_r, "rb") as r:
            assert r.readline() == b"OK\n"
        assert m.mounted()
        targets = []
        for fd in os.listdir("/proc/%d/fd" % p.pid):
            try:
                targets.append(os.readlink("/proc/%d/fd/%s" % (p.pid, fd)))
            except FileNotFoundError:
                pass  # closed since: the daemon's own, short-lived
        assert held.name not in targets, targets
    finally:
        if m.mounted():
            m.unmount()
        if p.poll() is None:
            p.kill()
        p.communicate(timeout=10)


def _open_files_limit(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return tuple(int(x) for x in line.split()[3:5])
    raise AssertionError("no open files limit for %d" % pid)


def test_the_daemon_takes_the_open_files_its_hard_limit_allows(
        tmp_path, master, device, mounts):
    """Started with a soft limit of 256 (services get 1024) and a hard one
    of 4096, the daemon serves with 4096: on 7.3 each file being written
    holds a descriptor, and many held by one user must not leave the
    daemon without one for another user's file."""
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    os.makedirs(m.mnt)
    fh.run(["prlimit", "--nofile=256:4096", fh.MOUNT, device, m.mnt, "-o",
            "logfile=" + m.logfile], env=master.env)
    m.pid = int(m.status()["pid"])
    assert _open_files_limit(m.pid) == (4096, 4096)
