# SPDX-License-Identifier: GPL-2.0-or-later
"""Hostile input, round 2: names that mean one thing to a printer and
another to open(2), a shadow tree in a directory a user controls, logs
and configuration crafted to inject lines, options or bytes, and a
forged fd store. Each test is the attack, made as the attacker would
(an unprivileged user, uid 65534, where the item is about one)."""
import json
import re
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import zlib

import pytest

import famfs_host as fh

NOBODY = 65534


def as_user(cmd, env=None, **kw):
    return fh.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                   "--clear-groups"] + cmd, env=env, **kw)


def run_bytes(cmd, env, timeout=60):
    """@cmd may hold bytes arguments; output stays bytes."""
    return subprocess.run(cmd, env=env, capture_output=True,
                          timeout=timeout)


def forge_name(dev, index, old, new):
    """Rename log entry @index from @old to @new (bytes of equal length,
    control characters allowed: the CLI refuses them, a forger does not)
    and give the entry a valid CRC again."""
    assert len(old) == len(new)
    off = fh.LOG_OFFSET + fh.LOG_HDR + index * fh.ENTRY
    with open(dev, "r+b") as f:
        f.seek(off)
        e = bytearray(f.read(fh.ENTRY))
        at = e.find(old + b"\0")
        assert at > 0, "entry %d holds no name %r" % (index, old)
        e[at:at + len(old)] = new
        struct.pack_into("<Q", e, 536, zlib.crc32(bytes(e[:536])))
        f.seek(off)
        f.write(e)


@pytest.fixture
def world(tools):
    """A directory like /tmp: root's, sticky, everyone may add to it."""
    d = tempfile.mkdtemp(prefix="famfs-hostile-", dir="/tmp")
    os.chmod(d, 0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# ---- names: escaping is for printing, open(2) gets the real name --------

# Each name, and the name its display form (famfs_escape) would be if it
# were taken for a path: a file by that name is made first, as a decoy
# that must never be written.
NAMES = [
    (b"a\\b", b"a\\\\b"),
    (b"q\"u'ote", None),
    (b"sp ace s", None),
    ("\u00fc\u00f1\u00ee-\u540d".encode(), None),
]


def _mount_file(mnt, name):
    return os.path.join(mnt.encode(), name)


def test_escaped_names_are_opened_by_their_real_name(mnt, master, tmp_path):
    src = str(tmp_path / "src")
    with open(src, "wb") as f:
        f.write(os.urandom(2 * fh.MiB))
    famfs = fh.FAMFS.encode()
    for i, (name, decoy) in enumerate(NAMES):
        if decoy:
            p = run_bytes([famfs, "creat", "-s", "2m", "-r", "-S", b"99",
                           _mount_file(mnt.mnt, decoy)], master.env)
            assert p.returncode == 0, p.stderr
        path = _mount_file(mnt.mnt, name)
        seed = str(i + 1).encode()
        # creat -r writes the pattern through the mount: into the real name
        p = run_bytes([famfs, "creat", "-s", "2m", "-r", "-S", seed, path],
                      master.env)
        assert p.returncode == 0, p.stderr
        p = run_bytes([famfs, "verify", "-S", seed, "-f", path], master.env)
        assert p.returncode == 0, p.stderr
        if decoy:
            p = run_bytes([famfs, "verify", "-S", b"99", "-f",
                           _mount_file(mnt.mnt, decoy)], master.env)
            assert p.returncode == 0, (name, p.stderr)
        # cp over the existing file of the same size: its bytes change,
        # and nothing else's
        p = run_bytes([famfs, "cp", src.encode(), path], master.env)
        assert p.returncode == 0, p.stderr
        with open(path, "rb") as f, open(src, "rb") as g:
            assert f.read() == g.read(), name
        if decoy:
            p = run_bytes([famfs, "verify", "-S", b"99", "-f",
                           _mount_file(mnt.mnt, decoy)], master.env)
            assert p.returncode == 0, (name, p.stderr)
        p = run_bytes([famfs, "getmap", "-q", path], master.env)
        assert p.returncode == 0, p.stderr
        d = _mount_file(mnt.mnt, b"d-" + name)
        p = run_bytes([famfs, "mkdir", d], master.env)
        assert p.returncode == 0, p.stderr
        assert os.path.isdir(d)
        p = run_bytes([famfs, "cp", src.encode(), d], master.env)
        assert p.returncode == 0, p.stderr
        assert os.path.getsize(os.path.join(d, b"src")) == 2 * fh.MiB


def test_newline_name_from_a_forged_log_is_opened_by_its_real_name(
        tmp_path, master, device, mounts):
    # the CLI refuses control characters in new names; a forged log has them
    famfs = fh.FAMFS.encode()
    for name, seed in ((b"nlXx", b"5"), (b"nl\\nx", b"6")):
        p = run_bytes([famfs, "creat", "-D", device.encode(), "-s", "2m",
                       "-r", "-S", seed, name], master.env)
        assert p.returncode == 0, p.stderr
    forge_name(device, 0, b"nlXx", b"nl\nx")
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    real = _mount_file(m.mnt, b"nl\nx")
    p = run_bytes([famfs, "verify", "-S", b"5", "-f", real], master.env)
    assert p.returncode == 0, p.stderr
    src = str(tmp_path / "src")
    with open(src, "wb") as f:
        f.write(b"\xa5" * 2 * fh.MiB)
    p = run_bytes([famfs, "cp", src.encode(), real], master.env)
    assert p.returncode == 0, p.stderr
    with open(real, "rb") as f:
        assert f.read() == b"\xa5" * 2 * fh.MiB
    # the decoy, what the escaped name would open, is untouched
    p = run_bytes([famfs, "verify", "-S", b"6", "-f",
                   _mount_file(m.mnt, b"nl\\nx")], master.env)
    assert p.returncode == 0, p.stderr
    # the message names it escaped: no raw newline reaches the terminal
    p = run_bytes([famfs, "verify", "-S", b"7", "-f", real], master.env)
    assert p.returncode == 1
    assert b"nl\\nx: mismatch" in p.stderr, p.stderr


# ---- the shadow tree: root builds it, nobody else steers where -----------

@pytest.fixture
def protected(tools):
    """A root-only directory an attacker wants root to write into."""
    d = tempfile.mkdtemp(prefix="famfs-protected-", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _shadow(master, img, shadow, *more):
    return master.famfs("logplay", "--shadow", shadow, "--daxdev", img,
                        *more, check=False)


def test_shadow_dir_a_user_owns_is_refused(world, master, protected):
    img = os.path.join(world, "root.img")
    fh.mkfs(master, img, 64 * fh.MiB)
    master.famfs("mkdir", "-D", img, "-u", str(NOBODY), ".ssh")
    shadow = os.path.join(world, "shadow")
    as_user(["mkdir", "-m", "0755", shadow])
    as_user(["ln", "-s", protected, os.path.join(shadow, "root")])
    p = _shadow(master, img, shadow)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "is owned by uid %d" % NOBODY in p.stderr, p.stderr
    assert os.listdir(protected) == []
    # a root directory that others may write is refused too
    os.chown(shadow, 0, 0)
    os.unlink(os.path.join(shadow, "root"))
    os.chmod(shadow, 0o777)
    p = _shadow(master, img, shadow)
    assert p.returncode == 1
    assert "writable by others (mode 0777)" in p.stderr, p.stderr
    os.chmod(shadow, 0o755)
    # DIR/root made a link by whoever: never followed
    os.symlink(protected, os.path.join(shadow, "root"))
    p = _shadow(master, img, shadow)
    assert p.returncode == 1
    assert "a symbolic link is never followed" in p.stderr, p.stderr
    assert os.listdir(protected) == []
    os.unlink(os.path.join(shadow, "root"))
    p = _shadow(master, img, shadow)
    assert p.returncode == 0, p.stderr
    st = os.stat(os.path.join(shadow, "root", ".ssh"))
    assert st.st_uid == NOBODY


def test_shadow_tree_never_follows_a_users_link(world, master, protected):
    """The log gives directory u to the user, who puts a link in it where
    the log's next entries go: they must not land in the link's target."""
    img = os.path.join(world, "root.img")
    fh.mkfs(master, img, 64 * fh.MiB)
    master.famfs("mkdir", "-D", img, "-u", str(NOBODY), "-m", "0755", "u")
    shadow = os.path.join(world, "shadow")
    os.mkdir(shadow, 0o755)
    p = _shadow(master, img, shadow)
    assert p.returncode == 0, p.stderr
    u = os.path.join(shadow, "root", "u")
    assert os.stat(u).st_uid == NOBODY
    as_user(["ln", "-s", protected, os.path.join(u, "x")])
    master.famfs("mkdir", "-D", img, "u/x")
    master.famfs("mkdir", "-D", img, "-u", str(NOBODY), "u/x/sub")
    master.famfs("creat", "-D", img, "-s", "2m", "u/x/f")
    p = _shadow(master, img, shadow, "--shadowtest")
    assert p.returncode == 1, p.stdout + p.stderr
    assert os.listdir(protected) == [], os.listdir(protected)
    assert "something other than a directory is there" in p.stderr
    assert "symbolic link is never followed" in p.stderr, p.stderr


def test_shadowtest_reads_yaml_with_bounds(world, master):
    img = os.path.join(world, "root.img")
    fh.mkfs(master, img, 64 * fh.MiB)
    master.famfs("creat", "-D", img, "-s", "2m", "deep")
    master.famfs("creat", "-D", img, "-s", "2m", "big")
    shadow = os.path.join(world, "shadow")
    os.mkdir(shadow, 0o755)
    assert _shadow(master, img, shadow).returncode == 0
    with open(os.path.join(shadow, "root", "deep"), "w") as f:
        f.write("[" * 60000)
    with open(os.path.join(shadow, "root", "big"), "w") as f:
        f.write("[" * 200000)
    t = time.monotonic()
    p = _shadow(master, img, shadow, "--shadowtest")
    took = time.monotonic() - t
    print("\n# shadowtest of 60 KB and 200 KB of nested brackets: %.2f s"
          % took)
    assert p.returncode == 1
    assert "deep: YAML nested deeper than 16 levels at line 1" in p.stderr, \
        p.stderr
    assert "big: YAML larger than 65536 bytes" in p.stderr, p.stderr
    assert took < 20, "took %.1f s" % took


# ---- famfs-fused's socket directory --------------------------------------

def _fused_mounted(mnt):
    with open("/proc/self/mountinfo") as f:
        return any(l.split()[4] == mnt for l in f)


def test_fused_refuses_a_shadow_dir_others_control(world, master, device,
                                                   tmp_path):
    mnt = str(tmp_path / "mnt")
    os.makedirs(mnt)
    log = str(tmp_path / "fused.log")
    user_dir = os.path.join(world, "usershadow")
    as_user(["mkdir", "-m", "0700", user_dir])
    open_dir = os.path.join(world, "openshadow")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    try:
        for d, why in ((user_dir, "owned by uid %d" % NOBODY),
                       (open_dir, "writable by others (mode 0777)")):
            p = fh.run([fh.FUSED, "-o", "daxdev=%s,shadow=%s,logfile=%s"
                        % (device, d, log), mnt], env=master.env,
                       check=False, timeout=30)
            assert p.returncode == 1, p.stderr
            assert not _fused_mounted(mnt)
            assert "shadow directory: %s is %s" % (d, why) in p.stderr, \
                p.stderr
    finally:
        if _fused_mounted(mnt):
            subprocess.run(["umount", "-l", mnt])


def test_sweeper_passes_a_stopped_daemons_socket(tmp_path, master, device,
                                                 mounts):
    """A daemon stopped (SIGSTOP) accepts no connections: its socket's
    queue fills up and a blocking connect() to it waits for ever."""
    run = str(tmp_path / "run")
    os.makedirs(run)
    master.env["FAMFS_RUN_DIR"] = run
    stopped = os.path.join(run, "shadow-stopped")
    os.makedirs(stopped, mode=0o700)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(os.path.join(stopped, "sock"))
    srv.listen(0)
    queued = []
    while True:
        c = socket.socket(socket.AF_UNIX)
        c.setblocking(False)
        try:
            c.connect(os.path.join(stopped, "sock"))
        except BlockingIOError:
            c.close()
            break
        queued.append(c)
    os.utime(stopped, (0, 0))
    m = fh.Mount(master, device, str(tmp_path / "m"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    try:
        m.mount()
        # serving: the daemon is not stuck in the sweep
        p = fh.run(["stat", os.path.join(m.mnt, ".meta/.status")],
                   check=False, timeout=30)
        assert p.returncode == 0
        # a live socket is never swept
        assert os.path.exists(os.path.join(stopped, "sock"))
    finally:
        for c in queued:
            c.close()
        srv.close()


# ---- one escaping rule for every printer ---------------------------------

ESC_NAME = b"x\x1b[2Jy"  # clears the screen when printed raw


def _setuid_image(master, dev, name):
    """An image whose log holds a set-user-ID file named @name (forged
    when the CLI would refuse the name)."""
    fh.mkfs(master, dev, 64 * fh.MiB)
    stand_in = b"N" * len(name)
    p = run_bytes([fh.FAMFS.encode(), "creat", "-D", dev.encode(), "-s",
                   "2m", "-m", "4755", stand_in], master.env)
    assert p.returncode == 0, p.stderr
    forge_name(dev, 0, stand_in, name)


def test_setid_warnings_and_shadow_errors_are_escaped(tmp_path, master,
                                                      mounts):
    dev = str(tmp_path / "esc.img")
    _setuid_image(master, dev, ESC_NAME)
    p = run_bytes([fh.FAMFS, "fsck", dev], master.env)
    assert p.returncode == 0, p.stderr
    assert b"\x1b" not in p.stdout
    assert b'"x\\x1b[2Jy" is set-user-ID' in p.stdout, p.stdout
    shadow = tmp_path / "shadow"
    os.makedirs(os.path.join(bytes(shadow), b"root", ESC_NAME))
    p = run_bytes([fh.FAMFS, "logplay", "--shadow", str(shadow),
                   "--daxdev", dev], master.env)
    assert p.returncode == 1
    assert b"\x1b" not in p.stdout + p.stderr
    assert b"root/x\\x1b[2Jy: something other than a file" in p.stderr, \
        p.stderr
    m = fh.Mount(master, dev, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    p = run_bytes([fh.FAMFS, "status", m.mnt], master.env)
    assert p.returncode == 0, p.stderr
    assert b"\x1b" not in p.stdout
    assert b'"x\\x1b[2Jy" is set-user-ID' in p.stdout, p.stdout


def test_daemon_log_lines_cannot_be_forged(tmp_path, master, device):
    """Under journald each stderr line is a journal entry with the
    priority its "<N>" says: a name holding a newline must not start a
    line of its own."""
    famfs = fh.FAMFS.encode()
    for stand_in in (b"evilA<0>forged", b"evilB<0>forged"):
        p = run_bytes([famfs, "creat", "-D", device.encode(), "-s", "2m",
                       stand_in], master.env)
        assert p.returncode == 0, p.stderr
    # the same name twice: the daemon skips the second and says so
    forge_name(device, 0, b"evilA<0>forged", b"evil\n<0>forged")
    forge_name(device, 1, b"evilB<0>forged", b"evil\n<0>forged")
    mnt = str(tmp_path / "mnt")
    os.makedirs(mnt)
    env = dict(master.env, JOURNAL_STREAM="8:12345")
    d = subprocess.Popen([fh.FUSED, "-f", device, mnt], env=env,
                         stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not _fused_mounted(mnt):
            assert d.poll() is None, d.stderr.read()
            assert time.monotonic() < deadline, "not mounted"
            time.sleep(0.05)
        os.listdir(mnt)
    finally:
        subprocess.run(["umount", mnt])
        try:
            err = d.communicate(timeout=20)[1]
        except subprocess.TimeoutExpired:
            d.kill()
            err = d.communicate()[1]
    lines = err.split(b"\n")[:-1]
    assert b"evil\\n<0>forged" in err, err
    for line in lines:
        assert line[:1] == b"<" and line[2:3] == b">", line
        assert not line.startswith(b"<0>"), line


# ---- JSON is UTF-8, whatever names hold ----------------------------------

def _json(out):
    return json.loads(out.decode("utf-8", errors="strict"))


def test_json_stays_valid_with_names_that_are_not_utf8(tmp_path, master,
                                                       mounts):
    name = b"s\xff\xfe"
    dev = str(tmp_path / "bad.img")
    _setuid_image(master, dev, name)
    p = run_bytes([fh.FAMFS, "fsck", "--json", dev], master.env)
    assert p.returncode == 0, p.stderr
    j = _json(p.stdout)
    assert j["setid_files"] == 1
    assert '"s\\xff\\xfe" is set-user-ID' in j["warnings"][0], j
    mnt = os.path.join(bytes(tmp_path), b"m\xff\xfe")
    os.makedirs(mnt)
    p = run_bytes([fh.MOUNT, dev, mnt, "-o",
                   "logfile=" + str(tmp_path / "fused.log")], master.env)
    assert p.returncode == 0, p.stderr
    try:
        p = run_bytes([fh.FAMFS, "status", "--json", mnt], master.env)
        assert p.returncode == 0, p.stderr
        j = _json(p.stdout)
        ours = [m for m in j["mounts"]
                if m["mountpoint"].endswith("/m\\xff\\xfe")]
        assert len(ours) == 1, j
        assert '"s\\xff\\xfe" is set-user-ID' in ours[0]["warnings"][0]
    finally:
        subprocess.run([b"umount", mnt])


# ---- famfs.conf: values are values, never more mount options -------------

def test_conf_values_cannot_add_mount_options(master, device, tmp_path):
    mnt = str(tmp_path / "mnt")
    os.makedirs(mnt)
    conf = str(tmp_path / "famfs.conf")
    for text, line, key in (
            ("fuse_dev = /dev/fuse,suid\n", 1, "fuse_dev"),
            ("# logs\nlogfile = /tmp/famfs.log,dev,suid\n", 2, "logfile"),
            ("poll_ms = 100\nrole = auto\nlogfile = /tmp/a\"b\n", 3,
             "logfile")):
        with open(conf, "w") as f:
            f.write(text)
        p = fh.run([fh.MOUNT, "-f", device, mnt],
                   env=dict(master.env, FAMFS_CONF=conf), check=False)
        assert p.returncode == 32, p.stderr
        assert "mount.famfs: %s:%d: bad value for %s: " % (conf, line, key) \
            in p.stderr, p.stderr
        assert "mount option syntax" in p.stderr, p.stderr
        assert "famfs-fused -o" not in p.stderr  # nothing would run


# ---- fsck --repair keeps what is intact ------------------------------------

SB_DEVSIZE = 112  # superblock: daxdev.size (outside the superblock CRC)


def _set_sb_size(dev, size):
    with open(dev, "r+b") as f:
        f.seek(SB_DEVSIZE)
        f.write(struct.pack("<Q", size))


def test_repair_never_drops_intact_entries_for_a_superblock_size(
        tmp_path, master):
    dev = str(tmp_path / "sb.img")
    fh.mkfs(master, dev, 64 * fh.MiB)
    for i in range(1, 7):  # 10 MiB of superblock and log, then 2 MiB each
        master.famfs("creat", "-D", dev, "-s", "2m", "-r", "-S", str(i),
                     "f%d" % i)
    _set_sb_size(dev, 16 * fh.MiB)
    p = master.famfs("fsck", dev, check=False)
    assert p.returncode == 1, p.stdout
    assert "the superblock records a device of 16777216 bytes, but %s has " \
        "67108864" % dev in p.stdout, p.stdout
    assert "is intact (valid CRC): only the superblock's geometry" \
        in p.stdout, p.stdout
    p = master.famfs("fsck", "--repair", dev, check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "kept 3 intact entries (index 3 and later) that the superblock " \
        "does not fit" in p.stderr, p.stderr
    assert "dropped" not in p.stderr, p.stderr
    # the superblock put right, every entry is there and holds its data
    _set_sb_size(dev, 64 * fh.MiB)
    p = master.famfs("fsck", dev, check=False)
    assert p.returncode == 0, p.stdout
    assert "6 files" in p.stdout, p.stdout
    for i in range(1, 7):
        master.famfs("verify", "-D", dev, "-S", str(i), "-f", "f%d" % i)


# ---- a forged fd store (root only) ---------------------------------------

def _handed_over(tmp_path, master, device, mounts):
    """A daemon that stored its connection and state, then handed over
    (exit 75): what the fd store holds for the next daemon."""
    from test_restart import HANDOVER_EXIT, Service, _wait_exit
    svc = Service(tmp_path, master, device, mounts)
    m, p = svc.first()
    p.send_signal(signal.SIGUSR1)
    _wait_exit(p)
    assert p.returncode == HANDOVER_EXIT
    return svc.sd, m, svc.mnt, svc.log


def _next_daemon(sd, m, master, device, mnt, log):
    from test_restart import _daemon_argv
    p = sd.start(_daemon_argv(device, mnt, log), master.env)
    m.pid = p.pid
    sd.wait(lambda: sd.ready == 2, "READY=1 from the next daemon")
    # and its word on the stored connection, whichever way it went
    end = time.monotonic() + 20
    while not re.search("took over|not taking over", m.log_text()):
        assert time.monotonic() < end, m.log_text()
        time.sleep(0.05)
    return p


def _stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def test_takeover_refuses_a_connection_that_is_no_fuse_device(
        tmp_path, master, device, mounts):
    sd, m, mnt, log = _handed_over(tmp_path, master, device, mounts)
    a, b = socket.socketpair()
    p = None
    try:
        # root replaces the stored connection (the real one is closed:
        # its mount is left without a daemon)
        os.close(sd.store["famfs-conn"])
        sd.store["famfs-conn"] = os.dup(a.fileno())
        p = _next_daemon(sd, m, master, device, mnt, log)
        text = m.log_text()
        assert "not taking over the FUSE connection kept for %s: the " \
            "stored connection is not a FUSE device" % mnt in text, text
        assert "took over" not in text, text
        # it serves a mount of its own
        assert m.status()["takeovers"] == "0"
    finally:
        if p:
            _stop(p)
        a.close()
        b.close()
        sd.close()


def test_takeover_refuses_a_state_with_an_unterminated_string(
        tmp_path, master, device, mounts):
    sd, m, mnt, log = _handed_over(tmp_path, master, device, mounts)
    p = None
    try:
        state = sd.store["famfs-state"]
        size = struct.unpack("<I", os.pread(state, 4, 12))[0]
        # the last string of the state, fuse_dev, filled to its end
        os.pwrite(state, b"A" * 4096, size - 4096)
        p = _next_daemon(sd, m, master, device, mnt, log)
        text = m.log_text()
        assert "not taking over the FUSE connection kept for %s: its " \
            "state is damaged (short, or a name runs past its field)" \
            % mnt in text, text
        assert "took over" not in text, text
        os.listdir(mnt)
    finally:
        if p:
            _stop(p)
        sd.close()
