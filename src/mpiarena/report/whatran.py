"""What ran, in words: per variant its transport and how that was learned, its control
variables that differ from its library's defaults, settings that did not reach the library,
and bindings a launcher did not apply."""

from __future__ import annotations

from ..analysis.whatran import BindingMiss, ConfigChange, Configs, CvarDiff, VariantConfig

HEADING = ("What ran (as each library reported it from inside its ranks, read once per variant "
           "and rank count before any timed cell):")


def _value(v: str | None) -> str:
    return "(none)" if v is None else repr(v) if v == "" else v


def diff_text(d: CvarDiff) -> str:
    return f"{d.name} {_value(d.before)} -> {_value(d.after)}"


def variant_lines(v: VariantConfig) -> list[str]:
    if v.what is None:
        return [f"{v.variant}: not recorded: {v.why_none}"]
    w = v.what
    cvars = (f"{len(w.cvars)} control variables (MPI_T)" if w.cvars is not None
             else f"control variables not available: {w.cvars_why}")
    lines = [f"{v.variant}: transport {w.transport} (learned from {w.transport_how}); {cvars}"]
    if v.defaults_from is not None:
        lines.append(f"  against {v.defaults_from}: " +
                     ("; ".join(diff_text(d) for d in v.differs) if v.differs else
                      "no control variable differs"))
    return lines


def binding_line(b: BindingMiss) -> str:
    return (f"{b.variant} at {b.np} ranks asked for one core per rank, but rank {b.rank} may "
            f"run on CPUs {b.cpus}: the launcher did not bind it")


def config_lines(c: Configs) -> list[str]:
    """What `show --config` prints."""
    lines = [HEADING]
    for v in c.variants:
        lines += variant_lines(v)
    lines += [f"warning: {w}" for w in c.warnings]
    lines += [f"warning: {binding_line(b)}" for b in c.binding]
    return lines


def change_lines(changes: list[ConfigChange]) -> list[str]:
    """What differs in what ran between variants of two runs (analysis.whatran.run_changes)."""
    out = []
    for c in changes:
        if c.transport is not None:
            out.append(f"{c.name}: transport {c.transport[0]} -> {c.transport[1]}")
        if c.differs:
            shown = "; ".join(diff_text(d) for d in c.differs[:8])
            more = f" and {len(c.differs) - 8} more" if len(c.differs) > 8 else ""
            out.append(f"{c.name}: {len(c.differs)} control variables differ: {shown}{more}")
    return out
