import pytest

from mpiarena.base.errors import ArenaError
from mpiarena.base.sizes import format_size, parse_sizes


def test_ranges_are_powers_of_two_with_suffixes():
    assert parse_sizes("0..8") == [0, 1, 2, 4, 8]
    assert parse_sizes("1,8,1K..4K") == [1, 8, 1024, 2048, 4096]
    assert parse_sizes("4MiB") == [4 << 20]


def test_perturbation_adds_netpipe_neighbours():
    assert parse_sizes("2,16", perturb=True) == [2, 13, 16, 19]


@pytest.mark.parametrize("text", ["", "1,x", "8..1", "-4", "1K..9G", "4Q"])
def test_malformed_lists_name_the_problem(text):
    with pytest.raises(ArenaError, match=r"1K\.\.4M"):
        parse_sizes(text)


def test_format():
    assert [format_size(s) for s in (8, 4096, 3000, 1 << 20)] == ["8 B", "4 KiB", "3000 B", "1 MiB"]
