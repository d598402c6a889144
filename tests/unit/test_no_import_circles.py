"""No import circles in watcher/: the module graph points one way, down.

Every module under watcher/ is parsed with ast; each ``import watcher.x``,
``from watcher.x import y``, ``from watcher import x`` and relative import
(``from . import x``, ``from .x import y``, ``from ..x import y``) is an edge.
Imports inside functions count too: a function-level import that closes a
circle is still a circle (it only hides the cycle from import time, not from
the design). Imports under ``if TYPE_CHECKING:`` count as well, for the same
reason. An edge to a package (``watcher.web``) is an edge to its
``__init__``; ``from pkg import name`` where ``name`` is a submodule is an
edge to that submodule.

The test fails naming every strongly connected component of more than one
module (Tarjan's algorithm), with the edges inside it.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent / "watcher"


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """Map dotted module name -> file for every module of the package at ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module (or package) a dotted name refers to, if it is ours."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def edges_of(mod: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The watcher modules ``mod`` imports, anywhere in its body."""
    is_pkg = path.name == "__init__.py"
    package = mod if is_pkg else mod.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, modules)
                if target:
                    out.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: len(base) - (node.level - 1)]
                base_name = ".".join(base)
                full = f"{base_name}.{node.module}" if node.module else base_name
            else:
                full = node.module or ""
            for alias in node.names:
                # `from pkg import sub` imports the submodule pkg.sub
                sub = f"{full}.{alias.name}"
                target = sub if sub in modules else _resolve(full, modules)
                if target:
                    out.add(target)
    out.discard(mod)
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    if root == ROOT:  # watcher/ does not change while the tests run: read once per test process
        return {mod: set(edges) for mod, edges in _watcher_graph().items()}
    modules = module_names(root)
    return {mod: edges_of(mod, path, modules) for mod, path in modules.items()}


@functools.cache
def _watcher_graph() -> dict[str, frozenset[str]]:
    modules = module_names(ROOT)
    return {mod: frozenset(edges_of(mod, path, modules)) for mod, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        # iterative DFS: (node, iterator over its successors)
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, succ = work[-1]
            for w in succ:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_graph_sees_imports():
    """The parser finds real edges of every form (so an empty result means something)."""
    graph = import_graph()
    assert "watcher.cli" in graph["watcher.__main__"]  # from watcher.cli import main
    assert "watcher.web.pages" in graph["watcher.web.auth"]  # from .pages import ...
    assert "watcher.web.sessions" in graph["watcher.web.auth"]  # from . import sessions
    assert "watcher.store" in graph["watcher.web.pages"]  # from ..store import ...
    assert "watcher.matching.learn" in graph["watcher.matching.compile"]  # inside a function


def test_a_function_level_import_closes_a_circle(tmp_path):
    """An import inside a function (or under TYPE_CHECKING) counts: it hides the circle from
    import time, not from the design."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from .high import g\n    return g\n")
    (pkg / "high.py").write_text("from pkg import low\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "leaf.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..low import f\n")
    graph = import_graph(pkg)
    assert graph["pkg.low"] == {"pkg.high"} and graph["pkg.high"] == {"pkg.low"}
    assert graph["pkg.sub.leaf"] == {"pkg.low"}
    assert circles(graph) == [["pkg.high", "pkg.low"]]


def test_circles_detects_a_cycle():
    """The checker itself names a planted circle."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    graph = import_graph()
    found = circles(graph)
    lines = []
    for comp in found:
        inside = set(comp)
        edges = [
            f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in inside
        ]
        lines.append("circle: " + ", ".join(comp) + "\n    " + "\n    ".join(edges))
    assert not found, "import circles in watcher/:\n" + "\n".join(lines)
