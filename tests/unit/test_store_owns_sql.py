"""The store owns the SQL: no module of watcher/ outside the store package (watcher/store/, one
module per domain) runs a statement of its own.
A few modules still do (listed in REMAINING, each with what is left); the list only shrinks:
the test fails when another module starts running SQL, and when a listed one stops (so that
the list stays true)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO

STORE = "watcher/store/"  # the package: every module in it
REMAINING: dict[str, str] = {  # to move into the store, module by module (none left)
}
CALLS = {"execute", "executemany", "executescript", "query", "rows_where", "backup"}
STATEMENT = re.compile(r"^\s*(?:SELECT\s|INSERT\s+(?:OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|"
                       r"PRAGMA\s|(?:CREATE|DROP)\s+(?:TABLE|INDEX|TRIGGER|VIEW|VIRTUAL)\s|ALTER\s+TABLE\s|"
                       r"WITH\s+\w+\s+AS\s|BEGIN\s+IMMEDIATE)")


def sql_in(path: Path) -> list[str]:
    """Where ``path`` runs SQL: calls of a database method (``execute``, ``query`` ...), a
    table reached as ``db[...]``, and string literals that are SQL statements."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CALLS:
            found.append(f"line {node.lineno}: .{node.func.attr}(")
        elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
              and node.value.attr == "db"):
            found.append(f"line {node.lineno}: .db[...]")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and STATEMENT.match(node.value):
            found.append(f"line {node.lineno}: {node.value.split()[0]} ...")
    return found


def test_no_module_outside_the_store_runs_sql():
    running = {}
    for path in sorted((REPO / "watcher").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if not rel.startswith(STORE) and (found := sql_in(path)):
            running[rel] = found
    new = {k: v for k, v in running.items() if k not in REMAINING}
    assert new == {}, f"SQL belongs in watcher/store/ (a Store method): {new}"
    assert set(REMAINING) <= set(running), f"no SQL left in {set(REMAINING) - set(running)}: strike it from REMAINING"


def test_the_check_finds_sql(tmp_path):
    """Not blind: a module that reads a table itself is found."""
    module = tmp_path / "m.py"
    module.write_text("def n(store):\n    return store.db.execute('SELECT count(*) FROM papers').fetchone()\n")
    assert len(sql_in(module)) == 2


def test_the_store_is_the_package_and_runs_the_sql():
    """The exemption is the package watcher/store/ and nothing beside it: its modules run the
    SQL (so the check, pointed at them, finds it), and no file of that name sits outside it."""
    package = sorted((REPO / "watcher" / "store").glob("*.py"))
    assert package and not (REPO / "watcher" / "store.py").exists()
    assert sum(bool(sql_in(path)) for path in package) >= 8


# --- the store is the only place that knows SQLite --------------------------------------------

DRIVERS = {"sqlite3", "sqlite_utils"}


def sqlite_in(path: Path) -> list[str]:
    """Where ``path`` knows SQLite: an import of ``sqlite3`` or ``sqlite_utils``, or a store's
    connection reached as ``.db``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in DRIVERS]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in DRIVERS and not node.level:
            found.append(f"line {node.lineno}: from {node.module} import")
        elif isinstance(node, ast.Attribute) and node.attr == "db":
            found.append(f"line {node.lineno}: .db")
    return found


def test_no_module_outside_the_store_knows_sqlite():
    """Nothing outside watcher/store/ imports sqlite3 (or sqlite-utils) or reaches a store's
    connection: its errors come out of the store as StoreError, its answers as Papers and
    records (watcher/store/interface.py), so a second store could take its place."""
    knowing = {}
    for path in sorted((REPO / "watcher").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if not rel.startswith(STORE) and (found := sqlite_in(path)):
            knowing[rel] = found
    assert knowing == {}, f"SQLite belongs in watcher/store/ (a Store method, a StoreError): {knowing}"
