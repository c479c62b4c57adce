"""--sbatch: the command a job runs (this one, with --slurm instead of the --sbatch options),
its script written beside the store (a server's: in the working directory), submitted, followed
to its end and what it stored shown."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ArenaError
from ..cluster import sbatch
from ..cluster.batch import BatchJob, Written, write
from ..cluster.slurm import of_job
from ..model.runs import settings_of
from ..store import Store
from ..store.backend import is_server, shown
from .consoles import err
from .exit_status import Exit
from .placing import SBATCH_FLAGS, SBATCH_VALUED, Submit


def inner_args(args: list[str]) -> list[str]:
    """The command line's arguments without the --sbatch options, with --slurm."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in SBATCH_FLAGS:
            continue
        elif arg.split("=", 1)[0] in SBATCH_VALUED:
            skip = "=" not in arg
        else:
            kept.append(arg)
    return [*kept, "--slurm"]


def _mpiarena() -> str:
    """This mpiarena's command: beside this Python (a virtual environment's), else on PATH."""
    beside = Path(sys.executable).with_name("mpiarena")
    found = str(beside) if beside.exists() else shutil.which("mpiarena")
    if found is None:
        raise ArenaError("--sbatch needs the mpiarena command on PATH for the job to run; "
                         "install mpiarena with pip or put its bin folder on PATH")
    return found


@dataclass(frozen=True)
class Submitted:
    """A job submitted: its id, script and output, the store it writes (a file's full path,
    or a server's URI)."""

    job: int
    written: Written
    db: str

    @property
    def output(self) -> Path:
        return self.written.output_of(self.job)

    def last_error(self) -> str | None:
        """The last 'mpiarena: error:' line the job printed."""
        try:
            lines = self.output.read_text(errors="replace").splitlines()
        except OSError:
            return None
        said = [line.split("error: ", 1)[1] for line in lines
                if line.startswith("mpiarena: error:")]
        return said[-1] if said else None

    def run_id(self) -> int | None:
        """The run the job stored (its topology is slurm:jobID), newest first."""
        if not is_server(self.db) and not Path(self.db).exists():
            return None
        store = Store(self.db)
        try:
            return next((run.id for run, _ in reversed(store.runs())
                         if of_job(settings_of(run).topology, self.job)), None)
        finally:
            store.close()


def _submit(what: str, submit: Submit, ntasks: int, db: str) -> Submitted:
    """Write the job's script beside the store and submit it; `what` is the command's name."""
    args = inner_args(sys.argv[1:])
    store = db if is_server(db) else str(Path(db).resolve())
    beside = Path.cwd() / "mpiarena.db" if is_server(db) else Path(store)
    job = BatchJob(f"mpiarena-{what}", (_mpiarena(), *args), shlex.join(["mpiarena", *args]),
                   ntasks, Path.cwd(), submit.partition, submit.time, submit.nodes)
    written = write(job, beside)
    try:
        return Submitted(sbatch.submit(written.script), written, store)
    except ArenaError:
        written.script.unlink()  # refused: nothing to keep
        raise


@dataclass(frozen=True)
class Followed:
    """How a followed job ended, and whether Ctrl-C cancelled it (--cancel-on-interrupt)."""

    end: sbatch.JobState
    cancelled: bool = False


def follow(done: Submitted, submit: Submit) -> Followed:
    """Print the job's state changes until it ends; Ctrl-C leaves it running (says how to
    follow it, exit status 130) or, with --cancel-on-interrupt, cancels it and follows it to
    its end."""
    def say(state: sbatch.JobState) -> None:
        err.print(state.describe(), markup=False, soft_wrap=True)

    try:
        return Followed(sbatch.follow(done.job, say))
    except KeyboardInterrupt:
        if not submit.cancel_on_interrupt:
            err.print(f"interrupted: job {done.job} goes on without mpiarena watching; follow it "
                      f"with 'squeue -j {done.job}' (output: {done.output}), see its results "
                      f"with 'mpiarena show latest --db {_db_arg(done.db)}' once it ends, or "
                      f"stop it with 'scancel {done.job}'", markup=False, soft_wrap=True)
            sys.exit(Exit.INTERRUPTED)
    sbatch.cancel(done.job)
    err.print(f"interrupted: cancelled job {done.job}", markup=False)
    try:
        return Followed(sbatch.follow(done.job, say), cancelled=True)
    except KeyboardInterrupt:
        sys.exit(Exit.INTERRUPTED)


def _db_arg(db: str) -> str:
    if is_server(db):
        return f"'{shown(db)}'"
    try:
        return str(Path(db).relative_to(Path.cwd()))
    except ValueError:
        return db


def kept(done: Submitted, end: sbatch.JobState) -> None:
    """Say how a job that did not complete ended and what it kept."""
    run = done.run_id()
    note = (f"run {run} kept what it measured (marked incomplete): 'mpiarena show {run} --db "
            f"{_db_arg(done.db)}'" if run is not None else "it stored no run")
    err.print(f"job {done.job} {end.state}: {note}; its output: {done.output}", markup=False,
              soft_wrap=True)


def finish(done: Submitted, followed: Followed, show: Callable[[Submitted], None]) -> None:
    """`show` what a completed job stored; for one that did not complete, Slurm's reason and
    what it kept (shown too), exit status 4 (130 when Ctrl-C cancelled it), or 2 with the job's
    own error when it refused its input."""
    end = followed.end
    if end.completed:
        show(done)
        return
    said = done.last_error()
    if end.exit_status == 2 and said:
        raise ArenaError(f"job {done.job} refused its command: {said}")
    if said:
        err.print(f"job {done.job} said: {said}", markup=False, soft_wrap=True)
    elif not done.output.exists():
        err.print(f"job {done.job} wrote no output: do its nodes see {done.output.parent}? The "
                  "store and its jobs folder must be on a file system the nodes share (not a "
                  "node's own /tmp)", markup=False, soft_wrap=True)
    kept(done, end)
    show(done)
    sys.exit(Exit.INTERRUPTED if followed.cancelled else Exit.FAILED)


def run_batch(what: str, submit: Submit, ntasks: int, db: str,
              show: Callable[[Submitted], None]) -> None:
    """--sbatch: submit the command as a job of `ntasks` tasks; with --no-wait print its id,
    else follow it and `show` what it stored."""
    done = _submit(what, submit, ntasks, db)
    err.print(f"submitted {done.written.script} as job {done.job}; output {done.output}",
              markup=False, soft_wrap=True)
    if submit.no_wait:
        print(done.job, flush=True)
        return
    finish(done, follow(done, submit), show)


def show_output(done: Submitted) -> None:
    """What the job printed (its output file), for commands whose summary is not one run."""
    try:
        text = done.output.read_text(errors="replace")
    except OSError as e:
        err.print(f"cannot read the job's output {done.output}: {e.strerror}", markup=False)
        return
    sys.stdout.write(text)
    sys.stdout.flush()
