"""What is measured: the benchmarks, the guidelines, programs and what a library ran."""
