"""Where ranks run: this machine, a cluster emulated in network namespaces, or ssh hosts.

A topology answers one question for the runner: for np ranks, which nodes hold how many ranks,
how a launcher reaches them (a remote-shell agent) and how a command starts on the head node.
"""

from .placement import Node, Placement

__all__ = ["Node", "Placement"]
