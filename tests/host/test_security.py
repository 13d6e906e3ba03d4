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
import select
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
    fh.sweep(d)
    shutil.rmtree(d, ignore_errors=True)


def as_user(cmd, env=None, **kw):
    return fh.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                   "--clear-groups"] + cmd, env=env, **kw)


def mount_opts(mnt):
    at = fh.mounts_at(mnt)
    return at[-1]["opts"] if at else None


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
    # famfs mount (upstream's way in) gives the same defaults
    fh.run([fh.FAMFS, "mount", "-o", "logfile=" + m.logfile, img, m.mnt],
           env=dict(root.env, FAMFS_MOUNT_HELPER=fh.MOUNT))
    m.pid = int(m.status()["pid"])
    assert {"nosuid", "nodev"} <= mount_opts(m.mnt)
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


@pytest.fixture
def wmnt(world, mounts):
    """A root mount on a root 0600 image, its mount point reachable by all."""
    root = fh.Host(world, "root")
    img = os.path.join(world, "root.img")
    with open(os.open(img, os.O_CREAT | os.O_WRONLY, 0o600), "wb") as f:
        f.truncate(64 * fh.MiB)
    fh.run([fh.MKFS, img], env=root.env)
    m = fh.Mount(root, img, os.path.join(world, "mnt"),
                 os.path.join(world, "fused.log"))
    mounts.append(m)
    p = m.mount()
    assert "warning" not in p.stderr, p.stderr
    return root, m


# Run as the unprivileged user: every lock it can get on each path it can
# open (flock, and OFD read and write locks), one JSON report on stdout
# once they are all taken, then held until stdin closes.
HOLDER = r"""
import fcntl, json, os, struct, sys
held, refused = [], {}
for path in sys.argv[1:]:
    for flags in (os.O_RDWR, os.O_RDONLY):
        try:
            fd = os.open(path, flags)
        except OSError as e:
            refused[path] = e.strerror
            continue
        refused.pop(path, None)
        kinds = [("ofd-write", fcntl.F_WRLCK)] if flags == os.O_RDWR \
            else [("flock", None), ("ofd-read", fcntl.F_RDLCK)]
        for kind, t in kinds:
            try:
                if t is None:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                else:
                    fcntl.fcntl(fd, fcntl.F_OFD_SETLK,
                                struct.pack("hhqqi4x", t, 0, 0, 0, 0))
                held.append([path, kind])
            except OSError:
                pass
        break
print(json.dumps({"held": held, "refused": refused}), flush=True)
sys.stdin.read()
"""


def _conflicting_lock(path, kind):
    """Whether a lock of @kind (as HOLDER takes it) is held on @path by
    another open file description, asked from a new one: F_OFD_GETLK for
    OFD locks, a non-blocking flock for flock."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if kind == "flock":
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        # a write lock is refused by any lock: GETLK reports the holder's
        got = fcntl.fcntl(fd, fcntl.F_OFD_GETLK,
                          struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
        return struct.unpack("hhqqi4x", got)[0] != fcntl.F_UNLCK
    finally:
        os.close(fd)


def test_user_cannot_block_writers(wmnt):
    """famfs(8): no user who is not root can keep a writer from the log.
    A user takes every lock it can on everything of the mount it can open
    (the log, a file readable by all, the mount's directory, its status)
    and on the image; each lock it reports is checked from another open
    file description before the writers run. The writers then go through
    within the documented lock timeout (FAMFS_LOCK_TIMEOUT, here 2 s):
    they neither wait for the log lock nor give up on it."""
    root, m = wmnt
    pub = os.path.join(m.mnt, "pub")
    root.famfs("creat", "-s", "2m", "-m", "0644", pub)
    paths = [os.path.join(m.mnt, ".meta/.log"), m.dev, pub, m.mnt,
             os.path.join(m.mnt, ".meta/.status")]
    holder = subprocess.Popen(
        ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
         "--clear-groups", "/usr/bin/python3", "-c", HOLDER] + paths,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    # root reading the log (famfs logplay, fsck) may flock it as well
    reader = os.open(paths[0], os.O_RDONLY)
    try:
        fcntl.flock(reader, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _conflicting_lock(paths[0], "flock")
        ready, _, _ = select.select([holder.stdout], [], [], 30)
        assert ready, "the user's lock holder never reported"
        line = holder.stdout.readline()
        assert line, holder.stderr.read()
        report = json.loads(line)
        held = [tuple(h) for h in report["held"]]
        # the user holds locks where it can: on the file it may read and
        # on the mount's directory, each seen from another description
        assert (pub, "ofd-read") in held and (pub, "flock") in held, report
        assert (m.mnt, "flock") in held, report
        for path, kind in held:
            assert _conflicting_lock(path, kind), (path, kind)
        env = dict(root.env, FAMFS_LOCK_TIMEOUT="2")
        for args in (["mkdir", os.path.join(m.mnt, "d")],
                     ["creat", "-s", "2m", os.path.join(m.mnt, "d/f")]):
            p = fh.run([fh.FAMFS] + args, env=env, check=False, timeout=60)
            assert p.returncode == 0, (args, report, p.stderr)
            assert "log lock" not in p.stderr, (args, report, p.stderr)
        assert holder.poll() is None, "the holder let go early"
    finally:
        os.close(reader)
        holder.stdin.close()
        try:
            holder.wait(timeout=10)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()


def test_writer_lock_waits_with_a_bound(wmnt):
    root, m = wmnt
    fd = fh.take_log_lock(m.dev)
    try:
        env = dict(root.env, FAMFS_LOCK_TIMEOUT="2")
        t = time.monotonic()
        p = fh.run([fh.FAMFS, "mkdir", os.path.join(m.mnt, "d")], env=env,
                   check=False, timeout=20)
        assert p.returncode == 1, p.stderr
        assert time.monotonic() - t < 6
        holder = "held by pid %d (python3)" % os.getpid()
        # never silent: after a second it says whom it waits for
        assert "famfs: waiting up to 2 s for the log lock of %s, %s\n" \
            % (m.mnt, holder) in p.stderr, p.stderr
        assert "gave up after 2 s waiting for the log lock of %s, %s" \
            % (m.mnt, holder) in p.stderr, p.stderr
        p = fh.run([fh.FAMFS, "mkdir", os.path.join(m.mnt, "d")],
                   env=dict(root.env, FAMFS_LOCK_TIMEOUT="1s"), check=False)
        assert p.returncode == 1
        assert "FAMFS_LOCK_TIMEOUT=1s: give whole seconds, 0 to 86400" \
            in p.stderr, p.stderr
    finally:
        os.close(fd)
    root.famfs("mkdir", os.path.join(m.mnt, "d"))


def test_readers_never_take_the_log_lock(wmnt):
    """While a writer holds the device's log lock (root's lock file),
    every command that only reads the log completes at once; writers give
    up (FAMFS_LOCK_TIMEOUT=0), which shows the lock was held."""
    root, m = wmnt
    root.famfs("creat", "-s", "2m", "-r", "-S", "7",
               os.path.join(m.mnt, "f"))
    fds = [fh.take_log_lock(m.dev)]
    env = dict(root.env, FAMFS_LOCK_TIMEOUT="0")
    f = os.path.join(m.mnt, "f")
    try:
        for args in (["check", m.mnt],
                     ["getmap", f],
                     ["getmap", "-D", m.dev, "f"],
                     ["verify", "-S", "7", "-f", f],
                     ["verify", "-D", m.dev, "-S", "7", "-f", "f"],
                     ["flush", "-D", m.dev, "f"],
                     ["logplay", m.mnt],
                     ["logplay", "-D", m.dev],
                     ["fsck", m.mnt],
                     ["status", m.mnt]):
            p = fh.run([fh.FAMFS] + args, env=env, check=False, timeout=20)
            assert p.returncode == 0, (args, p.stdout, p.stderr)
            assert "lock" not in p.stderr, (args, p.stderr)
        holder = "held by pid %d (python3)" % os.getpid()
        p = fh.run([fh.FAMFS, "mkdir", os.path.join(m.mnt, "d")], env=env,
                   check=False, timeout=20)
        assert p.returncode == 1, p.stderr
        assert "gave up after 0 s waiting for the log lock of %s, %s" \
            % (m.mnt, holder) in p.stderr, p.stderr
        # The device under the mount is the mount's: no writer there.
        p = fh.run([fh.FAMFS, "mkdir", "-D", m.dev, "d"], env=env,
                   check=False, timeout=20)
        assert p.returncode == 1, p.stderr
        assert "%s is mounted at %s (EBUSY)" % (m.dev, m.mnt) in p.stderr, \
            p.stderr
    finally:
        for fd in fds:
            os.close(fd)


def test_meta_is_root_only(wmnt):
    root, m = wmnt
    root.famfs("creat", "-s", "2m", "-r", "-S", "7", "-m", "0644",
               os.path.join(m.mnt, "f"))
    for name, mode in ((".log", 0o600), (".superblock", 0o400)):
        st = os.stat(os.path.join(m.mnt, ".meta", name))
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, mode)
    user = fh.Host(os.path.dirname(m.mnt), "user")
    for name in (".log", ".superblock"):
        p = as_user(["cat", os.path.join(m.mnt, ".meta", name)],
                    check=False)
        assert p.returncode != 0 and "Permission denied" in p.stderr
    as_user(["cat", os.path.join(m.mnt, ".meta/.status")])
    for cmd in (["logplay", m.mnt], ["getmap", os.path.join(m.mnt, "f")]):
        p = as_user([fh.FAMFS] + cmd, env=user.env, check=False)
        assert p.returncode != 0
        assert "%s/.meta is root's: run this as root" % m.mnt in p.stderr, \
            p.stderr
    # what needs only the files, not .meta, works for a user
    f = os.path.join(m.mnt, "f")
    as_user([fh.FAMFS, "verify", "-S", "7", "-f", f], env=user.env)
    as_user([fh.FAMFS, "flush", f], env=user.env)
    p = as_user([fh.FAMFS, "status", m.mnt], env=user.env, check=False)
    assert p.returncode == 0 and "healthy" in p.stdout, p.stdout + p.stderr
    # --json says why the log was not read (log_not_read), with exactly
    # the keys famfs(8) documents for such a mount
    p = as_user([fh.FAMFS, "status", "--json", m.mnt], env=user.env)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(p.stdout)
        f.flush()
        fh.run(["/usr/bin/python3",
                os.path.join(fh.ROOT, "tests/cli/json_keys.py"), "status",
                f.name, "unread"])
    assert "root's" in json.loads(p.stdout)["mounts"][0]["log_not_read"]


def test_meta_open_refused_by_daemon(wmnt):
    """Even without the kernel's default_permissions the daemon refuses
    .meta/.log and .superblock to anyone but root."""
    root, m = wmnt
    hdr = struct.Struct("<IIQQIIIHH")
    init = struct.pack("<IIIII44x", 7, 38, 128 << 10, 1 << 30 | 1, 0)
    reqs = [(26, 0, 0, init)]
    for uid in (NOBODY, 0):
        for ino in ((1 << 40) + 1, (1 << 40) + 2):
            reqs.append((14, ino, uid, struct.pack("<II", os.O_RDONLY, 0)))
    raw = b""
    for unique, (op, node, uid, body) in enumerate(reqs, start=1):
        raw += hdr.pack(hdr.size + len(body), op, unique, node, uid, uid,
                        1, 0, 0) + body
    p = subprocess.run([fh.RAWREQ, "--session", m.dev], input=raw,
                       capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr
    errs, buf = [], p.stdout
    while buf:
        ln, err, _ = struct.unpack_from("<IiQ", buf)
        errs.append(err)
        buf = buf[ln:]
    assert errs[1:] == [-errno.EACCES] * 2 + [0] * 2, errs


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o620,
                                  0o602, 0o600], ids="{:04o}".format)
def test_exposed_image_warns(tmp_path, master, mounts, mode):
    """Read or write access for the group or for others is each warned
    about; a 0600 image gets no warning."""
    img = str(tmp_path / "open.img")
    fh.mkfs(master, img, 64 * fh.MiB)
    os.chmod(img, mode)
    m = fh.Mount(master, img, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    p = m.mount()
    read = "warning: %s can be read by users other than root (mode %04o): " \
        "they can read every file in it, whatever the file's mode; " \
        "chmod 600 %s" % (img, mode, img)
    write = "warning: %s can be written by users other than root (mode " \
        "%04o): any of them can rewrite its log" % (img, mode)
    assert (read in p.stderr) == bool(mode & 0o044), p.stderr
    assert (write in p.stderr) == bool(mode & 0o022), p.stderr
    assert ("warning" in p.stderr) == (mode != 0o600), p.stderr


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
    assert len(fh.mounts_at(mnt.mnt)) == 1
