"""Every statistic and decision mpiarena makes, in one layer that the reports only render: it
reads a run's data as results.py gives it (a program run's rows are the exception: program.py and
tuned_app.py read them from the store): the nested statistics over launches (`stats`), a run
analysed once for every report (`run`), the answer first (`answer`), cell warnings, latency
curves, run comparisons, guidelines, costs, reproduction claims, tuning choices, the race of
`program --tune`, and what adaptive sampling consults (`sampling`)."""
