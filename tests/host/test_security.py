# SPDX-License-Identifier: GPL-2.0-or-later
"""The security model of famfs-fused(8) and mount.famfs(8), tried as an
unprivileged user (uid 65534) would: a log is untrusted input, so mounts
are nosuid,nodev unless asked; .meta is root's; the writers' lock is one
only writers can take and is waited for with a bound; mount options are
never dropped; errors name the real problem."""
import errno
import fcntl
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import time

import pytest

import famfs_host as fh

NOBODY = 65534


@pytest.fixture
def world(tools):
    """A directory every user can reach (pytest's own tmp is root's 0700),
    owned by the unprivileged user so it can make images there."""
    d = tempfile.mkdtemp(prefix="famfs-sec-", dir="/tmp")
    os.chmod(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def as_user(cmd, env=None, **kw):
    return fh.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                   "--clear-groups"] + cmd, env=env, **kw)


def mount_opts(mnt):
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == mnt:
                return set(fields[5].split(","))
    return None


@pytest.fixture
def evil(world, mounts):
    """An image an unprivileged user made, holding a root-owned set-user-ID
    copy of id(1), as the user can with famfs cp -u 0 -m 4755."""
    user = fh.Host(world, "user")
    img = os.path.join(world, "evil.img")
    prog = os.path.join(world, "prog")
    shutil.copy("/usr/bin/id", prog)
    os.chmod(prog, 0o755)
    as_user(["truncate", "-s", "64M", img], env=user.env)
    as_user([fh.MKFS, img], env=user.env)
    as_user([fh.FAMFS, "cp", "-D", img, "-m", "4755", "-u", "0", "-g", "0",
             prog, "suidroot"], env=user.env)
    root = fh.Host(world, "root")
    m = fh.Mount(root, img, os.path.join(world, "mnt"),
                 os.path.join(world, "fused.log"))
    mounts.append(m)
    return root, img, m


def test_setuid_from_user_image_is_not_honoured(evil):
    root, img, m = evil
    p = m.mount()
    assert "warning: %s is owned by uid %d" % (img, NOBODY) in p.stderr, \
        p.stderr
    opts = mount_opts(m.mnt)
    assert {"nosuid", "nodev"} <= opts, opts
    prog = os.path.join(m.mnt, "suidroot")
    assert os.stat(prog).st_mode & 0o7777 == 0o4755  # served as logged
    p = as_user([prog, "-u"])
    assert p.stdout.strip() == str(NOBODY), "euid %s" % p.stdout


def test_suid_only_when_asked(evil):
    root, img, m = evil
    with open(root.env["FAMFS_CONF"], "w") as f:
        f.write("suid = yes\n")
    m.mount()
    opts = mount_opts(m.mnt)
    assert "nosuid" not in opts and "nodev" in opts, opts
    m.unmount()
    os.unlink(root.env["FAMFS_CONF"])
    m.mount(extra="suid,dev")
    opts = mount_opts(m.mnt)
    assert "nosuid" not in opts and "nodev" not in opts, opts
    m.unmount()
    # famfs-fused on its own mounts nosuid,nodev too
    fh.run([fh.FUSED, "-o", "logfile=" + m.logfile, img, m.mnt],
           env=root.env)
    m.pid = int(m.status()["pid"])
    assert {"nosuid", "nodev"} <= mount_opts(m.mnt)


def test_fsck_and_status_flag_setuid(evil):
    root, img, m = evil
    p = root.famfs("fsck", img)  # a warning, not an error: exit 0
    assert "warning:     log entry 0: \"suidroot\" is set-user-ID " \
        "(mode 4755, uid 0)" in p.stdout, p.stdout
    j = json.loads(root.famfs("fsck", "--json", img).stdout)
    assert j["setid_files"] == 1 and j["exit_code"] == 0
    assert "set-user-ID" in j["warnings"][0]
    m.mount()
    p = root.famfs("status", m.mnt)
    assert "warning:   log entry 0: \"suidroot\" is set-user-ID" in p.stdout
    assert "(not honoured: mounted nosuid)" in p.stdout, p.stdout
    j = json.loads(root.famfs("status", "--json", m.mnt).stdout)
    assert j["mounts"][0]["setid_files"] == 1 and j["healthy"]


def test_exposed_image_warns(tmp_path, master, mounts):
    img = str(tmp_path / "open.img")
    fh.mkfs(master, img, 64 * fh.MiB)
    os.chmod(img, 0o644)
    m = fh.Mount(master, img, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    p = m.mount()
    assert "warning: %s can be read by users other than root (mode 0644): " \
        "they can read every file in it, whatever the file's mode; " \
        "chmod 600 %s" % (img, img) in p.stderr, p.stderr


def test_ro_after_long_option_list(tmp_path, master, device, mounts):
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount(extra="noatime," * 150 + "ro")
    assert "ro" in mount_opts(m.mnt)
    assert m.status()["readonly"] == "1"
    with pytest.raises(OSError) as e:
        os.mkdir(os.path.join(m.mnt, "x"))
    assert e.value.errno == errno.EROFS
    # famfs mount hands mount.famfs every option too (it cut at 4 KiB)
    many = "noatime," * 600 + "ro"
    p = fh.run([fh.FAMFS, "mount", "-D", "-o", many, device, m.mnt],
               env=dict(master.env, FAMFS_MOUNT_HELPER="/bin/true"))
    assert p.stdout.split()[-1] == many



def test_bad_log_magic_is_not_called_not_a_famfs(tmp_path, master, device):
    with open(device, "r+b") as f:
        f.seek(fh.LOG_OFFSET)
        b = f.read(1)
        f.seek(fh.LOG_OFFSET)
        f.write(bytes([b[0] ^ 0xff]))
    target = str(tmp_path / "t")
    os.makedirs(target)
    want = "%s: the famfs log is damaged (log header at 0x200000: bad " \
        "magic" % device
    for cmd in ([fh.MOUNT, device, target], [fh.FUSED, device, target]):
        p = fh.run(cmd, env=master.env, check=False)
        assert p.returncode in (1, 32), p.stderr
        assert want in p.stderr and "run famfs fsck %s" % device \
            in p.stderr, p.stderr
        assert "mkfs" not in p.stderr and "not a famfs" not in p.stderr


def test_mount_replaces_dead_mount(mnt, master):
    master.famfs("creat", "-s", "2m", os.path.join(mnt.mnt, "r0"))
    os.kill(mnt.pid, signal.SIGKILL)
    assert mnt.wait_daemon_exit()
    p = fh.run([fh.MOUNT, mnt.dev, mnt.mnt, "-o", "logfile=" + mnt.logfile],
               env=master.env, check=False)
    assert p.returncode == 0, p.stderr
    mnt.pid = int(mnt.status()["pid"])
    assert "r0" in os.listdir(mnt.mnt)
    assert "lost its daemon; mounting over it replaces it" in p.stderr
    with open("/proc/self/mountinfo") as f:
        assert sum(l.split()[4] == mnt.mnt for l in f) == 1
