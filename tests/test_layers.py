"""Data flows one way: every import in src/mpiarena (relative, absolute, inside a function)
goes to the same layer or a lower one, and no modules import each other in a cycle. The layers
and their folders are the package docstring's table (src/mpiarena/__init__.py): the tree says
the order, this test holds it."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("mpiarena", "base")),
    ("system", ("system",)),
    ("model", ("model", "suites", "studies", "imports")),
    ("store", ("store", "imports.ingest")),
    ("platform", ("platform", "cluster", "impls", "launchers")),
    ("analysis", ("analysis",)),
    ("runner", ("runner",)),
    ("report", ("report",)),
    ("commands", ("commands",)),
)


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the module imported (a package's __init__ for a name it holds)
    line: int


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "mpiarena").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


def imports() -> list[Import]:
    """Every import of one mpiarena module by another, wherever it stands in the file."""
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                found += [Import(module, t, node.lineno) for t in _targets(module, path, node)
                          if t == "mpiarena" or t.startswith("mpiarena.")]
    return found


def layer(module: str) -> int:
    """The rank of the layer a module belongs to."""
    name = module.removeprefix("mpiarena.") if module != "mpiarena" else "mpiarena"
    best = (-1, -1)
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if name == p or name.startswith(p + "."):
                best = max(best, (len(p), rank))
    assert best[1] >= 0, f"{module} is in no layer: add it to LAYERS"
    return best[1]


def test_every_module_is_in_a_layer_and_every_import_is_seen():
    assert all(layer(m) >= 0 for m in MODULES)
    seen = {(i.source, i.target) for i in imports()}
    # one of each kind: relative, absolute package, and function-local
    assert ("mpiarena.commands.run", "mpiarena.commands.stores") in seen
    assert ("mpiarena.commands", "mpiarena") in seen
    assert ("mpiarena.commands.profile", "mpiarena.runner.profile") in seen


def test_no_import_runs_up_the_layers():
    upward = [f"{i.source}:{i.line} imports {i.target} "
              f"({LAYERS[layer(i.source)][0]} -> {LAYERS[layer(i.target)][0]})"
              for i in imports() if layer(i.target) > layer(i.source)]
    assert not upward, "imports from a higher layer:\n" + "\n".join(upward)


def test_no_import_cycle():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in imports():
        if i.target in graph and i.target != i.source:
            graph[i.source].add(i.target)
    cycles = []
    state: dict[str, int] = {}  # 1: on the path now, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(" -> ".join([*path[path.index(t):], t]))
            elif t not in state:
                visit(t, [*path, t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_package_docstring_names_the_layers_in_order():
    import mpiarena

    table = [line.split()[0] for line in (mpiarena.__doc__ or "").splitlines()
             if line.startswith("  ") and line.split()]
    assert table == [name for name, _ in LAYERS]


def test_every_folder_is_in_one_layer():
    folders = {p.parent.relative_to(SRC / "mpiarena").as_posix().replace("/", ".")
               for p in (SRC / "mpiarena").rglob("__init__.py")} - {"."}
    assert all(layer(f"mpiarena.{f}") >= 0 for f in folders)


def test_no_module_sits_loose_above_the_folders():
    assert [p.name for p in (SRC / "mpiarena").glob("*.py")] == ["__init__.py"]
