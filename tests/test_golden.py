"""Golden renders: every committed store under tests/golden/ (one, two, four and eight MPI
libraries, an import, a program run, a releases run; tests/golden/README.md says how each was
made) rendered by `show`, `report --format md` and the summary export (CSV), compared with the text
committed in tests/golden/expected/. A change of output fails here until
scripts/update-goldens.py writes it anew and the diff is reviewed. The README's sample is
rendered from a committed store too (scripts/readme-sample.py --check)."""

from __future__ import annotations

import difflib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"),
                                                  ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GOLDENS = _script("update-goldens")
STORES = GOLDENS.stores()
MADE = {"one", "two", "four", "eight", "import", "program", "releases"}


def test_every_kind_of_store_is_committed_small() -> None:
    assert {s.name.removesuffix(".db.gz") for s in STORES} == MADE
    assert all(s.stat().st_size < 100 * 1024 for s in STORES), \
        {s.name: s.stat().st_size for s in STORES}


@pytest.mark.parametrize("store", STORES, ids=lambda s: s.name.removesuffix(".db.gz"))
def test_a_committed_store_renders_as_committed(store: Path) -> None:
    for file, text in GOLDENS.renders(store).items():
        expected = (GOLDENS.EXPECTED / file).read_bytes().decode()
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            f"expected/{file}", "rendered now"))
        assert text == expected, f"{file} changed (scripts/update-goldens.py):\n{diff}"


@pytest.mark.parametrize("store", [s for s in STORES if s.name.startswith(
    ("two", "four", "eight"))], ids=lambda s: s.name.removesuffix(".db.gz"))
def test_the_answer_is_at_most_four_lines_of_100_columns_and_60_words(store: Path) -> None:
    shown = GOLDENS.renders(store)[f"{store.name.removesuffix('.db.gz')}.show.txt"]
    lines = shown.splitlines()
    answer = [x for x in lines if x.startswith("Fastest ")]
    said = lines[lines.index(answer[0]):lines.index(answer[-1]) + 1]  # as wrapped at 100
    assert 1 <= len(said) <= 4 and said == answer, said
    assert all(len(x) <= 100 for x in said) and sum(len(x.split()) for x in said) <= 60, said
    assert sum(x.startswith("Decided:") for x in lines) == 1


def test_the_readme_sample_is_rendered_from_a_committed_store() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme-sample.py"),
                           "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
