"""The layers of watcher/, enforced (docs/design.md, "Layers").

Every module under watcher/ is parsed with ``ast``; every import of a watcher module counts:
at module level, inside a function (a *lazy* import), or under ``if TYPE_CHECKING:`` (a
*type-only* import); relative imports are resolved. Each module belongs to a *package*: its
folder under watcher/ (``watcher/store/papers.py`` -> ``store``) or, for a module at the root,
itself (``watcher/config.py`` -> ``config``). Then:

1. the package graph, lazy imports included, has no cycle (type-only imports never run: they
   are checked against the table, not for cycles);
2. every import from one package into another is an edge of :data:`ALLOWED`, the table below;
3. lazy imports that cross packages outside cli/ (where they keep each command's start-up
   short) are exactly those of :data:`LAZY`, each with its reason, and there are at most
   :data:`MAX_LAZY` of them. config.py's are listed apart (:data:`CONFIG_LAZY`): it is being
   replaced by kind-owned options.

A lazy import inside one package (``store.files`` -> ``store.migrations``) crosses no layer
and is not counted. test_no_import_circles.py checks the module graph; this checks the layers.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from test_no_import_circles import _resolve, circles, module_names

ROOT = Path(__file__).resolve().parent.parent.parent / "watcher"

# What each package may import, bottom to top (docs/design.md, "Layers"). A package not named
# as a key imports no other watcher package.
FOUNDATION = {"masking", "kinds", "subjects"}
ALLOWED: dict[str, set[str]] = {
    # the foundation: values, names and masks (masking and kinds import nothing of watcher)
    "categories": {"subjects"},
    "errors": {"masking"},  # a Zotero error masks its key
    "models": {"util"},  # its text normalisation
    "identity": {"models"},
    # plumbing: HTTP, paged-read bounds, schedules, logs, progress, folders, text
    "util": {"errors", "masking"},
    # formats: bytes in, papers out (no network, no database)
    "formats": {"errors", "models", "util"},
    # present: a digest as text, HTML, LaTeX, BibTeX, a TL;DR, its rating links (the
    # summarizer asks a model)
    "present": {"errors", "formats", "kinds", "masking", "models", "util"},
    # matching: the query language, the matchers, what goes into a digest (pure)
    "matching": {"errors", "formats", "models", "present", "util"},
    # store: all SQL (it keeps the index's words beside each paper)
    "store": {"errors", "identity", "masking", "matching", "models", "util"},
    # what the cycle, the command line and the web share over the database
    "services": {"errors", "formats", "matching", "models", "present", "store", "util"},
    # the outside world: sources fetch, channels send, Zotero both ways
    "sources": {"categories", "errors", "formats", "kinds", "masking", "models", "subjects", "util"},
    "deliver": {"errors", "formats", "kinds", "masking", "models", "present", "util"},
    "zotero": {"errors", "formats", "masking", "matching", "models", "present", "services", "store", "util"},
    # the config reads every kind of source and channel; deliver, sources, matching, zotero
    # and util.schedule lazily (CONFIG_LAZY)
    "config": {"categories", "deliver", "errors", "kinds", "matching", "models", "sources", "subjects",
               "util", "watcher", "zotero"},
    # what runs it all: the cycle, its record and status, the daemon
    "cycle": {"config", "deliver", "errors", "masking", "matching", "models", "present", "services",
              "sources", "store", "util", "zotero"},
    "web": {"categories", "config", "cycle", "deliver", "errors", "matching", "models", "present", "services",
            "store", "util", "zotero"},
    # the command line on top: it may use anything
    "cli": "*",
    "__main__": {"cli"},
}

# Type-only imports (under ``if TYPE_CHECKING:``): a type named for the checker, never run.
TYPE_ONLY = {
    ("watcher.present.summarize", "watcher.config"): "the summarizer's settings (SummarizerConfig)",
    ("watcher.errors", "watcher.models"): "the paper an error names",
}

# Lazy imports across packages outside cli/, each with its reason: start-up cost, pinned by a
# test of tests/integration/test_lazy_imports.py that a command does not load the module.
LAZY: dict[tuple[str, str], str] = {
    ("watcher.services.ratings", "watcher.store"):
        "start-up: every command imports ratings (cli_ratings' choices); sqlite-utils only when one "
        "reads the database (test_help_loads_no_store_matcher_or_templates)",
    ("watcher.services.ratings", "watcher.matching"):
        "start-up: the matcher (index, percolator, compile) only when a rating is checked (the same test)",
    ("watcher.services.ratings", "watcher.present"):
        "start-up: Jinja2 (render) and BibTeX only for 'watcher saved --to' (the same test)",
    ("watcher.zotero.client", "watcher.util"):
        "start-up: status reads each profile's Zotero state through zotsync; httpx only to talk to "
        "Zotero (test_status_loads_no_http_client)",
    ("watcher.store.files", "watcher.matching"):
        "start-up: every reader of the store imports store.files; the learner only when a state file "
        "is saved (test_status_loads_no_matcher)",
    ("watcher.sources.common", "watcher.util"):
        "start-up: reading a config reads every source kind's options; httpx only at a source's first "
        "request (test_status_loads_no_http_client)",
}
MAX_LAZY = 6

# config.py: being replaced by kind-owned options (its lazy imports reach the kinds' modules).
CONFIG_LAZY = {  # start-up cost: the kinds' registries load httpx and Jinja2, the matcher and
    # APScheduler are heavy; a command that reads no such key never loads them
    ("watcher.config", target) for target in (
        "watcher.deliver", "watcher.matching", "watcher.util", "watcher.sources", "watcher.zotero")
}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported watcher module (or package), dotted
    how: str  # "module", "lazy" or "type"
    line: int


def package(module: str) -> str:
    """``watcher.store.papers`` -> ``store``; ``watcher.config`` -> ``config``; ``watcher`` ->
    ``watcher``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(mod: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """Every import of a watcher module in ``mod``, with where it stands."""
    package_name = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: list[Import] = []

    def targets(node) -> list[str]:
        if isinstance(node, ast.Import):
            return [t for a in node.names if (t := _resolve(a.name, modules))]
        if node.level:
            base = package_name.split(".")
            if node.level > 1:
                base = base[: len(base) - (node.level - 1)]
            full = ".".join(base) + (f".{node.module}" if node.module else "")
        else:
            full = node.module or ""
        found = []
        for alias in node.names:
            sub = f"{full}.{alias.name}"  # `from pkg import sub` imports the submodule pkg.sub
            target = sub if sub in modules else _resolve(full, modules)
            if target:
                found.append(target)
        return found

    def visit(node, how: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.extend(Import(mod, t, how, child.lineno) for t in targets(child) if t != mod)
                continue
            inner = how
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and how == "module":
                inner = "lazy"
            elif isinstance(child, ast.If) and _is_type_checking(child):
                inner = "type"
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "module")
    return out


def all_imports(root: Path = ROOT) -> list[Import]:
    if root == ROOT:  # watcher/ does not change while the tests run: read once per test process
        return list(_watcher_imports())
    modules = module_names(root)
    return [i for mod, path in modules.items() for i in imports_of(mod, path, modules)]


@functools.cache
def _watcher_imports() -> tuple[Import, ...]:
    modules = module_names(ROOT)
    return tuple(i for mod, path in modules.items() for i in imports_of(mod, path, modules))


def crossing(imports: list[Import]) -> list[Import]:
    return [i for i in imports if package(i.module) != package(i.target)]


def package_graph(imports: list[Import]) -> dict[str, set[str]]:
    """Package -> the packages it imports at run time (module level and lazy)."""
    graph: dict[str, set[str]] = {}
    for i in crossing(imports):
        graph.setdefault(package(i.module), set())
        graph.setdefault(package(i.target), set())
        if i.how != "type":
            graph[package(i.module)].add(package(i.target))
    return graph


def lazy_pairs(imports: list[Import]) -> dict[tuple[str, str], list[Import]]:
    """(module, imported package's module prefix) -> its lazy imports across packages, outside
    cli/. The imported side is named by package (``watcher.matching`` for any of its modules)."""
    out: dict[tuple[str, str], list[Import]] = {}
    for i in crossing(imports):
        if i.how == "lazy" and package(i.module) != "cli":
            out.setdefault((i.module, f"watcher.{package(i.target)}"), []).append(i)
    return out


def where(found: list[Import]) -> str:
    return ", ".join(sorted({f"{i.module}:{i.line} -> {i.target}" for i in found}))


# --- the checker sees what it must --------------------------------------------------------------

def test_the_parser_tells_module_lazy_and_type_only_imports_apart(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "base.py").write_text("X = 1\n")
    (pkg / "mid.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .low import base\n"
        "if TYPE_CHECKING:\n    from .top import T\n"
        "def f():\n    from .top import g\n    return g\n")
    (pkg / "top.py").write_text("from pkg.mid import f\nclass T: ...\ndef g(): ...\n")
    found = {(i.module, i.target, i.how) for i in all_imports(pkg)}
    assert found == {("pkg.mid", "pkg.low.base", "module"), ("pkg.mid", "pkg.top", "type"),
                     ("pkg.mid", "pkg.top", "lazy"), ("pkg.top", "pkg.mid", "module")}
    graph = package_graph(all_imports(pkg))
    assert graph == {"mid": {"low", "top"}, "low": set(), "top": {"mid"}}
    assert circles(graph) == [["mid", "top"]]  # the lazy import closes the circle
    assert package("pkg.low.base") == "low" and package("pkg.mid") == "mid"


def test_the_real_graph_has_edges_of_every_kind():
    imports = all_imports()
    hows = {(i.module, package(i.target), i.how) for i in imports}
    assert ("watcher.store.papers", "matching", "module") in hows
    assert ("watcher.services.ratings", "store", "lazy") in hows
    assert ("watcher.present.summarize", "config", "type") in hows


# --- the layers -----------------------------------------------------------------------------------

def test_the_allowed_table_itself_has_no_cycle():
    table = {p: set() if ok == "*" else set(ok) for p, ok in ALLOWED.items()}
    table.pop("cli")  # on top: nothing imports it but __main__
    for p in FOUNDATION | {t for ok in table.values() for t in ok}:
        table.setdefault(p, set())
    assert circles(table) == []


def test_no_package_cycle_with_lazy_imports_counted():
    imports = all_imports()
    graph = package_graph(imports)
    found = circles(graph)
    lines = []
    for comp in found:
        inside = set(comp)
        edges = [i for i in crossing(imports)
                 if i.how != "type" and package(i.module) in inside and package(i.target) in inside]
        lines.append(f"cycle {' / '.join(comp)}:\n    " + "\n    ".join(where([i]) + f" ({i.how})" for i in edges))
    assert not found, "package cycles in watcher/:\n" + "\n".join(lines)


def test_every_import_across_packages_is_an_allowed_edge():
    bad = []
    for i in crossing(all_imports()):
        src, dst = package(i.module), package(i.target)
        ok = ALLOWED.get(src, set())
        if ok == "*":
            continue
        if i.how == "type" and (i.module, f"watcher.{dst}") in TYPE_ONLY:
            continue
        if dst not in ok:
            bad.append(f"{where([i])} ({i.how}): {src} -> {dst} is not in ALLOWED")
    assert not bad, "imports against the layers (docs/design.md, \"Layers\"):\n" + "\n".join(bad)


def test_lazy_imports_outside_cli_are_the_listed_ones():
    found = lazy_pairs(all_imports())
    config = {k: v for k, v in found.items() if k[0] == "watcher.config"}
    others = {k: v for k, v in found.items() if k[0] != "watcher.config"}
    new = [f"{where(v)}" for k, v in sorted(others.items()) if k not in LAZY]
    assert not new, ("lazy imports across packages outside cli/ that LAZY does not list (make them "
                     "module-level, or list each with its reason):\n" + "\n".join(new))
    stale = sorted(set(LAZY) - set(others))
    assert not stale, f"LAZY lists imports that are gone (remove them from the list): {stale}"
    assert len(LAZY) <= MAX_LAZY < 15
    assert set(config) <= CONFIG_LAZY, f"config.py: new lazy imports {sorted(set(config) - CONFIG_LAZY)}"
    assert len(others) + len(config) < 15, "lazy imports across packages outside cli/"
