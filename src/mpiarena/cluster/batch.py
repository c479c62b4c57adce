"""A batch script for sbatch, built and written but not submitted (cluster/sbatch.py submits):
the mpiarena command it runs on its first lines, then #SBATCH lines for the job's name,
partition, time limit, nodes, tasks (the run's ranks), output file and working directory."""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError


@dataclass(frozen=True)
class BatchJob:
    """What the script asks of Slurm and the command it runs inside the allocation."""

    name: str  # the job's name, e.g. mpiarena-run
    command: tuple[str, ...]  # the argv it runs: mpiarena ... --slurm
    shown: str  # the same command as a user would type it (mpiarena run --slurm ...)
    ntasks: int
    workdir: Path
    partition: str | None = None  # None: the cluster's default partition
    time: str | None = None  # Slurm's time format (minutes, H:M:S, D-H...); None: the default
    nodes: str | None = None  # N or MIN-MAX; None: as many as the tasks need

    def directives(self, output: Path) -> list[tuple[str, str]]:
        given = [("job-name", self.name), ("partition", self.partition), ("time", self.time),
                 ("nodes", self.nodes), ("ntasks", str(self.ntasks)), ("output", str(output)),
                 ("chdir", str(self.workdir))]
        return [(key, value) for key, value in given if value is not None]

    def script(self, path: Path, output: Path) -> str:
        """The text of the script kept at `path`; `output` may hold sbatch's %j (the job id)."""
        sbatch = [f"#SBATCH --{key}={_quoted(value)}" for key, value in self.directives(output)]
        return "\n".join([
            "#!/bin/bash", f"# {self.shown}",
            f"# written by mpiarena --sbatch; submit it again with: sbatch {path}", *sbatch,
            "", f"exec {shlex.join(self.command)}", ""])


@dataclass(frozen=True)
class Written:
    """A script kept on disk and the output file its job will write (%j: the job id)."""

    script: Path
    output: Path

    def output_of(self, job: int) -> Path:
        return Path(str(self.output).replace("%j", str(job)))


def _quoted(value: str) -> str:
    """sbatch reads a directive's value up to white space unless it is in double quotes."""
    if any(c.isspace() for c in value) or '"' in value:
        if '"' in value:
            raise ArenaError(f"cannot put {value!r} in an #SBATCH line (it holds a double "
                             "quote); choose another path or value")
        return f'"{value}"'
    return value


def write(job: BatchJob, beside: Path) -> Written:
    """Write the script into a folder named after the store `beside` (mpiarena.db:
    mpiarena-jobs/), as NAME-YYYYmmdd-HHMMSS.sh with its output beside it as ...-JOBID.out."""
    folder = beside.parent / f"{beside.stem}-jobs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ArenaError(f"cannot make {folder} for the batch script: {e.strerror}; give --db "
                         "a store in a folder you can write") from e
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        base = folder / f"{job.name}-{stamp}{f'-{n}' if n else ''}"
        written = Written(base.with_suffix(".sh"), Path(f"{base}-%j.out"))
        try:
            with written.script.open("x", encoding="utf-8") as f:
                f.write(job.script(written.script, written.output))
        except FileExistsError:
            continue
        except OSError as e:
            raise ArenaError(f"cannot write {written.script}: {e.strerror}") from e
        written.script.chmod(0o755)
        return written
    raise ArenaError(f"{folder} already holds 1000 scripts stamped {stamp}")
