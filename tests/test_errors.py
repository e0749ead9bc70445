"""One exception root: every exception class ccm-tui defines descends from CcmError (issue 31, item 3)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import ccm_tui
from ccm_tui.errors import CcmError, EffortNotFound, NotFound


def project_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(ccm_tui.__path__, "ccm_tui."):
        if ".ui" in info.name:  # (the UI defines none; importing it needs textual's app set up: skipped)
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == module.__name__:
                found.append(cls)
    return found


def test_every_exception_the_project_defines_descends_from_one_root():
    exceptions = project_exceptions()
    assert len(exceptions) >= 40  # (the walk found them)
    assert [f"{c.__module__}.{c.__qualname__}" for c in exceptions if not issubclass(c, CcmError)] == []


def test_no_such_effort_is_one_type_whoever_asks():
    assert issubclass(EffortNotFound, NotFound) and issubclass(NotFound, LookupError)


def test_the_tree_in_the_docstring_names_every_public_exception():
    import ccm_tui.errors

    drawn = ccm_tui.errors.__doc__ or ""
    missing = [c.__name__ for c in project_exceptions() if not c.__name__.startswith("_") and c.__name__ not in drawn]
    assert missing == []


def test_no_two_classes_share_a_name():
    """One class per meaning (issue 43): a second ``InputError``, ``ToolError``, ``Line`` or
    ``EffortList`` made a reader ask which one a name meant."""
    import ast
    from collections import defaultdict
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "ccm_tui"
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(path.relative_to(package)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
