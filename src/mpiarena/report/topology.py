"""Where the ranks ran, for runs off this machine alone, and what an emulated link cannot show."""

from __future__ import annotations

from collections import Counter

from ..analysis.quantities import link_of, trusted_from
from ..base.records import LOCAL
from ..store.results import RunData


def emulation_note(data: RunData) -> str:
    """What an emulated link cannot show: delay, and the throughput of small messages."""
    link = link_of(data)
    assert link is not None
    return ("emulated link: shaped in rate and MTU by tbf; no delay emulation (netem is "
            "absent), so latency is this machine's own, and the first "
            f"{link.burst} B of a message (tbf's bucket) pass at host speed: throughput above "
            f"the link rate under {trusted_from(link)} B is that, not the network")


def placement_lines(data: RunData) -> list[str]:
    """The topology, how many ranks each node held per variant and rank count, and caveats."""
    topology = data.settings.topology
    if topology == LOCAL:
        return []
    per_job: dict[tuple[str, int], str] = {}
    for job in data.jobs:
        hosts = Counter(r["host"] for r in job.ranks)
        if hosts:
            per_job[job.variant, job.np] = ", ".join(f"{h}: {n}" for h, n in
                                                          sorted(hosts.items()))
    lines = [f"Topology: {topology}; ranks per node:"]
    lines += [f"  {variant}, {np} ranks: {where}"
              for (variant, np), where in sorted(per_job.items())]
    if link_of(data) is not None:
        lines.append(f"Note: {emulation_note(data)}")
    return lines


def rank_lines(data: RunData) -> list[str]:
    """The node each rank ran on, per variant and rank count (the first job of each)."""
    if data.settings.topology == LOCAL:
        return []
    seen: dict[tuple[str, int], str] = {}
    for job in data.jobs:
        if job.ranks and (job.variant, job.np) not in seen:
            seen[job.variant, job.np] = ", ".join(
                f"{r['rank']} {r['host']}" for r in sorted(job.ranks, key=lambda r: r["rank"]))
    if not seen:
        return []
    return [f"Ranks ran on ({data.settings.topology}; rank node):"] + \
        [f"  {variant}, {np} ranks: {where}" for (variant, np), where in sorted(seen.items())]
