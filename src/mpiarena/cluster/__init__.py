"""Where ranks run: this machine, a cluster emulated in network namespaces, ssh hosts, or a
Slurm allocation. A topology answers one question for the runner: for np ranks, which nodes hold
how many ranks, how a launcher reaches them and how a command starts on the head node
(placement.py)."""
