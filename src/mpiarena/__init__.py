"""mpiarena: message-passing libraries side by side.

The folders are layers, low to high; a module imports only from its own layer or a lower one
(tests/test_layers.py holds it):

  base       names, units, paths, statuses, records and errors everything stands on
  system     processes on this machine: run, poll, own them; the machine's load
  model      what is measured: model (benchmarks, guidelines, programs), suites, studies, imports
  store      the store and the observations it returns (store, imports.ingest)
  platform   where and with what: platform (build, plan, doctor), cluster, impls, launchers
  analysis   statistics and every decision
  runner     runs: launches, budget, profiler, program tuning, library tuning, reproduction
  report     renders what analysis returns
  commands   the command line
"""

__version__ = "0.1.0"
