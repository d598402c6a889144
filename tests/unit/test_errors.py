"""One public exception tree (watcher/errors.py): every exception class of watcher derives from
WatcherError or is private to its module, and what one module catches of another's is declared
in errors.py, not beside the module that raises it."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import watcher
from conftest import REPO
from watcher import errors
from watcher.errors import WatcherError

# Signals, not errors: they never reach a user, and errors.py's docstring names them.
SIGNALS = {
    "watcher.util.http.Retry": "one try of with_retries() failed: try again",
    "watcher.web.pages.TooSlow": "Starlette's 503 answer for a page stopped at its deadline",
}


def _exception_classes() -> dict[str, type]:
    """Every exception class defined in watcher, by its qualified name."""
    found = {}
    for info in pkgutil.walk_packages(watcher.__path__, "watcher."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and obj.__module__ == info.name):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def _module_of(path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _uses() -> list[tuple[str, str, str]]:
    """(module, name, how) for each name a module of watcher raises or catches."""
    out = []
    for path in sorted((REPO / "watcher").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
                targets = [(c, "catches") for c in caught]
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                targets = [(node.exc.func, "raises")]
            else:
                continue
            for target, how in targets:
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                if name:
                    out.append((_module_of(path), name, how))
    return out


CLASSES = _exception_classes()


def test_every_exception_class_derives_from_watcher_error_or_is_private():
    stray = sorted(name for name, cls in CLASSES.items()
                   if not issubclass(cls, WatcherError) and not cls.__name__.startswith("_")
                   and name not in SIGNALS)
    assert not stray, f"neither in the WatcherError tree nor private (a leading _): {stray}"
    for name in SIGNALS:
        assert name in CLASSES, name  # a signal that went away: drop it here and in errors.py
        assert name.removeprefix("watcher.") in errors.__doc__, name


def test_what_a_module_catches_or_raises_of_another_is_declared_in_errors_py():
    """A private class never leaves its module; a public one that another module raises or
    catches lives in watcher/errors.py (signals aside)."""
    by_name = {cls.__name__: qualified for qualified, cls in CLASSES.items()}
    assert len(by_name) == len(CLASSES), "two exception classes share a name"
    crossing = sorted({f"{module} {how} {name} of {by_name[name].rsplit('.', 1)[0]}"
                       for module, name, how in _uses()
                       if name in by_name
                       and not by_name[name].startswith(f"{module}.")
                       and not by_name[name].startswith("watcher.errors.")
                       and by_name[name] not in SIGNALS})
    assert not crossing, f"move these to watcher/errors.py (or keep them in their module): {crossing}"


def test_the_tree_in_errors_docstring_names_every_class_of_errors_py():
    public = [cls.__name__ for name, cls in CLASSES.items() if name.startswith("watcher.errors.")]
    assert len(public) >= 20
    missing = [n for n in public if f" {n} " not in errors.__doc__]
    assert not missing, f"errors.py's tree does not show {missing}"
