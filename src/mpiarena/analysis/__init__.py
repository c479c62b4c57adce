"""Every statistic and decision mpiarena makes, in one layer that reads a run's data (never the
store) and that the reports only render: the nested statistics over launches (`stats`), a run
analysed once for every report (`run`), cell warnings, latency curves, run comparisons,
guidelines, costs, reproduction claims, tuning choices, and what adaptive sampling consults
(`sampling`)."""
