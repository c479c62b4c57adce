"""Network namespaces, veth pairs, a bridge and tbf shaping: thin wrappers over ip and tc."""

from __future__ import annotations

import json
import subprocess

from ..base import tools
from ..base.errors import ArenaError

PREFIX = "mpiarena-"  # every namespace mpiarena makes starts with this


def _run(*argv: str) -> str:
    tools.require(argv[0], "an emulated cluster")
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise ArenaError(f"{' '.join(argv)} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def _quiet(*argv: str) -> str:
    """The output of an ip command whose failure means there is nothing to act on: no such
    namespace or link, or no ip at all (none can have been made without it)."""
    if tools.find(argv[0]) is None:
        return ""
    return subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout


def existing() -> list[str]:
    """Every network namespace whose name mpiarena gave; none where iproute2 is missing (no
    emulated cluster can have been made there: containers and minimal images lack `ip`)."""
    out = _quiet("ip", "-j", "netns", "list")
    return [n["name"] for n in json.loads(out or "[]") if n["name"].startswith(PREFIX)]


def add(ns: str) -> None:
    _run("ip", "netns", "add", ns)
    _run("ip", "-n", ns, "link", "set", "lo", "up")


def delete(ns: str) -> None:
    """Remove a namespace; its veth ends and qdiscs go with it."""
    _quiet("ip", "netns", "del", ns)


def bridge(ns: str, name: str = "br0") -> None:
    _run("ip", "-n", ns, "link", "add", name, "type", "bridge")
    _run("ip", "-n", ns, "link", "set", name, "up")


def cable(node_ns: str, switch_ns: str, port: str, address: str, mtu: int) -> None:
    """A veth pair: eth0 in the node (with its address), `port` on the switch's bridge. One
    frame per packet (no GSO), so the shaper counts every frame's headers as a wire would."""
    _run("ip", "link", "add", "eth0", "netns", node_ns, "mtu", str(mtu), "gso_max_segs", "1",
         "type", "veth", "peer", "name", port, "netns", switch_ns, "mtu", str(mtu),
         "gso_max_segs", "1")
    _run("ip", "-n", node_ns, "addr", "add", f"{address}/24", "dev", "eth0")
    _run("ip", "-n", node_ns, "link", "set", "eth0", "up")
    _run("ip", "-n", switch_ns, "link", "set", port, "master", "br0", "up")


def shape(ns: str, dev: str, rate_bits: float, burst: int, overhead: int) -> None:
    """tbf at rate on dev's egress with a bucket of `burst` bytes (EmulatedSpec.burst), each
    packet charged `overhead` more bytes (Medium.overhead: the medium's framing beyond the
    veth's Ethernet header, e.g. Ethernet's preamble, FCS and gap) as on a real wire. tbf's
    own overhead is the same length adjustment as a size table's (tc-stab) for this qdisc."""
    try:
        _run("tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate",
             f"{int(rate_bits)}bit", "burst", str(burst), "latency", "50ms", "overhead",
             str(overhead))
    except ArenaError as e:
        raise ArenaError(f"links cannot be shaped: this kernel refuses the tbf qdisc ({e})") from e


def qdisc(ns: str, dev: str) -> str:
    return _run("tc", "-n", ns, "qdisc", "show", "dev", dev).strip()


def mtu(ns: str, dev: str) -> int:
    return int(json.loads(_run("ip", "-n", ns, "-j", "link", "show", "dev", dev))[0]["mtu"])


def bytes_sent(ns: str, dev: str) -> int:
    """Bytes transmitted by dev so far."""
    info = json.loads(_run("ip", "-n", ns, "-j", "-s", "link", "show", "dev", dev))[0]
    return int(info["stats64"]["tx"]["bytes"])


def pids_in(ns: str) -> list[int]:
    """Processes whose network namespace is ns."""
    return [int(p) for p in _quiet("ip", "netns", "pids", ns).split()]


def host_link_name(index: int) -> str:
    """This (root) namespace's end of the link to cluster `index`'s switch."""
    return f"{PREFIX}h{index}"


def delete_link(name: str) -> None:
    """Delete a link of this namespace if it exists (a veth takes its peer with it)."""
    _quiet("ip", "link", "del", name)


def host_link(name: str, switch_ns: str, address: str) -> None:
    """A veth from this (the root) namespace to the switch's bridge, address on the host end,
    so that commands here reach the nodes; it goes when the switch namespace is deleted."""
    _run("ip", "link", "add", name, "type", "veth", "peer", "name", "host", "netns", switch_ns)
    _run("ip", "-n", switch_ns, "link", "set", "host", "master", "br0", "up")
    _run("ip", "addr", "add", f"{address}/24", "dev", name)
    _run("ip", "link", "set", name, "up")

