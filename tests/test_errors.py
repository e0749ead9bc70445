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
