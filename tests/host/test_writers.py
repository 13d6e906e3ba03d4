# SPDX-License-Identifier: GPL-2.0-or-later
"""Writers of one device, whatever name reaches it: two writers never both
append (one lock per device, a mounted device refuses -D writers), a
mounted image is found by its identity, not its name, a user's FUSE mount
named like ours is not taken for ours, and a reader cannot hold the
writers' lock."""
import errno
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile

import pytest

import famfs_host as fh

NOBODY = 65534
USERFUSE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "userfuse.py")
SYSPY = "/usr/bin/python3"  # what an unprivileged user runs
AS_NOBODY = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
             "--clear-groups"]


@pytest.fixture
def pub(tools):
    """A directory others may enter (pytest's tmp_path is root's alone)."""
    d = tempfile.mkdtemp(prefix="famfs-writers.", dir="/tmp")
    os.chmod(d, 0o755)
    made = []
    yield d, made
    for undo in reversed(made):
        undo()
    shutil.rmtree(d, ignore_errors=True)


def tree(path, n, tag):
    os.makedirs(path)
    for i in range(n):
        with open(os.path.join(path, "f%02d" % i), "wb") as f:
            f.write(("%s-%02d " % (tag, i)).encode() * 1000)


def same_tree(a, b):
    for name in sorted(os.listdir(a)):
        with open(os.path.join(a, name), "rb") as f:
            want = f.read()
        with open(os.path.join(b, name), "rb") as f:
            got = f.read(len(want))
        assert got == want, "%s differs from %s" % (os.path.join(b, name),
                                                    os.path.join(a, name))


def fsck_clean(host, path):
    p = host.famfs("fsck", "--json", path, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


def test_two_writers_through_mount_and_device_never_overwrite(
        tmp_path, master, device, mnt, mounts):
    """cp -r into the mount and cp -r -D of the same image at once."""
    t1, t2 = str(tmp_path / "tree1"), str(tmp_path / "tree2")
    tree(t1, 40, "one")
    tree(t2, 40, "two")
    env = dict(master.env, FAMFS_LOCK_TIMEOUT="60")
    a = subprocess.Popen([fh.FAMFS, "cp", "-r", t1, mnt.mnt + "/T1"],
                         env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    b = fh.run([fh.FAMFS, "cp", "-r", "-D", device, t2, "T2"], env=env,
               check=False)
    out, err = a.communicate(timeout=120)
    assert a.returncode == 0, out + err
    # The mounted device refuses the second writer, naming the mount.
    assert b.returncode != 0, "cp -D of a mounted image was allowed"
    assert "EBUSY" in b.stderr and mnt.mnt in b.stderr, b.stderr
    fsck_clean(master, mnt.mnt)
    mnt.unmount()
    mnt.mount()
    same_tree(t1, mnt.mnt + "/T1")
    assert not os.path.exists(mnt.mnt + "/T2")
    fsck_clean(master, mnt.mnt)


def test_mounted_image_is_found_by_identity(pub, master, mounts):
    """A space in the path, a hard link, a bind mount of its directory."""
    d, made = pub
    mydir = os.path.join(d, "my dir")
    os.mkdir(mydir)
    img = os.path.join(mydir, "img")
    fh.mkfs(master, img, 256 * fh.MiB)
    m = fh.Mount(master, img, os.path.join(d, "mnt"),
                 os.path.join(d, "fused.log"))
    mounts.append(m)
    m.mount()
    master.famfs("creat", "-s", "4096", m.mnt + "/keep")
    link = os.path.join(d, "link")
    os.link(img, link)
    bind = os.path.join(d, "bound")
    os.mkdir(bind)
    fh.run(["mount", "--bind", mydir, bind])
    made.append(lambda: subprocess.run(["umount", "-l", bind]))
    for alias in (img, link, os.path.join(bind, "img")):
        p = master.famfs("creat", "-D", alias, "-s", "4096", "x",
                         check=False)
        assert p.returncode != 0 and "EBUSY" in p.stderr and \
            m.mnt in p.stderr, (alias, p.stderr)
        p = master.famfs("mkdir", "-D", alias, "xd", check=False)
        assert p.returncode != 0 and "EBUSY" in p.stderr, (alias, p.stderr)
        p = master.famfs("fsck", "--repair", alias, check=False)
        assert p.returncode != 0 and "EBUSY" in p.stderr, (alias, p.stderr)
        p = fh.run([fh.MKFS, "-f", alias], env=master.env, check=False)
        assert p.returncode != 0 and "mounted" in p.stderr, (alias, p.stderr)
        os.makedirs(os.path.join(d, "mnt2"), exist_ok=True)
        p = fh.run([fh.MOUNT, alias, os.path.join(d, "mnt2")],
                   env=master.env, check=False)
        assert p.returncode != 0 and "already mounted" in p.stderr, \
            (alias, p.stderr)
    # Nothing of it reached the log.
    r = fsck_clean(master, m.mnt)
    assert os.path.exists(m.mnt + "/keep")
    assert not os.path.exists(m.mnt + "/x"), r


def test_reader_cannot_block_the_writer(pub, master):
    """A user who may read the image holds a read lock on all of it."""
    d, made = pub
    img = os.path.join(d, "img")
    fh.mkfs(master, img, 64 * fh.MiB)
    os.chmod(img, 0o644)
    holder = subprocess.Popen(
        AS_NOBODY + [SYSPY, "-c",
                     "import fcntl, struct, sys\n"
                     "f = open(sys.argv[1], 'rb')\n"
                     "for cmd in (37, fcntl.F_SETLK):  # OFD, then POSIX\n"
                     "    fcntl.fcntl(f, cmd, struct.pack('hhqqi4x',"
                     " fcntl.F_RDLCK, 0, 0, 0, 0))\n"
                     "print('locked', flush=True)\n"
                     "sys.stdin.read()\n", img],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    made.append(holder.kill)
    assert holder.stdout.readline().strip() == "locked"
    env = dict(master.env, FAMFS_LOCK_TIMEOUT="2")
    p = fh.run([fh.FAMFS, "creat", "-D", img, "-s", "4096", "f"], env=env,
               check=False)
    assert p.returncode == 0, p.stderr
    p = fh.run([fh.FAMFS, "mkdir", "-D", img, "d"], env=env, check=False)
    assert p.returncode == 0, p.stderr


# ---- a user's FUSE mount named like ours ----------------------------------

def user_fuse_mount(mnt, fsname, made):
    """A FUSE mount of type fuse.famfs and source @fsname, served by
    nobody. Through fusermount3 where users may open /dev/fuse; else the
    mount fusermount3 would make (user_id=65534), made for the user."""
    os.chown(mnt, NOBODY, NOBODY)
    opts = "fsname=%s,subtype=famfs" % fsname
    p = subprocess.Popen(AS_NOBODY + [SYSPY, USERFUSE, mnt, opts],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    if p.stdout.readline().strip() != "mounted":
        err = p.communicate(timeout=10)[1]
        assert "/dev/fuse" in err, err
        fd = os.open("/dev/fuse", os.O_RDWR)
        fh.run(["mount", "-i", "-t", "fuse.famfs", "-o",
                "nosuid,nodev,fd=%d,rootmode=40000,user_id=%d,group_id=%d"
                % (fd, NOBODY, NOBODY), fsname, mnt], pass_fds=[fd])
        p = subprocess.Popen(AS_NOBODY + [SYSPY, USERFUSE, "--fd", str(fd)],
                             pass_fds=[fd], stdout=subprocess.PIPE,
                             text=True)
        os.close(fd)
        assert p.stdout.readline().strip() == "mounted"
    made.append(p.kill)
    made.append(lambda: subprocess.run(["umount", "-l", mnt]))
    with open("/proc/self/mountinfo") as f:
        assert "user_id=%d" % NOBODY in f.read()


EVIL = "evil\nSTOPPING=1\nSTATUS=pwned"


@pytest.fixture
def spoofed(pub, master):
    """Root's image (not mounted) and nobody's FUSE mount named after it,
    on a directory whose name holds sd_notify fields."""
    d, made = pub
    img = os.path.join(d, "img")
    fh.mkfs(master, img, 256 * fh.MiB)
    fake = os.path.join(d, EVIL)
    os.mkdir(fake)
    user_fuse_mount(fake, img, made)
    return d, img, fake


def test_user_fuse_mount_does_not_block_root(spoofed, master, mounts):
    d, img, fake = spoofed
    p = master.famfs("fsck", img, check=False)
    assert p.returncode == 0, p.stderr
    p = master.famfs("creat", "-D", img, "-s", "4096", "f", check=False)
    assert p.returncode == 0, p.stderr
    m = fh.Mount(master, img, os.path.join(d, "mnt"),
                 os.path.join(d, "fused.log"))
    mounts.append(m)
    m.mount()
    assert os.path.exists(m.mnt + "/f")
    m.unmount()
    p = fh.run([fh.MKFS, "-f", img], env=master.env, check=False)
    assert p.returncode == 0, p.stderr


def test_status_ignores_a_user_fuse_mount(spoofed, master):
    d, img, fake = spoofed
    env = dict(master.env)
    env.pop("FAMFS_MOUNTS", None)
    p = fh.run([fh.FAMFS, "status", "--json"], env=env, check=False,
               timeout=30)
    mps = [m["mountpoint"] for m in json.loads(p.stdout)["mounts"]]
    assert fake not in mps, mps
    # --watch: one STATUS= field, nothing of the mount's name in it
    fields = notify_fields(env, d)
    assert fields[0] == "READY=1" and fields[1].startswith("STATUS="), fields
    assert len(fields) == 2 and "pwned" not in fields[1], fields


def notify_fields(env, d):
    """The fields of the first message famfs status --watch sends."""
    path = os.path.join(d, "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(20)
    w = subprocess.Popen([fh.FAMFS, "status", "--watch"],
                         env=dict(env, NOTIFY_SOCKET=path),
                         stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        msg = s.recv(65536).decode()
    finally:
        w.terminate()
        w.wait(timeout=20)
        s.close()
        os.unlink(path)
    return [l for l in msg.split("\n") if l]


def test_status_watch_escapes_a_mount_point(pub, master):
    """Root's own famfs on a directory whose name holds sd_notify fields:
    listed, but within the one STATUS= field."""
    d, made = pub
    img = os.path.join(d, "img")
    fh.mkfs(master, img, 64 * fh.MiB)
    m = fh.Mount(master, img, os.path.join(d, EVIL),
                 os.path.join(d, "fused.log"))
    m.mount()
    # Mount.unmount() looks for the name undecoded: unmount it here.
    made.append(m.wait_daemon_exit)
    made.append(lambda: subprocess.run(["umount", m.mnt]))
    env = dict(master.env)
    env.pop("FAMFS_MOUNTS", None)
    fields = notify_fields(env, d)
    assert fields[0] == "READY=1" and len(fields) == 2, fields
    assert "evil\\nSTOPPING=1\\nSTATUS=pwned" in fields[1], fields


# ---- minor: a daemon killed under a command; an entry named .meta ------

def test_cli_reports_a_lost_device_instead_of_dying(master, device, mnt):
    """The daemon is SIGKILLed while famfs mkdir has the log mapped (it
    waits for the writers' lock, held here): the command says the device
    is lost and exits 1, it is not killed by SIGBUS."""
    fd = fh.take_log_lock(device)
    try:
        p = subprocess.Popen([fh.FAMFS, "mkdir", mnt.mnt + "/d"],
                             env=dict(master.env, FAMFS_LOCK_TIMEOUT="60"),
                             stderr=subprocess.PIPE, text=True)
        assert "waiting up to 60 s" in p.stderr.readline()
        os.kill(mnt.pid, signal.SIGKILL)
        assert mnt.wait_daemon_exit()
    finally:
        os.close(fd)
    err = p.communicate(timeout=60)[1]
    assert p.returncode == 1, (p.returncode, err)
    assert "famfs mkdir: lost the device (%s)" % (mnt.mnt + "/d") in err, err


def test_an_entry_named_meta_is_refused_and_hidden(tmp_path, master, device,
                                                  mounts):
    p = master.famfs("mkdir", "-D", device, ".meta", check=False)
    assert p.returncode != 0
    # Another tool logs one: rename a logged file to .meta (CRC fixed).
    master.famfs("creat", "-D", device, "-s", "4096", "xmeta")
    e = bytearray(fh.read_entry(device, 0))
    e[e.index(b"xmeta")] = ord(".")
    fh.write_entry(device, 0, e)
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    assert sorted(os.listdir(m.mnt)) == [".meta"], os.listdir(m.mnt)
    assert sorted(os.listdir(m.mnt + "/.meta")) == [
        ".log", ".status", ".superblock"]


def _foreign_append(dev, e):
    """Append entry @e as a writer that does not take the lock would."""
    n = fh.log_next_index(dev)
    fh.write_entry(dev, n, e, count=n + 1)
    return n


def test_files_being_written_outlast_an_append_made_without_the_lock(mnt):
    """Another writer appends while files are being written through the
    mount (it ignored the lock): the daemon follows the log and logs its
    files after that entry, before and after it has seen it. They used to
    be lost at their close, which had returned 0."""
    dev = mnt.dev
    os.mkdir(os.path.join(mnt.mnt, "d"))
    proto = fh.read_entry(dev, fh.log_next_index(dev) - 1)  # a MKDIR
    peer = bytearray(proto)
    peer[28:28 + 80] = b"peer".ljust(80, b"\0")
    with open(os.path.join(mnt.mnt, "a"), "wb") as a:
        a.write(b"a" * 4096)
        a.flush()
        _foreign_append(dev, peer)
        assert os.path.isdir(os.path.join(mnt.mnt, "peer"))  # seen now
        with open(os.path.join(mnt.mnt, "b"), "wb") as b:
            b.write(b"b" * 4096)
    late = bytearray(proto)
    late[28:28 + 80] = b"late".ljust(80, b"\0")
    with open(os.path.join(mnt.mnt, "c"), "wb") as c:
        c.write(b"c" * 4096)
        c.flush()
        _foreign_append(dev, late)  # not seen before c's close
    for name in "abc":
        path = os.path.join(mnt.mnt, name)
        assert fh.wait_for(lambda: os.path.exists(path)), name
        with open(path, "rb") as f:
            assert f.read() == name.encode() * 4096
    assert os.path.isdir(os.path.join(mnt.mnt, "late"))
    assert "moved under the writers' lock" in mnt.log_text()
    assert "is lost" not in mnt.log_text()


def test_a_file_logged_without_the_lock_in_a_pending_files_memory(mnt):
    """Another writer, ignoring the lock, logs a file in memory a file
    being written has: that file is lost (its writes fail with EIO, it is
    never logged: every other host would refuse it), and its memory is not
    given to a new file."""
    dev = mnt.dev
    with open(os.path.join(mnt.mnt, "tmpl"), "wb") as t:
        t.write(b"t")
    ino = os.stat(os.path.join(mnt.mnt, "tmpl")).st_ino
    _, (_, exts) = fh.file_entry(dev, ino)
    end = exts[0][1] + exts[0][2]
    victim = os.open(os.path.join(mnt.mnt, "victim"),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(victim, b"v" * 4096)
    # the peer's file: 64 MiB right after tmpl's memory, where the
    # victim's is
    e = bytearray(fh.read_entry(dev, ino - 2))
    e[40:40 + 80] = b"peer".ljust(80, b"\0")  # the FILE entry's relpath
    struct.pack_into("<Q", e, 16, 64 << 20)
    fm = 16 + 104
    struct.pack_into("<I", e, fm + 8, 1)
    struct.pack_into("<QQQ", e, fm + 16, 0, end, 64 << 20)
    _foreign_append(dev, e)
    # a lookup of a name not known makes the daemon read the log
    os.path.exists(os.path.join(mnt.mnt, "peer"))
    with pytest.raises(OSError) as err:
        os.write(victim, b"w" * 4096)
    assert err.value.errno == errno.EIO
    os.close(victim)
    assert "logged \"peer\" in its memory" in mnt.log_text()
    assert not os.path.exists(os.path.join(mnt.mnt, "victim"))
    # a new file is not placed in the victim's memory
    with open(os.path.join(mnt.mnt, "next"), "wb") as f:
        f.write(b"n" * 4096)
    nino = os.stat(os.path.join(mnt.mnt, "next")).st_ino
    _, (_, nexts) = fh.file_entry(dev, nino)
    assert all(o >= end + (64 << 20) or o + ln <= end for _, o, ln in nexts)
