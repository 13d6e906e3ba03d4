# SPDX-License-Identifier: GPL-2.0-or-later
"""pcq(1) on a mounted famfs (fallback mode): upstream's command lines,
counts and status file, run by an unprivileged user as upstream's
test_pcq.sh runs them; the queue's layout read back by an independent
decoder written from upstream's description; and queues that another
host (a forger here) left corrupt."""
import os
import shutil
import struct
import tempfile
import zlib

import pytest

import famfs_host as fh

NOBODY = 65534
MiB = 1 << 20
BUCKETS = 2 * MiB          # where the buckets start in the producer file


def pcq(*args, user=True, env=None, timeout=60):
    """pcq as the unprivileged user, or as root on host @env."""
    cmd = [fh.PCQ] + [str(a) for a in args]
    if user:
        cmd = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
               "--clear-groups"] + cmd
    return fh.run(cmd, env=env, check=False, timeout=timeout)


@pytest.fixture
def fs(tools, mounts):
    """A famfs every user can reach: pytest's tmp is root's 0700."""
    d = tempfile.mkdtemp(prefix="famfs-pcq-", dir="/tmp")
    os.chmod(d, 0o755)
    h = fh.Host(d, "master")
    dev = os.path.join(d, "img")
    fh.mkfs(h, dev, 256 * MiB)
    m = fh.Mount(h, dev, os.path.join(d, "mnt"), os.path.join(d, "log"))
    mounts.append(m)
    m.mount()
    # A status file the user may write, as upstream's is in /tmp.
    st = os.path.join(d, "status")
    with open(st, "w"):
        pass
    os.chown(st, NOBODY, NOBODY)
    yield m, st
    m.unmount()
    fh.sweep(d)
    shutil.rmtree(d, ignore_errors=True)


def status(path):
    with open(path) as f:
        return int(f.read())


def create(m, name, bsize, nbuckets, owner=True):
    q = os.path.join(m.mnt, name)
    args = ["--create", "-b", bsize, "-n", nbuckets]
    if owner:
        args += ["-u", "nobody", "-g", str(NOBODY)]
    p = pcq(*args, q, user=False, env=m.host.env)
    assert p.returncode == 0, p.stdout + p.stderr
    return q


def header(q):
    """The queue's state by upstream's byte offsets."""
    with open(q, "rb") as f:
        p = f.read(1080)
    with open(q + ".consumer", "rb") as f:
        c = f.read(16)
        f.seek(16 + MiB)
        c += f.read(16)
    magic, nb, bs, boff, pidx = struct.unpack_from("<5Q", p, 0)
    pseq, psize = struct.unpack_from("<2Q", p, 1064)
    cmagic, _, cidx, cseq, csize = struct.unpack("<IIQQQ", c)
    return dict(magic=magic, nbuckets=nb, bsize=bs, offset=boff,
                pidx=pidx, pseq=pseq, psize=psize, cmagic=cmagic,
                cidx=cidx, cseq=cseq, csize=csize)


def poke(path, off, fmt, *vals):
    """What a peer host writing the shared memory could leave there."""
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(struct.pack(fmt, *vals))


@pytest.mark.parametrize("args", [
    ["--info", "--create"],
    ["--drain", "--producer"],
    ["--time", "10", "--nmessages", "100"],
    ["--create"],
    ["--create", "-D", "-v", "--bsize", "1024", "--nbuckets", "1024"],
    ["--setperm", "x", "q"],
    ["--setperm", "p", "--producer", "q"],
    ["--uid", "0", "--info", "q"],
    ["-p", "q"],
    ["q"],
    ["--info", "q", "r"],
    ["-b", "12x", "--create", "-n", "4", "q"],
    ["--bogus", "q"],
])
def test_bad_command_lines_exit_2(tools, args):
    p = pcq(*args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "pcq --help" in p.stderr


def test_help_exits_0(tools):
    for opt in ("-?", "-h", "--help"):
        p = pcq(opt)
        assert p.returncode == 0 and "--nbuckets" in p.stdout, p.stderr


def test_create_lays_out_upstreams_queue(fs):
    m, _ = fs
    q = create(m, "q0", "1k", "1K")
    st, cst = os.stat(q), os.stat(q + ".consumer")
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (NOBODY, NOBODY,
                                                         0o644)
    assert (cst.st_uid, cst.st_gid) == (NOBODY, NOBODY)
    assert st.st_size == BUCKETS + 1024 * 1024
    assert cst.st_size == 2 * MiB
    h = header(q)
    assert h == dict(magic=0xBEEBEE3, nbuckets=1024, bsize=1024,
                     offset=BUCKETS, pidx=0, pseq=0, psize=st.st_size,
                     cmagic=0xBEEBEE4, cidx=0, cseq=0, csize=2 * MiB)
    # Once only: a second create changes nothing.
    p = pcq("--create", "-b", "64", "-n", "16", q, user=False,
            env=m.host.env)
    assert p.returncode == 1 and "exists already" in p.stderr
    assert header(q) == h


@pytest.mark.parametrize("bsize,nbuckets", [("1000", "16"), ("32", "16"),
                                            ("64", "1")])
def test_create_refuses_bad_shapes_and_makes_nothing(fs, bsize, nbuckets):
    m, _ = fs
    q = os.path.join(m.mnt, "bad")
    p = pcq("--create", "-b", bsize, "-n", nbuckets, q, user=False,
            env=m.host.env)
    assert p.returncode == 1 and "power of two" in p.stderr, p.stderr
    assert sorted(os.listdir(m.mnt)) == [".meta"]


def test_a_queue_the_device_cannot_hold_leaves_nothing(fs):
    """famfs files cannot be removed: a create that fails must not leave
    one of the two files behind (nor a name a second try trips on)."""
    m, _ = fs
    q = os.path.join(m.mnt, "big")
    p = pcq("--create", "-b", "1m", "-n", "1024", q, user=False,
            env=m.host.env)
    assert p.returncode == 1, p.stdout + p.stderr
    assert sorted(os.listdir(m.mnt)) == [".meta"]
    create(m, "big", "64", "16")      # the name is still free


def test_create_outside_a_famfs_fails(fs):
    m, _ = fs
    p = pcq("--create", "-b", "64", "-n", "16",
            os.path.join(os.path.dirname(m.mnt), "q"), user=False,
            env=m.host.env)
    assert p.returncode == 1 and p.stderr, p.stdout
    assert not os.path.exists(os.path.join(os.path.dirname(m.mnt), "q"))


def test_users_cannot_create(fs):
    m, _ = fs
    p = pcq("--create", "-b", "64", "-n", "16", os.path.join(m.mnt, "q"))
    assert p.returncode == 1 and "root" in p.stderr, p.stderr
    assert sorted(os.listdir(m.mnt)) == [".meta"]


def test_put_consume_drain_counts(fs):
    """Upstream's test_pcq.sh sequence, as the unprivileged owner."""
    m, st = fs
    q = create(m, "q", "64K", "512")
    assert pcq("--drain", "-v", "-f", st, q).returncode == 0
    assert status(st) == 0
    p = pcq("--producer", "-v", "-N", "128", "--statusfile", st, q)
    assert p.returncode == 0 and "nsent=128 nerrors=0" in p.stdout
    assert status(st) == 128
    p = pcq("--consumer", "-N", "64", "--statusfile", st, q)
    assert p.returncode == 0 and "nreceived=64 nerrors=0" in p.stdout
    assert status(st) == 64
    p = pcq("--info", "-f", st, q)
    assert p.returncode == 0, p.stderr
    assert ("get_queue_info: queue %s contains 64 messages p next_seq 128 "
            "c next_seq 64" % q) in p.stdout
    assert status(st) == 64
    p = pcq("--drain", "--statusfile", st, q)
    assert "pcq drain: nreceived=64 nerrors=0 nempty=1 retries=0" in p.stdout
    assert p.returncode == 0 and status(st) == 64
    h = header(q)
    assert (h["pidx"], h["cidx"], h["pseq"], h["cseq"]) == (128, 128, 128,
                                                            128)


def test_buckets_carry_upstreams_sequence_and_crc(fs):
    """Each bucket: payload, then the sequence number, then a crc32 of
    both (8 bytes): what upstream's pcq checks on the other host."""
    m, _ = fs
    q = create(m, "q", "128", "8")
    assert pcq("-p", "-N", "3", "-S", "43", q).returncode == 0
    ref = os.path.join(m.mnt, "ref")
    m.host.famfs("creat", "-s", "4k", "-r", "-S", "43", ref)
    with open(ref, "rb") as f:
        pattern = f.read(112)
    with open(q, "rb") as f:
        for i in range(3):
            f.seek(BUCKETS + i * 128)
            b = f.read(128)
            seq, crc = struct.unpack_from("<QQ", b, 112)
            assert seq == i
            assert crc == zlib.crc32(b[:120])
            assert b[:112] == pattern   # famfs creat -S's bytes


def test_producer_and_consumer_threads_with_seed(fs):
    m, st = fs
    q = create(m, "q", "64", "1k")
    p = pcq("-pc", "--seed", "43", "-N", "1000", "--statusfile", st, q)
    assert p.returncode == 0, p.stdout + p.stderr
    assert status(st) == 2000
    assert "pcq consumer: nreceived=1000 nerrors=0" in p.stdout


def test_a_wrong_seed_is_a_miscompare(fs):
    m, st = fs
    q = create(m, "q", "256", "64")
    assert pcq("-p", "-N", "5", "-S", "1", q).returncode == 0
    p = pcq("-c", "-N", "5", "-S", "2", "-f", st, q)
    assert p.returncode == 5, p.stdout + p.stderr
    assert p.stderr.count("pcq: miscompare seq=") == 5
    assert status(st) == -5


def test_timed_run_reports_status_and_adds_up(fs):
    m, st = fs
    q = create(m, "q", "1k", "256")
    p = pcq("-pc", "-s", "1", "--time", "3", "-f", st, q, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [l for l in p.stdout.splitlines() if " pcq=%s prod(" % q in l]
    assert len(lines) >= 2, p.stdout
    sent = int(p.stdout.split("nsent=")[-1].split()[0])
    rcvd = int(p.stdout.split("nreceived=")[-1].split()[0])
    assert sent > 0 and status(st) == sent + rcvd
    info = pcq("--info", "-f", st, q)
    assert info.returncode == 0 and status(st) == sent - rcvd


def test_full_queue_counts_full_and_stops_on_time(fs):
    m, st = fs
    q = create(m, "q", "64", "16")
    assert pcq("-p", "-N", "15", q).returncode == 0   # holds nbuckets - 1
    p = pcq("-p", "-t", "1", "-f", st, q, timeout=30)
    assert p.returncode == 0, p.stderr
    assert "nsent=0 nerrors=0 nfull=1" in p.stdout
    assert status(st) == 0
    p = pcq("--drain", "--dontflush", "-f", st, q)
    assert p.returncode == 0 and status(st) == 15


def test_roles_need_write_access(fs):
    """Each side maps its own file writable: a user who may not write it
    is refused before anything is mapped, and the queue is unchanged."""
    m, _ = fs
    q = create(m, "q", "64", "16", owner=False)  # root's, 0644
    h = header(q)
    for role in ("-p", "-c"):
        p = pcq(role, "-N", "1", q)
        assert p.returncode == 1 and "Permission denied" in p.stderr
    p = pcq("--drain", q)
    assert p.returncode == 1 and "for writing" in p.stderr
    assert pcq("--info", q).returncode == 0     # reading is enough
    assert header(q) == h
    # setperm is a chmod, and famfs modes live in its log: a change is
    # refused (0644 to 0644 is no change, and passes).
    assert pcq("--setperm", "b", q, user=False).returncode == 0
    p = pcq("--setperm", "n", q, user=False)
    assert p.returncode == 1 and "Operation not permitted" in p.stderr


@pytest.mark.parametrize("what,off,fmt,val,msg", [
    ("producer index", 32, "<Q", 1 << 40, "corrupt"),
    ("bucket count", 8, "<Q", 1 << 40, "header is corrupt"),
    ("bucket size", 16, "<Q", 96, "header is corrupt"),
    ("bucket offset", 24, "<Q", 0, "header is corrupt"),
    ("magic", 0, "<Q", 0, "not a queue"),
])
def test_forged_producer_state_is_refused(fs, what, off, fmt, val, msg):
    """A peer writes the producer file: nothing outside the files is
    read, the consumer says what is wrong and exits 1."""
    m, st = fs
    q = create(m, "q", "64", "16")
    assert pcq("-p", "-N", "3", q).returncode == 0
    poke(q, off, fmt, val)
    for args in (["--drain"], ["-c", "-N", "1"], ["--info"]):
        p = pcq(*args, "-f", st, q)
        assert p.returncode != 0, (what, args, p.stdout)
        assert msg in p.stderr, (what, args, p.stderr)
        assert "Segmentation" not in p.stderr


def test_forged_consumer_index_stops_the_producer(fs):
    m, _ = fs
    q = create(m, "q", "64", "16")
    poke(q + ".consumer", 8, "<Q", 17)
    p = pcq("-p", "-N", "1", q)
    assert p.returncode != 0 and "corrupt" in p.stderr, p.stdout + p.stderr
    assert header(q)["pidx"] == 0


def stale(b):
    """Bucket @b as an earlier lap of the queue left it: a valid CRC, an
    older sequence number."""
    b = bytearray(b)
    struct.pack_into("<Q", b, 48, 7)
    struct.pack_into("<Q", b, 56, zlib.crc32(bytes(b[:56])))
    return bytes(b)


@pytest.mark.parametrize("what,forge", [
    ("payload", lambda b: bytes([b[0] ^ 0xff]) + b[1:]),
    ("sequence", lambda b: b[:48] + bytes([b[48] ^ 0xff]) + b[49:]),
    ("stale", stale),
])
def test_a_bad_bucket_is_retried_then_an_error(fs, what, forge):
    """A bucket that fails its CRC, or carries a valid CRC and the wrong
    sequence number, is read again from memory, then counted as an error;
    the consumer does not move past it."""
    m, st = fs
    q = create(m, "q", "64", "16")
    assert pcq("-p", "-N", "2", q).returncode == 0
    with open(q, "r+b") as f:
        f.seek(BUCKETS)
        b = forge(f.read(64))
        f.seek(BUCKETS)
        f.write(b)
    p = pcq("--drain", "-f", st, q)
    assert p.returncode == 1, (what, p.stdout, p.stderr)
    assert "nreceived=0 nerrors=1 nempty=0 retries=1" in p.stdout
    assert "bad message" in p.stderr and status(st) == -1
    assert header(q)["cidx"] == 0


def test_a_plain_file_is_not_a_queue(fs):
    m, _ = fs
    f = os.path.join(m.mnt, "plain")
    m.host.famfs("creat", "-s", "4m", f)
    m.host.famfs("creat", "-s", "2m", f + ".consumer")
    p = pcq("--info", f, user=False)
    assert p.returncode == 1 and "not a queue" in p.stderr
    # Files too small to hold a queue's pages: refused, never read past.
    t = os.path.join(m.mnt, "tiny")
    m.host.famfs("creat", "-s", "4k", t)
    m.host.famfs("creat", "-s", "4k", t + ".consumer")
    for args in (["--info"], ["--drain"]):
        p = pcq(*args, t, user=False)
        assert p.returncode == 1 and "not a queue" in p.stderr, p.stderr
    p = pcq("--info", os.path.join(m.mnt, "none"))
    assert p.returncode == 1 and "No such file" in p.stderr
