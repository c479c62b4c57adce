"""A run's figures as ReFrame performance log lines (the `filelog` perflog handler's classic
format, as ReFrame 3 sites configure it), so tools that read ReFrame perflogs read mpiarena's:

    TIME|mpiarena VERSION|TEST on SYSTEM:PARTITION using ENVIRON|jobid=RUN|VAR=VALUE|
    ref=REF (l=LOWER, u=UPPER)|UNIT   (one line)

One line per cell, variant and figure: TEST is `bench_size_npN`, SYSTEM the run's host,
PARTITION `default`, ENVIRON the variant, VAR the figure (the median of launch medians, as the
tables give it) and its 95% interval's bounds (`VAR_ci_low`, `VAR_ci_high`); there is no
reference, written as ReFrame writes a variable without one (`ref=0 (l=None, u=None)`)."""

from __future__ import annotations

import math

from .. import __version__
from ..analysis.run import Analysis
from ..model.benchmarks import BENCHMARKS

NAMES = {"s": "time", "%": "percent", "B": "bytes"}  # the variable, by the benchmark's unit
NO_REFERENCE = "ref=0 (l=None, u=None)"


def test_name(bench: str, size: int, np: int) -> str:
    return f"{bench}_{size}_np{np}"


def lines(a: Analysis) -> list[str]:
    """Every measured cell of every variant: its figure and interval bounds, a line each."""
    run = a.data.run
    when = run.finished or run.started
    out = []
    for key in sorted(a.summaries, key=lambda k: (list(BENCHMARKS).index(k.bench), k.np, k.size)):
        unit = BENCHMARKS[key.bench].unit
        for variant, s in sorted(a.summaries[key].items()):
            head = (f"{when}|mpiarena {__version__}|{test_name(*key)} on {run.host}:default "
                    f"using {variant}|jobid={run.id}")
            for name, value in ((NAMES[unit], s.median), (f"{NAMES[unit]}_ci_low", s.ci_low),
                                (f"{NAMES[unit]}_ci_high", s.ci_high)):
                if math.isfinite(value):
                    out.append(f"{head}|{name}={value!r}|{NO_REFERENCE}|{unit}")
    return out


def to_perflog(a: Analysis) -> str:
    return "".join(line + "\n" for line in lines(a))
