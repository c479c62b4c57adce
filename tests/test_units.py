"""Times and bandwidths in human units: three significant digits, never an exponent."""

import pytest

from mpiarena.base.units import bandwidth, data, seconds


@pytest.mark.parametrize("t, shown", [
    (999.7e-9, "1 us"),  # was '1e+03 ns' (mpich-4.0.2 allreduce 0 B in the quick suite)
    (999.4e-9, "999 ns"),
    (120e-9, "120 ns"),
    (1.114e-6, "1.11 us"),
    (999.6e-6, "1 ms"),
    (999.6e-3, "1 s"),
    (88e-6, "88 us"),
    (1234.0, "1230 s"),
    (0.0, "0 ns"),
    (0.5e-9, "0.5 ns"),
    (-3e-6, "-3 us"),
])
def test_seconds(t, shown):
    assert seconds(t) == shown


@pytest.mark.parametrize("bytes_per_s, shown", [
    (999.7e6 / 8, "1 Gbit/s"),
    (57.8e6 / 8, "57.8 Mbit/s"),
    (219e9 / 8, "219 Gbit/s"),
    (2.5e12 / 8, "2500 Gbit/s"),
    (100 / 8, "100 bit/s"),
])
def test_bandwidth(bytes_per_s, shown):
    assert bandwidth(bytes_per_s) == shown


@pytest.mark.parametrize("nbytes, shown", [
    (0, "0 B"),
    (512, "512 B"),
    (37_000_000, "35.3 MiB"),
    (3 << 30, "3 GiB"),
])
def test_data(nbytes, shown):
    assert data(nbytes) == shown
