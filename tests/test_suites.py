import pytest

from mpiarena.errors import ArenaError
from mpiarena.suites import builtin_names, load


def test_builtin_suites_load():
    assert {"quick", "default"} <= set(builtin_names())
    quick = load("quick")
    assert "pingpong" in quick.benchmarks and quick.nps == (2,)
    assert load("default").variants[0].name == "tcp"


def test_suite_file_with_variant(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text('benchmarks = ["pingpong"]\nsizes = "8,1K"\nnp = [2]\n'
                 '[[variant]]\nimpl = "mpich"\nname = "nobind"\nbinding = "none"\n')
    suite = load(str(f))
    assert suite.sizes == (8, 1024)
    assert suite.variants[0].binding == "none"


@pytest.mark.parametrize("text, message", [
    ('benchmarks = ["pingpong"', "not valid TOML"),
    ('benchmarks = ["warp"]', "unknown benchmark warp"),
    ('benchmarks = ["pingpong"]\nnp = [0]', "rank counts must be 1 or more"),
    ('benchmarks = ["pingpong"]\nsizes = "8..x"', "not a message size"),
    ('sizes = "8"', "missing field"),
])
def test_bad_suite_files_say_what_is_wrong(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ArenaError, match=message):
        load(str(f))


def test_missing_suite_names_the_choices():
    with pytest.raises(ArenaError, match="quick"):
        load("/no/such/suite.toml")
