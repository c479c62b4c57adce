"""Which filesystem a directory is on, and whether it is a network one, where SQLite's
write-ahead log cannot work (its index is shared memory: every process on one host)."""

from __future__ import annotations

import os
from pathlib import Path

# Filesystem types as /proc/mounts names them: NFS, SMB, and the parallel filesystems of
# clusters; every FUSE filesystem (sshfs, s3fs, gcsfuse...) counts as one too.
NETWORK = frozenset({"nfs", "nfs4", "cifs", "smb", "smb2", "smb3", "smbfs", "ncpfs", "afs",
                     "lustre", "gpfs", "beegfs", "ceph", "cephfs", "glusterfs", "panfs", "pvfs2",
                     "orangefs", "ocfs2", "gfs2", "9p", "virtiofs", "davfs", "fuseblk", "fuse",
                     "wekafs", "vboxsf"})
MOUNTS = Path("/proc/mounts")


def is_network(fstype: str) -> bool:
    """Whether a filesystem of type `fstype` (as /proc/mounts names it) may be shared between
    hosts."""
    kind = fstype.lower()
    return kind in NETWORK or kind.startswith("fuse.")


def _unescape(field: str) -> str:
    """A /proc/mounts field: spaces, tabs, newlines and backslashes are octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def fstype(directory: Path, mounts: Path | None = None) -> str:
    """The type of the filesystem `directory` is on: that of the mount point in `mounts`
    (/proc/mounts) that is its longest prefix ("unknown" where mounts cannot be read)."""
    target = os.path.realpath(directory)
    best, kind = "", "unknown"
    try:
        lines = (mounts or MOUNTS).read_text().splitlines()
    except OSError:
        return kind
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        point = _unescape(parts[1])
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, parts[2]
    return kind
