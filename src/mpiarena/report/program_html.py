"""The HTML report of a program run: one self-contained file (figures as base64 PNG, CSS inline, no
script) with the words of `program.program_text` and two figures; a `program --tune` run's adds
the race as a figure and its words (space, race, verification, settings ready to use)."""

from __future__ import annotations

from functools import partial

from .. import __version__
from ..analysis.program import ProgramResult
from ..analysis.program_tuning import TuneResult
from ..store.results import RunData
from . import drawing, program_plots, program_tuning
from .html import png_image, template_env
from .program import program_text
from .race_plot import race_plot
from .summary import machine_line

TEMPLATE = "program.html.j2"


def render_program_html(r: ProgramResult, data: RunData, tuned: TuneResult | None = None,
                    dpi: int = 100) -> str:
    """The whole report of a program run as one HTML document; `data` is the run as loaded (its
    machine and implementations), `tuned` a program --tune run's race and verdicts."""
    makers = ([lambda: race_plot(tuned)] if tuned else []) + program_plots.makers(r)
    images = drawing.drawn(makers, partial(png_image, dpi=dpi))
    return template_env().get_template(TEMPLATE).render(
        t=program_text(r), run=r.run, status=data.status, version=__version__, images=images,
        machine=machine_line(data), implementations=data.implementations,
        tuned=program_tuning.lines(tuned)[1:] if tuned else [])
