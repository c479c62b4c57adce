"""A real PostgreSQL server for tests and benches: initdb and pg_ctl of Debian's `postgresql`
package in a scratch directory, listening on a Unix socket only, run as the rank user under
root (the server refuses root), stopped and removed at the end."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

from mpiarena.base import users

BIN = next((p for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
            if (p / "initdb").exists()), None) if Path("/usr/lib/postgresql").exists() else None
ROLE = "arena"  # the server's superuser


@dataclass(frozen=True)
class PgServer:
    socket_dir: Path

    def uri(self, database: str) -> str:
        """The libpq URI of `database`, over the Unix socket."""
        return f"postgresql://{ROLE}@/{database}?host={self.socket_dir}"

    def database(self, name: str) -> str:
        """A new empty database `name`: its URI."""
        with psycopg.connect(self.uri("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.uri(name)


def _as_owner(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`argv` as the rank user under root (PostgreSQL refuses root), else as ourselves."""
    user = users.lookup() if os.geteuid() == 0 else None
    return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          user=user.uid if user else None, group=user.gid if user else None,
                          extra_groups=[] if user else None, cwd="/")


@contextmanager
def pg_server(durable: bool = False, under: str | None = None) -> Iterator[PgServer]:
    """A server of its own in a scratch directory (in `under`, else the temporary directory),
    stopped and removed when the block ends; committing without fsync unless `durable` (a
    bench's figures)."""
    assert BIN is not None, "PostgreSQL is not installed: apt-get install postgresql"
    scratch = Path(tempfile.mkdtemp(prefix="arena-pg-", dir=under))
    user = users.lookup() if os.geteuid() == 0 else None
    if user is not None:
        os.chown(scratch, user.uid, user.gid)
    data, log = scratch / "data", scratch / "log"
    try:
        done = _as_owner([str(BIN / "initdb"), "-D", str(data), "-U", ROLE, "--auth=trust",
                          "-E", "UTF8", "--no-sync"])
        assert done.returncode == 0, done.stderr
        done = _as_owner([str(BIN / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o",
                          f"-c listen_addresses='' -c unix_socket_directories={scratch} "
                          f"-c fsync={'on' if durable else 'off'} -c max_connections=200",
                          "start"])
        assert done.returncode == 0, done.stderr + (log.read_text() if log.exists() else "")
        yield PgServer(scratch)
    finally:
        if (data / "postmaster.pid").exists():
            _as_owner([str(BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(scratch, ignore_errors=True)
