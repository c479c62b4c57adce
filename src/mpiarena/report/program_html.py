"""The HTML report of an app run: one self-contained file (figures as base64 PNG, CSS inline, no
script) with the words of `program.program_text` and two figures; an `app --tune` run's adds
the race as a figure and its words (space, race, verification, settings ready to use)."""

from __future__ import annotations

from functools import partial

from .. import __version__
from ..analysis.program import AppResult
from ..analysis.tuned_app import TuneResult
from ..results import RunData
from . import drawing, program_plots, tuned_app
from .html import png_image, template_env
from .program import program_text
from .race_plot import race_plot
from .summary import machine_line

TEMPLATE = "app.html.j2"


def render_app_html(r: AppResult, data: RunData, tuned: TuneResult | None = None,
                    dpi: int = 100) -> str:
    """The whole report of an app run as one HTML document; `data` is the run as loaded (its
    machine and implementations), `tuned` an app --tune run's race and verdicts."""
    makers = ([lambda: race_plot(tuned)] if tuned else []) + program_plots.makers(r)
    images = drawing.drawn(makers, partial(png_image, dpi=dpi))
    return template_env().get_template(TEMPLATE).render(
        t=program_text(r), run=r.run, status=data.status, version=__version__, images=images,
        machine=machine_line(data), implementations=data.implementations,
        tuned=tuned_app.lines(tuned)[1:] if tuned else [])
