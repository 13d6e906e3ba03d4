# SPDX-License-Identifier: GPL-2.0-or-later
"""A famfs over several devices (image files here): mkfs over several,
devadd on a live mount, files across devices, hosts that find the devices
by uuid or miss one, and devices that are not what they claim."""
import errno
import json
import mmap
import os
import shutil
import signal
import stat
import time

import pytest

import famfs_host as fh


def _image(path, size):
    with open(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600),
              "wb") as f:
        f.truncate(size)
    return path


@pytest.fixture
def three(tmp_path, master):
    """A primary of 256 MiB and secondaries of 128 and 64 MiB."""
    devs = [_image(str(tmp_path / n), s << 20)
            for n, s in (("primary.img", 256), ("second.img", 128),
                         ("third.img", 64))]
    p = fh.run([fh.MKFS] + devs, env=master.env)
    assert "device 2:" in p.stdout, p.stdout
    return devs


def _mounted(host, dev, tmp_path, name, mounts):
    m = fh.Mount(host, dev, str(tmp_path / name),
                 str(tmp_path / ("fused-%s.log" % name)))
    mounts.append(m)
    m.mount()
    return m


def _daxdev(host, target, check=True):
    p = host.famfs("daxdev", "--json", target, check=check)
    return json.loads(p.stdout), p.returncode


def _pattern(n, seed):
    return bytes((i * 131 + seed) & 0xFF for i in range(n))


def _devices_of(host, path):
    """The device index of each range getmap lists for @path."""
    out = host.famfs("getmap", path).stdout
    return [int(l.split()[1]) for l in out.splitlines()
            if l.strip().startswith("dev ")]


def test_mkfs_over_three_and_files_across_them(tmp_path, master, three,
                                               mounts):
    info, rc = _daxdev(master, three[0])
    assert rc == 0
    assert [d["index"] for d in info["devices"]] == [0, 1, 2]
    assert [d["size"] for d in info["devices"]] == [256 << 20, 128 << 20,
                                                    64 << 20]
    assert all(d["present"] for d in info["devices"])
    assert info["devices"][2]["path"] == os.path.realpath(three[2])
    uuids = {d["uuid"] for d in info["devices"]}
    assert len(uuids) == 3

    m = _mounted(master, three[0], tmp_path, "mnt", mounts)
    st = m.status()
    assert st["devices"] == "3" and st["devices_missing"] == "0"
    assert st["dev_size"] == str(256 << 20)

    # striped over the three: one strip each, and the bytes come back
    path = os.path.join(m.mnt, "striped")
    master.famfs("creat", "-s", "30m", "-N", "3", "-C", "2m", "-r", "-S",
                 "5", path)
    assert sorted(_devices_of(master, path)) == [0, 1, 2]
    master.famfs("verify", "-S", "5", "-f", path)
    # written through the mount, then read through read(2) and mmap
    data = _pattern(3 << 20, 9)
    with open(path, "r+b") as f:
        f.write(data)
    with open(path, "rb") as f:
        assert f.read(len(data)) == data
        with mmap.mmap(f.fileno(), len(data), prot=mmap.PROT_READ) as mm:
            assert mm[:] == data

    # the primary has 246 MiB for files: a larger file goes elsewhere
    # only when the primary is fuller; fill it, then copy in
    master.famfs("creat", "-s", "236m", os.path.join(m.mnt, "fill"))
    assert _devices_of(master, os.path.join(m.mnt, "fill")) == [0]
    src = str(tmp_path / "src")
    with open(src, "wb") as f:
        f.write(_pattern(40 << 20, 3))
    shutil.copyfile(src, os.path.join(m.mnt, "copied"))
    assert _devices_of(master, os.path.join(m.mnt, "copied")) == [1]
    with open(os.path.join(m.mnt, "copied"), "rb") as f:
        assert f.read() == _pattern(40 << 20, 3)

    # df counts every device; fsck each device's share
    sv = os.statvfs(m.mnt)
    assert sv.f_blocks * sv.f_frsize == (256 + 128 + 64) << 20
    p = master.famfs("fsck", "--json", m.mnt)
    r = json.loads(p.stdout)
    assert r["status"] == "clean"
    used = [d["used"] for d in r["devices"]]
    assert used[0] >= (10 + 236 + 10) << 20
    assert used[1] == (2 + 10 + 40) << 20
    assert used[2] == (2 + 10) << 20
    assert sum(d["used"] for d in r["devices"]) == r["space"]["used"]


def test_devadd_on_a_live_mount(tmp_path, master, device, mounts, mnt):
    # a file on the primary stays mapped while the device is added
    path = os.path.join(mnt.mnt, "held")
    master.famfs("creat", "-s", "4m", "-r", "-S", "7", path)
    f = open(path, "rb")
    mm = mmap.mmap(f.fileno(), 4 << 20, prot=mmap.PROT_READ)
    before = mm[:4096]
    extra = _image(str(tmp_path / "extra.img"), 128 << 20)
    p = master.famfs("devadd", "-v", mnt.mnt, extra)
    assert "device 1" in p.stdout and "serves it" in p.stdout, p.stdout
    assert mnt.status()["devices"] == "2"
    assert mm[:4096] == before
    mm.close()
    f.close()
    master.famfs("verify", "-S", "7", "-f", path)

    # the new device takes files: it has the most free space after a
    # large one lands on the primary
    master.famfs("creat", "-s", "900m", os.path.join(mnt.mnt, "big"))
    new = os.path.join(mnt.mnt, "new")
    master.famfs("creat", "-s", "20m", "-r", "-S", "8", new)
    assert _devices_of(master, new) == [1]
    master.famfs("verify", "-S", "8", "-f", new)
    info, rc = _daxdev(master, mnt.mnt)
    assert rc == 0 and len(info["devices"]) == 2

    # the same device again, under any name, is refused; nothing logged
    n = fh.log_next_index(device)
    hard = str(tmp_path / "hard")
    os.link(extra, hard)
    for dev in (extra, hard, device):
        p = master.famfs("devadd", "-f", mnt.mnt, dev, check=False)
        assert p.returncode == 1, p.stdout
        assert "this famfs" in p.stderr or "mounted" in p.stderr, p.stderr
    assert fh.log_next_index(device) == n


def test_a_client_without_a_device(tmp_path, master, client, three, mounts):
    m = _mounted(master, three[0], tmp_path, "mnt", mounts)
    on0 = os.path.join(m.mnt, "on0")
    striped = os.path.join(m.mnt, "striped")
    master.famfs("creat", "-s", "8m", "-r", "-S", "1", on0)
    master.famfs("creat", "-s", "12m", "-N", "3", "-C", "2m", "-r", "-S",
                 "2", striped)
    assert _devices_of(master, on0) == [0]

    # the client host has never seen the images: /dev/dax* has none of
    # them, so it serves what is on the primary and fails the rest
    c = _mounted(client, three[0], tmp_path, "client", mounts)
    st = c.status()
    assert st["devices"] == "3" and st["devices_missing"] == "2"
    client.famfs("verify", "-S", "1", "-f", os.path.join(c.mnt, "on0"))
    for _ in range(3):
        with pytest.raises(OSError) as e:
            with open(os.path.join(c.mnt, "striped"), "rb") as f:
                f.read()
        assert e.value.errno == errno.EIO
    log = c.log_text()
    assert "2 of the 3 devices of this famfs are missing" in log
    # the failed reads are said once, naming the missing device's uuid
    fails = [l for l in log.splitlines() if "read of inode" in l]
    assert len(fails) == 1, fails
    uuids = [d["uuid"] for d in _daxdev(master, m.mnt)[0]["devices"]]
    assert any("(uuid %s)" % u in fails[0] for u in uuids[1:]), fails
    p = client.famfs("status", c.mnt, check=False)
    assert p.returncode == 1, p.stdout
    assert "2 of the 3 devices of this famfs are missing" in p.stdout
    for d in _daxdev(master, m.mnt)[0]["devices"][1:]:
        assert "device %d (uuid %s) is not found" % (d["index"], d["uuid"]) \
            in p.stdout, p.stdout
    info, rc = _daxdev(client, c.mnt, check=False)
    assert rc == 1 and info["missing"] == 2
    assert [d["present"] for d in info["devices"]] == [True, False, False]
    c.unmount()

    # told where the images are, it finds them by uuid
    p = client.famfs("daxdev", "refresh", three[1], three[2])
    assert "2 devices recorded" in p.stdout
    c.mount()
    assert c.status()["devices_missing"] == "0"
    client.famfs("verify", "-S", "2", "-f", os.path.join(c.mnt, "striped"))

    # a path that holds no secondary is refused, and the map kept
    p = client.famfs("daxdev", "refresh", three[0], check=False)
    assert p.returncode == 1 and "no secondary" in p.stderr
    info, rc = _daxdev(client, c.mnt)
    assert rc == 0


def test_devices_that_are_not_what_they_claim(tmp_path, master, three,
                                              mounts):
    info, _ = _daxdev(master, three[0])
    fs_uuid = info["uuid"]
    second = info["devices"][1]["uuid"]

    # a copy of a device: two devices with one uuid, neither is taken
    copy = str(tmp_path / "copy.img")
    shutil.copyfile(three[1], copy)
    os.chmod(copy, 0o600)
    master.famfs("daxdev", "refresh", copy)
    p = master.famfs("daxdev", "resolve", fs_uuid, second, check=False)
    assert p.returncode == 1 and "two devices carry" in p.stderr
    os.unlink(copy)
    master.famfs("daxdev", "refresh")
    p = master.famfs("daxdev", "resolve", fs_uuid, second)
    assert p.stdout.strip() == os.path.realpath(three[1])

    # a device that others may write is never taken: anyone could
    # forge a superblock on it and have its data served
    os.chmod(three[2], 0o666)
    info, rc = _daxdev(master, three[0], check=False)
    assert rc == 1 and [d["present"] for d in info["devices"]] == \
        [True, True, False]
    os.chmod(three[2], 0o600)
    assert _daxdev(master, three[0])[1] == 0

    # another famfs's secondary where this one's was: fsck says whose
    other = [_image(str(tmp_path / n), 64 << 20) for n in ("o1", "o2")]
    fh.run([fh.MKFS] + other, env=master.env)
    shutil.copyfile(other[1], three[2])
    p = master.famfs("fsck", three[0], check=False)
    assert p.returncode == 1, p.stdout
    assert "device 2" in p.stdout and "belongs to famfs" in p.stdout, \
        p.stdout


def test_mkfs_checks_every_device_first(tmp_path, master):
    a = _image(str(tmp_path / "a.img"), 64 << 20)
    b = _image(str(tmp_path / "b.img"), 64 << 20)
    hard = str(tmp_path / "b-again")
    os.link(b, hard)
    for args, why in (([a, b, hard], "same device as"),
                      ([a, a], "same device as"),
                      ([a, str(tmp_path / "missing")], "No such file"),
                      ([a, _image(str(tmp_path / "tiny"), 2 << 20)],
                       "too small")):
        p = fh.run([fh.MKFS] + args, env=master.env, check=False)
        assert p.returncode == 1, (args, p.stdout)
        assert why in p.stderr and "nothing was written" in p.stderr, \
            p.stderr
        with open(a, "rb") as f:
            assert f.read(8) == b"\0" * 8  # no superblock made
    # a secondary with a file system on it needs -f
    fh.run([fh.MKFS, b], env=master.env)
    p = fh.run([fh.MKFS, a, b], env=master.env, check=False)
    assert p.returncode == 1 and "use -f" in p.stderr
    fh.run([fh.MKFS, "-f", a, b], env=master.env)
    # a secondary is no famfs to mount or check on its own
    p = master.famfs("fsck", b, check=False)
    assert p.returncode == 2 and "secondary device" in p.stdout
    assert "no primary device of famfs" in p.stdout, p.stdout
    m = fh.Mount(master, b, str(tmp_path / "m"), str(tmp_path / "l"))
    p = m.mount(check=False)
    assert p.returncode != 0 and not m.mounted()
    assert "secondary device" in p.stderr + m.log_text()


def test_only_the_master_adds_devices(tmp_path, master, client, device,
                                      mounts, mnt):
    extra = _image(str(tmp_path / "extra.img"), 64 << 20)
    c = _mounted(client, device, tmp_path, "client", mounts)
    p = client.famfs("devadd", c.mnt, extra, check=False)
    assert p.returncode == 1 and "client" in p.stderr, p.stderr
    with open(extra, "rb") as f:
        assert f.read(8) == b"\0" * 8
    # an unprivileged user cannot read the metadata at all
    st = os.stat(extra)
    assert not st.st_mode & stat.S_IWOTH


def test_secondary_superblocks_in_meta(tmp_path, master, client, three,
                                       mounts):
    m = _mounted(master, three[0], tmp_path, "mnt", mounts)
    meta = os.path.join(m.mnt, ".meta")
    names = sorted(os.listdir(meta))
    assert names == [".log", ".status", ".superblock", ".superblock.1",
                     ".superblock.2"], names
    # each is its device's first 2 MiB, byte for byte
    for i in (1, 2):
        with open(three[i], "rb") as f:
            want = f.read(2 << 20)
        with open(os.path.join(meta, ".superblock.%d" % i), "rb") as f:
            assert f.read() == want
        assert os.stat(os.path.join(meta, ".superblock.%d" % i)).st_mode \
            == stat.S_IFREG | 0o400
    # no device 3, no other spelling of 1, nothing to write
    for name in (".superblock.3", ".superblock.01", ".superblock.+1",
                 ".superblock.0", ".superblock.1x", ".superblock.",
                 ".superblock.24", ".superblock.18446744073709551617"):
        assert not os.path.exists(os.path.join(meta, name)), name
    with pytest.raises(OSError) as e:
        open(os.path.join(meta, ".superblock.1"), "r+b")
    assert e.value.errno == errno.EROFS
    # root's alone: it names the file system and its devices
    p = fh.run(["setpriv", "--reuid=65534", "--regid=65534",
                "--clear-groups", "cat", os.path.join(meta, ".superblock.1")],
               check=False)
    assert p.returncode != 0 and "Permission denied" in p.stderr

    # fsck of the mount by a host whose own lookups find no device (an
    # empty map, no /dev/dax of these): it checks each secondary's
    # superblock through the mount, as a 7.3 host must, whose driver
    # hides the devices a mount holds
    env = dict(master.env, FAMFS_DEVMAP=str(tmp_path / "empty-map"))
    p = fh.run([fh.FAMFS, "fsck", "--json", m.mnt], env=env, check=False)
    r = json.loads(p.stdout)
    assert p.returncode == 0 and r["status"] == "clean", p.stdout
    assert [d["present"] for d in r["devices"]] == [True, True, True]
    assert r["devices"][2]["path"] == os.path.realpath(three[2])

    # fsck of a secondary says what to check instead: the mount of its
    # file system (a primary image that is not mounted is found by no one)
    p = master.famfs("fsck", three[1], check=False)
    assert p.returncode == 2, p.stdout
    assert "secondary device" in p.stdout and \
        "famfs fsck %s" % m.mnt in p.stdout, p.stdout

    # a superblock damaged under the mount: seen through it
    with open(three[2], "r+b") as f:
        f.seek(64)
        f.write(b"\xff" * 16)
    p = fh.run([fh.FAMFS, "fsck", m.mnt], env=env, check=False)
    assert p.returncode == 1, p.stdout
    assert ".superblock.2" in p.stdout and "device 2" in p.stdout, p.stdout

    # a host that lacks the devices lists them, and reading one is EIO
    c = _mounted(client, three[0], tmp_path, "client", mounts)
    assert c.status()["devices_missing"] == "2"
    with pytest.raises(OSError) as e:
        with open(os.path.join(c.mnt, ".meta", ".superblock.1"), "rb") as f:
            f.read()
    assert e.value.errno == errno.EIO
    p = client.famfs("fsck", c.mnt, check=False)
    assert p.returncode == 1 and "through the mount" in p.stdout, p.stdout


def test_a_restart_keeps_every_device(tmp_path, master, three, mounts):
    """A daemon restart that keeps the mount (takeover): the successor
    finds every device again by uuid, also one added on the live mount
    just before, and files across them read on unchanged."""
    from test_restart import HANDOVER_EXIT, Service, _wait_exit
    with Service(tmp_path, master, three[0], mounts) as svc:
        mnt = svc.mnt
        m, p = svc.first()
        striped = os.path.join(mnt, "striped")
        master.famfs("creat", "-s", "12m", "-N", "3", "-C", "2m", "-r",
                     "-S", "4", striped)
        fourth = _image(str(tmp_path / "fourth.img"), 64 << 20)
        master.famfs("devadd", mnt, fourth)
        assert m.status()["devices"] == "4"
        f = open(striped, "rb")
        mm = mmap.mmap(f.fileno(), 12 << 20, prot=mmap.PROT_READ)
        before = mm[:]

        p.send_signal(signal.SIGUSR1)
        _wait_exit(p)
        assert p.returncode == HANDOVER_EXIT
        p = svc.successor(2)
        st = m.status()
        assert (st["takeovers"], st["devices"], st["devices_missing"]) == \
            ("1", "4", "0"), st
        assert st["member.3"] == os.path.realpath(fourth)
        assert mm[:] == before
        mm.close()
        f.close()
        master.famfs("verify", "-S", "4", "-f", striped)
        # the successor allocates on all four, the new one included
        wide = os.path.join(mnt, "wide")
        master.famfs("creat", "-s", "16m", "-N", "4", "-C", "2m", "-r",
                     "-S", "5", wide)
        assert sorted(_devices_of(master, wide)) == [0, 1, 2, 3]
        master.famfs("verify", "-S", "5", "-f", wide)
        r = json.loads(master.famfs("fsck", "--json", mnt).stdout)
        assert r["status"] == "clean" and len(r["devices"]) == 4


def test_fsck_of_a_secondary_never_waits_on_a_silent_mount(tmp_path, master,
                                                            three, mounts):
    """fsck of a secondary names what to check instead, a mount of its
    file system among them. It reads each mount's source where it can,
    and through a mount whose source it cannot read waits for the daemon
    a bounded time: a stopped daemon (or one between two daemons) never
    holds it."""
    m = _mounted(master, three[0], tmp_path, "mnt", mounts)
    away = three[0] + ".away"

    def fsck_secondary(bound):
        t0 = time.monotonic()
        p = master.famfs("fsck", three[1], check=False, timeout=30)
        took = time.monotonic() - t0
        assert p.returncode == 2, p.stdout + p.stderr
        assert "secondary device" in p.stdout, p.stdout
        assert took < bound, "fsck took %.1f s" % took
        return p.stdout

    os.kill(m.pid, signal.SIGSTOP)
    try:
        # the source, an image, is read: the stopped daemon is not asked
        out = fsck_secondary(10)
        assert "famfs fsck %s" % m.mnt in out, out
        # its source gone: through the mount, which does not answer
        os.rename(three[0], away)
        out = fsck_secondary(15)
        assert "famfs fsck %s" % m.mnt not in out, out
        assert "no primary device of famfs" in out, out
    finally:
        os.kill(m.pid, signal.SIGCONT)
    # the daemon answers again: through the mount, the source still gone
    out = fsck_secondary(15)
    assert "famfs fsck %s" % m.mnt in out, out
    os.rename(away, three[0])
    assert m.status()["devices_missing"] == "0"


def test_new_files_go_only_to_devices_this_host_has(tmp_path, master, mounts):
    """A secondary missing on the master (here the largest, which would
    take every new file) gets nothing new: files made through the mount
    and by famfs creat go to the devices there, whose space alone df
    counts free; when that is used up, ENOSPC, not EIO. It used to get
    every new file, whose writes then failed with EIO."""
    devs = [_image(str(tmp_path / n), s << 20)
            for n, s in (("primary.img", 64), ("big.img", 512))]
    fh.run([fh.MKFS] + devs, env=master.env)
    os.rename(devs[1], devs[1] + ".away")
    m = _mounted(master, devs[0], tmp_path, "mnt", mounts)
    assert m.status()["devices_missing"] == "1"
    made = os.path.join(m.mnt, "made")
    data = _pattern(3 << 20, 7)
    with open(made, "wb") as f:
        f.write(data)
    assert _devices_of(master, made) == [0]
    with open(made, "rb") as f:
        assert f.read() == data
    creat = os.path.join(m.mnt, "creat")
    master.famfs("creat", "-s", "4m", creat)
    assert _devices_of(master, creat) == [0]
    st = os.statvfs(m.mnt)
    assert st.f_bfree * st.f_frsize < 64 << 20
    assert st.f_blocks * st.f_frsize > 512 << 20  # the whole famfs
    with pytest.raises(OSError) as e:
        with open(os.path.join(m.mnt, "big"), "wb") as f:
            f.write(b"x" * (128 << 20))
    assert e.value.errno == errno.ENOSPC
