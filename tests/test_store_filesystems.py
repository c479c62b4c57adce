"""SQLite's write-ahead log only where every process is on one host: never on a network
filesystem, said in one line; a store left in WAL mode there, open elsewhere, is refused."""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from mpiarena.base.errors import ArenaError
from mpiarena.store import Store, filesystems

NETWORK = ("nfs", "nfs4", "cifs", "smb3", "lustre", "gpfs", "beegfs", "ceph", "fuse.sshfs",
           "fuse.s3fs", "9p", "NFS4")
LOCAL = ("ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "vfat", "unknown")


def test_network_filesystems_are_told_from_local_ones_by_type():
    assert [t for t in NETWORK if not filesystems.is_network(t)] == []
    assert [t for t in LOCAL if filesystems.is_network(t)] == []


def test_a_directorys_type_is_the_one_findmnt_reads(tmp_path):
    found = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--target", str(tmp_path)],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert filesystems.fstype(tmp_path) == found
    assert not filesystems.is_network(found)  # the tests' scratch is local: WAL there
    Store(tmp_path / "local.db").close()
    assert _mode(tmp_path / "local.db") == "wal"


def _mode(db: Path) -> str:
    with closing(sqlite3.connect(db)) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def _mounts(tmp_path: Path, kind: str) -> Path:
    """A mount table in which tmp_path/a dir is a mount of type `kind` (its name with a space,
    escaped as /proc/mounts does)."""
    share = tmp_path / "home share"
    share.mkdir()
    table = tmp_path / "mounts"
    point = str(share).replace(" ", "\\040")
    table.write_text(f"/dev/root / ext4 rw 0 0\nserver:/export {point} {kind} rw,relatime 0 0\n")
    return table


def test_a_store_on_a_network_filesystem_never_opens_wal_and_says_so_once(
        tmp_path, monkeypatch, capsys):
    table = _mounts(tmp_path, "nfs4")
    monkeypatch.setattr(filesystems, "MOUNTS", table)
    assert filesystems.fstype(tmp_path / "home share") == "nfs4"
    assert filesystems.fstype(tmp_path) == "ext4"
    db = tmp_path / "home share" / "mpiarena.db"
    Store(db).close()
    Store(db).close()
    assert _mode(db) == "delete"
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and "on nfs4, a network filesystem" in said[0], said


def test_a_store_left_in_wal_mode_on_a_network_filesystem(tmp_path, monkeypatch):
    db = tmp_path / "home share" / "mpiarena.db"
    table = _mounts(tmp_path, "lustre")
    Store(db).close()  # made where it looked local: WAL
    assert _mode(db) == "wal"
    monkeypatch.setattr(filesystems, "MOUNTS", table)
    elsewhere = sqlite3.connect(db)  # another process, maybe on another host, has it open
    elsewhere.execute("SELECT COUNT(*) FROM runs").fetchall()
    with pytest.raises(ArenaError, match=r"write-ahead-log mode on lustre.*open in another"):
        Store(db)
    elsewhere.close()
    Store(db).close()  # no one else: taken out of WAL mode
    assert _mode(db) == "delete"
