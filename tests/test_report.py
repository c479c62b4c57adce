"""The HTML report, the Markdown summary and the figures, from a real run, checked in Chromium."""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from conftest import IMPLS, mpiarena
from PIL import Image

from mpiarena.report import drawing, plot_table, plots
from mpiarena.report.html import render_html
from mpiarena.store import Store
from mpiarena.store.results import RunData, load

TWO = [i.id for i in IMPLS[:2]]
BROKEN = next((i.id for i in IMPLS[:2] if i.family == "openmpi"), None)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LIMIT = 5 * 2**20
pytestmark = pytest.mark.skipif(len(TWO) < 2, reason="needs two usable implementations")


def collapse(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="session")
def run_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small real run: two implementations, 2 and 3 ranks (3 is oversubscribed on 2 cores),
    and, where Open MPI is one of them, a variant whose transport does not exist."""
    where = tmp_path_factory.mktemp("report")
    db = str(where / "results.db")
    suite = ["--suite", "quick"]
    if BROKEN:
        (where / "suite.toml").write_text(
            'description = "report test"\nbenchmarks = ["pingpong"]\nsizes = "8"\nnp = [2]\n'
            'observations = 5\ntarget_time = 0.001\nmax_cell_time = 1.0\ninit_launches = 2\n\n'
            f'[[variant]]\nimpl = "{BROKEN}"\nname = "broken"\n'
            'env = { OMPI_MCA_btl = "nosuch" }\n')
        suite = ["--suite", str(where / "suite.toml")]
    done = mpiarena("run", "--launches", "2",
                    *suite, *[f"--impl={i}" for i in TWO], "--bench", "pingpong,bcast",
                    "--sizes", "8,1K,64K", "--np", "2,3", "--observations", "5", "--db", db)
    assert done.returncode == (4 if BROKEN else 0), done.stderr  # 4: the broken one's cells
    return db


@pytest.fixture(scope="session")
def html_report(run_db: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "run.html"
    done = mpiarena("report", "latest", "--db", run_db, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    return out


def _verdict_lines(page: str) -> list[str]:
    items = re.findall(r'<li class="(?:faster|indistinguishable|undecided)">(.*?)</li>', page,
                       re.S)
    return [collapse(html.unescape(re.sub(r"<[^>]+>", "", item))) for item in items]


def test_html_is_self_contained_complete_and_small(html_report: Path):
    page = html_report.read_text()
    assert len(page.encode()) < LIMIT
    refs = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, re.I)
    assert refs and all(r.startswith(("#", "data:image/png;base64,")) for r in refs), \
        [r[:60] for r in refs if not r.startswith(("#", "data:"))]
    assert not re.search(r"https?://", " ".join(refs))
    assert "<script" not in page.lower() and "<link" not in page.lower()
    assert "@import" not in page and "url(" not in page
    text = collapse(html.unescape(re.sub(r"<[^>]+>", " ", page)))
    for variant in TWO:
        assert variant in text
    assert "MPI_Get_library_version" in text and "CFLAGS -std=c11" in text
    assert "[oversubscribed: 3 ranks on 2 cores]" in text          # verdict labels
    assert "3 ranks on 2 cores: oversubscribed" in text             # the warning
    assert "rank → CPUs" in text and re.search(r"0→\d", text)       # each job's binding
    assert "95% CI over launches" in text and "variance between launches" in text  # full stats
    assert "a rerun lands in" in text and "rerun range" in text  # the column and the method
    assert "dissemination barrier" in text                           # the method
    alts = re.findall(r'<img [^>]*alt="([^"]*)"', page)
    assert {"pingpong, 2 ranks: time", "pingpong, 2 ranks: bandwidth", "bcast: time vs ranks",
            "pingpong, 2 ranks: signature graph", "Winners",
            "pingpong, 2 ranks: fitted models"} <= set(alts)
    # the models: each variant's line, and its bcasts predicted from it (3 ranks marked)
    assert "Models: why the curves look as they do" in text
    assert all(re.search(rf"{re.escape(v)}\W{{0,3}} 8 B-64 KiB \(3\) first regime alpha ", text)
               for v in TWO), text
    assert "Collectives predicted from the models" in text
    assert re.search(r"3 ranks \d+ of \d+ cells \[oversubscribed: 3 ranks on 2 cores", text)
    if BROKEN:
        assert f"{BROKEN}:broken" in text and "OMPI_MCA_btl=nosuch" in text
        assert re.search(rf"{re.escape(BROKEN)}:broken (skipped|failed) at ", text)


def test_html_verdicts_are_the_terminal_ones(html_report: Path, run_db: str):
    shown = mpiarena("show", "latest", "--all", "--db", run_db)
    assert shown.returncode == 0, shown.stderr
    terminal = collapse(shown.stdout)
    page = html_report.read_text()
    lines = _verdict_lines(page)
    assert lines
    for line in lines:
        assert line in terminal, line
    # every verdict of the terminal (--all) is in some benchmark section of the report
    every = set(lines)
    n_terminal = terminal.count("faster than") + terminal.count("are indistinguishable")
    assert len(every) == n_terminal


def test_embedded_figures_decode_and_are_not_blank(html_report: Path):
    from PIL import Image

    page = html_report.read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) >= 8   # winners, per table time and relative, bandwidth, signature, ranks
    for data in images:
        img = Image.open(io.BytesIO(base64.b64decode(data)))
        img.load()
        assert img.size[0] > 100 and img.size[1] > 100
        assert np.asarray(img.convert("L"), dtype=float).std() > 5


def _chromium(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    assert Path(CHROMIUM).exists(), "install chromium (scripts/install-system.sh)"
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'chromium-profile'}",
         "--enable-logging=stderr", "--v=0", *args],
        capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def _no_page_errors(stderr: str) -> None:
    console = [ln for ln in stderr.splitlines() if "CONSOLE" in ln]
    assert console == [], console
    assert "net::ERR" not in stderr and "Failed to load resource" not in stderr


def test_html_renders_in_chromium(html_report: Path, tmp_path: Path):
    from PIL import Image

    shot = tmp_path / "report.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1400,4000",
                     html_report.as_uri(), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    _no_page_errors(done.stderr)
    img = Image.open(shot)
    assert img.format == "PNG" and img.size == (1400, 4000)
    grey = np.asarray(img.convert("L"), dtype=float)
    assert grey.std() > 20                      # not one flat colour
    assert (grey < 200).mean() > 0.03           # text, tables and figures, not a blank page


PROBE = """<script>
window.addEventListener("load", function () {
  var out = Array.prototype.map.call(document.images, function (im) {
    return [im.complete, im.naturalWidth, im.naturalHeight];
  });
  var pre = document.createElement("pre");
  pre.id = "arena-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def images_in_chromium(page: str, tmp_path: Path) -> list[list[object]]:
    """Each image of the page as Chromium loaded it: [complete, natural width, height]."""
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    done = _chromium("--dump-dom", probed.as_uri(), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    _no_page_errors(done.stderr)
    found = re.search(r'<pre id="arena-probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    images: list[list[object]] = json.loads(html.unescape(found.group(1)))
    return images


def test_every_image_loads_in_chromium(html_report: Path, tmp_path: Path):
    page = html_report.read_text()
    images = images_in_chromium(page, tmp_path)
    assert len(images) == page.count("<img ")
    assert all(complete and w > 0 and h > 0 for complete, w, h in images), images


def test_markdown_summary(run_db: str, tmp_path: Path):
    done = mpiarena("report", "latest", "--format", "md", "--db", run_db, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    md = (tmp_path / "report.md").read_text()      # the default name
    assert md.startswith("# mpiarena run 1")
    for section in ("## Implementations", "## Warnings", "## Verdicts", "## Results",
                    "## Method"):
        assert section in md
    for bench in ("pingpong", "bcast"):
        assert re.search(rf"^### {bench}: .*\(2 ranks\)$", md, re.M)
    assert re.search(r"^### bcast: .*\(3 ranks\) \[oversubscribed: 3 ranks on 2 cores\]$", md,
                     re.M)
    header = "| size | " + " | ".join(sorted([*TWO, *([f"{BROKEN}:broken"] if BROKEN else [])]))
    assert header + " |" in md
    assert re.search(r"^\| 64 KiB \| .*(ns|us|ms).* \|$", md, re.M)
    # the verdict lines are the terminal's default ones, word for word
    shown = collapse(mpiarena("show", "latest", "--tables", "--db", run_db).stdout)
    part = md.split("## Verdicts")[1].split("## Results")[0]
    lines = [collapse(ln[2:]).replace("\\", "") for ln in part.splitlines() if ln.startswith("- ")]
    assert lines
    for line in lines:
        assert line in shown, line
    assert len(lines) == shown.count("faster than") + shown.count("are indistinguishable")


def _latest(db: str) -> RunData:
    store = Store(Path(db))
    try:
        return load(store, store.resolve("latest"))
    finally:
        store.close()


def test_figures_drawn_by_worker_processes_are_those_drawn_here(run_db: str, monkeypatch):
    data = _latest(run_db)
    monkeypatch.setattr(drawing, "workers", lambda: 1)
    here = render_html(data)
    monkeypatch.setattr(drawing, "workers", lambda: 3)
    forked = render_html(data)
    assert forked.count("data:image/png;base64,") >= 9
    assert forked == here                             # the same figures, in the same places


def test_a_figure_drawn_once_has_the_pixels_savefig_gives(run_db: str):
    data = _latest(run_db)
    kinds = ("winners", "time", "relative")
    once, saved = ([p for make in plot_table.makers(data) if (p := make()) and p.kind in kinds]
                   for _ in range(2))
    assert len(once) >= 3
    for a, b in zip(once, saved, strict=True):
        drawn = np.asarray(Image.open(io.BytesIO(plots.png(a.figure, 100))).convert("RGB"))
        buf = io.BytesIO()
        with matplotlib.rc_context(plots.STYLE):
            b.figure.savefig(buf, format="png", dpi=100)
        full = np.asarray(Image.open(buf).convert("RGB"))
        assert drawn.shape == full.shape, a.name
        # the palette's rounding: Pillow's fast octree quantizer (5x the median cut's speed)
        # moves a pixel by 1.1 levels in the mean, white by one
        assert np.abs(drawn.astype(int) - full).mean() < 2, a.name


def test_plot_writes_png_and_svg(run_db: str, tmp_path: Path):
    out = tmp_path / "figs"
    done = mpiarena("plot", "latest", "--dir", str(out), "--db", run_db)
    assert done.returncode == 0, done.stderr
    expected = ["winners", "pingpong-np2-models", "pingpong-np2-time", "pingpong-np2-bandwidth",
                "pingpong-np2-signature", "pingpong-np2-relative", "bcast-np2-time",
                "bcast-np3-time", "bcast-np3-relative", "bcast-ranks"]
    for stem in expected:
        png, svg = out / f"{stem}.png", out / f"{stem}.svg"
        assert png.stat().st_size > 1000 and svg.stat().st_size > 1000, stem
        img = Image.open(png)
        assert img.format == "PNG" and np.asarray(img.convert("L"), dtype=float).std() > 5
        assert ET.parse(svg).getroot().tag.endswith("svg")
    assert len(list(out.glob("*.png"))) == len(list(out.glob("*.svg")))
    assert f"wrote {2 * len(list(out.glob('*.png')))} files" in done.stdout


def test_baseline(run_db: str, tmp_path: Path):
    out = tmp_path / "b.html"
    done = mpiarena("report", "--baseline", TWO[1], "--db", run_db, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"relative to {TWO[1]}" in out.read_text()


@pytest.mark.parametrize("args, message", [
    (["report", "--baseline", "nosuch-1.0"], "unknown baseline 'nosuch-1.0'"),
    (["plot", "--baseline", "nosuch-1.0"], "unknown baseline 'nosuch-1.0'"),
    (["report", "42"], "no run '42'"),
    (["report", "--format", "pdf"], "'pdf' is not one of"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, run_db: str, tmp_path: Path):
    done = mpiarena(*args, "--db", run_db, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0], done.stderr
    if "baseline" in message:
        assert all(v in lines[0] for v in TWO)        # names the valid ids
    assert not list(tmp_path.iterdir())               # nothing written


def test_missing_store_is_not_created(tmp_path: Path):
    done = mpiarena("report", "--db", str(tmp_path / "none.db"), cwd=tmp_path)
    assert done.returncode == 2 and "no store at" in done.stderr
    assert not (tmp_path / "none.db").exists()
