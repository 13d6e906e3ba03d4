# SPDX-License-Identifier: GPL-2.0-or-later
"""mkfs.famfs never destroys another file system without -f: what libblkid
recognises (ext4 on an image file or a loop block device) and a famfs whose
superblock is damaged but whose log is intact are refused, naming what was
found, and accepted with -f."""
import shutil
import subprocess

import pytest

import famfs_host as fh

SIZE = 64 * fh.MiB


def _image(tmp_path, name):
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.truncate(SIZE)
    return path


def _mkext4(dev):
    if not shutil.which("mkfs.ext4"):
        pytest.skip("mkfs.ext4 is not installed")
    fh.run(["mkfs.ext4", "-F", "-q", dev])


def _blkid_type(dev):
    p = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", dev],
                       capture_output=True, text=True)
    return p.stdout.strip()


def _refused_then_forced(master, dev, what):
    p = fh.run([fh.MKFS, dev], env=master.env, check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stderr == ("mkfs.famfs: %s holds %s; use -f to overwrite it\n"
                        % (dev, what)), p.stderr
    p = fh.run([fh.MKFS, "-f", dev], env=master.env, check=False)
    assert p.returncode == 0, p.stderr
    p = fh.run([fh.FAMFS, "fsck", dev], env=master.env, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    # the old signature is gone: nothing else claims the device any more
    assert _blkid_type(dev) == ""


def test_mkfs_refuses_ext4_image(tmp_path, master):
    dev = _image(tmp_path, "ext4.img")
    _mkext4(dev)
    _refused_then_forced(master, dev, "a file system (ext4)")


def test_mkfs_refuses_ext4_on_loop_device(tmp_path, master):
    img = _image(tmp_path, "blk.img")
    dev = fh.losetup(img)
    try:
        _mkext4(dev)
        _refused_then_forced(master, dev, "a file system (ext4)")
    finally:
        fh.run(["losetup", "-d", dev], check=False)


def test_mkfs_refuses_famfs_with_damaged_magic(tmp_path, master):
    dev = _image(tmp_path, "famfs.img")
    fh.run([fh.MKFS, dev], env=master.env)
    with open(dev, "r+b") as f:      # one flipped byte of the magic
        b = f.read(1)
        f.seek(0)
        f.write(bytes([b[0] ^ 0xff]))
    _refused_then_forced(
        master, dev, "a famfs whose superblock is damaged (its log is intact)")
