"""Every rendering of a stored run behind one interface, as hyperfine's exporters: a table from
(kind of run, format) to a function `render(source, options) -> str`. `show`, `report` and
`export` look one up and write the text it returns; a new format is one entry.

An entry whose modules would slow every command's start-up (matplotlib, the statistics: each
says by how much, measured) imports them when it is called, so that a command loads only those
of the one rendering it asked for. Terminal views are rendered for the console they are shown
on (its width and colours) and returned as the text it would have printed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from rich.console import Console

from ..base.errors import ArenaError
from ..base.records import RunKind
from . import export
from .source import Rendering, RunSource


class Format(Enum):
    """What a command asks of a run: a file (export, report) or a terminal view (show)."""

    CSV = "csv"  # every observation (a program run: every launch and MPI call)
    JSON = "json"
    SUMMARY_CSV = "summary-csv"  # figures, intervals and verdicts (summary.schema.json)
    SUMMARY_JSON = "summary-json"
    PERFLOG = "perflog"  # ReFrame performance log lines
    HTML = "html"  # the self-contained report
    MARKDOWN = "md"
    TERMINAL = "terminal"  # show: the scoreboard and warnings, tables when asked
    CONFIG = "config"  # show --config: what ran
    MODELS = "models"  # show --models: the fitted models
    OUTPUT = "output"  # show --launch-output: each app launch and its output


@dataclass(frozen=True)
class RenderOptions:
    """What a command asks beyond the run and the format; each renderer reads what it needs."""

    console: Console  # where a terminal view is shown: it is laid out for its width and colours
    baseline: str | None = None  # the variant relative figures compare with (default: the first)
    all_verdicts: bool = False  # show --all
    tables: bool = False  # show --tables
    method: bool = False  # show --method
    costs: bool = False  # show --costs
    lines: int = 20  # show --launch-output: the last lines of each launch's stdout and stderr


Renderer = Callable[[RunSource, RenderOptions], str]


def render(source: RunSource, fmt: Format, options: RenderOptions) -> str:
    """The run in the format asked for."""
    return RENDERERS[(source.rendering, fmt)](source, options)


def _printed(console: Console, lines: list[str]) -> str:
    """Plain lines as the console prints them (never wrapped, no markup)."""
    with console.capture() as shown:
        for line in lines:
            console.print(line, soft_wrap=True, markup=False, highlight=False)
    return shown.get()


# A benchmark run (simulated runs export as benchmark runs do).

def _observations_csv(s: RunSource, o: RenderOptions) -> str:
    return export.to_csv(s.store, s.run_id)


def _observations_json(s: RunSource, o: RenderOptions) -> str:
    return export.to_json(s.store, s.run_id)


def _summary_csv(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~60 ms more start-up for every command
    from ..analysis.run import analyse
    from .summary_export import to_csv

    return to_csv(analyse(s.data))


def _summary_json(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~60 ms more start-up for every command
    from ..analysis.run import analyse
    from .summary_export import to_json

    return to_json(analyse(s.data))


def _perflog(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~30 ms more start-up for every command
    from ..analysis.run import analyse
    from .perflog import to_perflog

    return to_perflog(analyse(s.data))


def _html(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: matplotlib, ~430 ms more start-up for every command
    from .html import render_html
    from .releases_html import stored_page

    if s.record.kind == RunKind.RELEASES and (page := stored_page(s.store, s.run_id)):
        return page  # a bisection's step: its series' page
    return render_html(s.data, o.baseline, s.variants)


def _markdown(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~70 ms more start-up for every command
    from .markdown import render_markdown

    return render_markdown(s.data, o.baseline, s.variants)


def _terminal(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~80 ms more start-up for every command
    from ..analysis.fingerprint import fingerprints, tuned_of
    from . import fingerprint, terminal

    with o.console.capture() as shown:
        terminal.render(s.data, o.console, o.all_verdicts, o.tables, o.method, o.costs)
        fingerprint.render(fingerprints(s.data, tuned_of(s.data)), o.console)
    return shown.get()


def _config(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~40 ms more start-up for every command
    from ..analysis.whatran import run_configs
    from .summary import implementation_line
    from .topology import rank_lines
    from .whatran import config_lines

    return _printed(o.console, [*map(implementation_line, s.data.implementations),
                                *config_lines(run_configs(s.data)), *rank_lines(s.data)])


def _models(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~30 ms more start-up for every command
    from ..analysis.floor import latency_terms
    from ..analysis.loggp import loggp
    from ..analysis.models import fit_models
    from ..analysis.predict import run_predictions
    from .models import latency_lines, loggp_lines, model_lines, prediction_lines

    cores = int(s.data.machine.get("cores", 1))
    fitted = fit_models(s.data)
    said = [*model_lines(fitted), *latency_lines(latency_terms(s.data, fitted)),
            *loggp_lines(loggp(s.data)),
            *prediction_lines(run_predictions(s.data, fitted), cores)]
    if not said:
        raise ArenaError(f"run {s.run_id} has nothing to fit a model to: run with --bench "
                         "pingpong (two sizes or more) or --bench loggp")
    return _printed(o.console, said)


def _no_output(s: RunSource, o: RenderOptions) -> str:
    raise ArenaError(f"run {s.run_id} is not a program run: --launch-output shows the output of an "
                     "'mpiarena program' run's launches")


# A simulated run: deterministic, so its own words (no intervals, verdicts or oversubscription).

def _simulated_html(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~6 ms more start-up for every command
    from .simulated import html

    return html(s.data)


def _simulated_markdown(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~6 ms more start-up for every command
    from .simulated import markdown

    return markdown(s.data)


def _simulated_terminal(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~6 ms more start-up for every command
    from .simulated import render

    return _printed(o.console, render(s.data))


# A program run.

def _launches_csv(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~110 ms more start-up for every command
    from .program_export import to_csv

    return to_csv(s.store, s.run_id)


def _launches_json(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~110 ms more start-up for every command
    from .program_export import to_json

    return to_json(s.store, s.run_id)


def _program_summary_csv(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~110 ms more start-up for every command
    from .program_export import summary_csv

    return summary_csv(s.program)


def _program_summary_json(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~110 ms more start-up for every command
    from .program_export import summary_json
    from .program_tuning import tuned_summary

    return summary_json(s.program, s.data, tuned_summary(s.tuned) if s.tuned else None)


def _no_program_perflog(s: RunSource, o: RenderOptions) -> str:
    raise ArenaError(f"run {s.run_id} is a program run; --format perflog writes a benchmark run's "
                     "figures (export a program run as csv or json)")


def _program_html(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: matplotlib, ~460 ms more start-up for every command
    from .program_html import render_program_html

    return render_program_html(s.program, s.data, s.tuned)


def _program_markdown(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~90 ms more start-up for every command
    from .program_markdown import render_program_markdown

    return render_program_markdown(s.program, s.data)


def _program_terminal(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~90 ms more start-up for every command
    from . import program, program_tuning

    with o.console.capture() as shown:
        if s.tuned is not None:  # program --tune: the space, the race, the verdicts, the settings
            program_tuning.render(s.tuned, o.console)
        else:
            program.render(s.program, o.console)
    return shown.get()


def _program_output(s: RunSource, o: RenderOptions) -> str:
    # here, not at the top: ~90 ms more start-up for every command
    from .program import output_lines

    return _printed(o.console, output_lines(s.program, o.lines))


@dataclass(frozen=True)
class Entry:
    """One renderer and the renderings and formats it renders."""

    renderings: tuple[Rendering, ...]
    formats: tuple[Format, ...]
    render: Renderer


BENCHMARK, PROGRAM, SIMULATED = Rendering.BENCHMARK, Rendering.PROGRAM, Rendering.SIMULATED
MEASURED = (BENCHMARK, SIMULATED)  # runs of the measurement core, as their exports see them
VIEWS = (Format.TERMINAL, Format.CONFIG, Format.MODELS)  # show, --config, --models

# The views a simulated or program run has no use for (--config, --models) show what `show` does.
ENTRIES = [
    Entry(MEASURED, (Format.CSV,), _observations_csv),
    Entry(MEASURED, (Format.JSON,), _observations_json),
    Entry(MEASURED, (Format.SUMMARY_CSV,), _summary_csv),
    Entry(MEASURED, (Format.SUMMARY_JSON,), _summary_json),
    Entry(MEASURED, (Format.PERFLOG,), _perflog),
    Entry(MEASURED, (Format.OUTPUT,), _no_output),
    Entry((BENCHMARK,), (Format.HTML,), _html),
    Entry((BENCHMARK,), (Format.MARKDOWN,), _markdown),
    Entry((BENCHMARK,), (Format.TERMINAL,), _terminal),
    Entry((BENCHMARK,), (Format.CONFIG,), _config),
    Entry((BENCHMARK,), (Format.MODELS,), _models),
    Entry((SIMULATED,), (Format.HTML,), _simulated_html),
    Entry((SIMULATED,), (Format.MARKDOWN,), _simulated_markdown),
    Entry((SIMULATED,), VIEWS, _simulated_terminal),
    Entry((PROGRAM,), (Format.CSV,), _launches_csv),
    Entry((PROGRAM,), (Format.JSON,), _launches_json),
    Entry((PROGRAM,), (Format.SUMMARY_CSV,), _program_summary_csv),
    Entry((PROGRAM,), (Format.SUMMARY_JSON,), _program_summary_json),
    Entry((PROGRAM,), (Format.PERFLOG,), _no_program_perflog),
    Entry((PROGRAM,), (Format.HTML,), _program_html),
    Entry((PROGRAM,), (Format.MARKDOWN,), _program_markdown),
    Entry((PROGRAM,), VIEWS, _program_terminal),
    Entry((PROGRAM,), (Format.OUTPUT,), _program_output),
]
RENDERERS: dict[tuple[Rendering, Format], Renderer] = {
    (r, fmt): e.render for e in ENTRIES for r in e.renderings for fmt in e.formats}
