"""The index's view of ``derived.sqlite`` (:mod:`ccm_tui.core.storage.derived`): the names the parts use.

The search tables live in the session's one derived database; its opening, schema, transactions and
recovery are :class:`~ccm_tui.core.storage.derived.DerivedDB`'s. Here: the errors under their search
names, how a message's row id packs (effort, line), and :func:`recovering`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ..storage.derived import IN_MEMORY, DerivedBusy, DerivedDB, DerivedError

IndexDatabase = DerivedDB

_LINE_BITS = 32
_LINE_MASK = (1 << _LINE_BITS) - 1

_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Part(Protocol):
    """A part of the index (ingest, ranking, ...): it reaches the database through ``db``."""

    @property
    def db(self) -> DerivedDB: ...


_PartT = TypeVar("_PartT", bound=_Part)


def recovering(method: Callable[Concatenate[_PartT, _P], _R]) -> Callable[Concatenate[_PartT, _P], _R]:
    """A part's public method run by its database's :meth:`DerivedDB.run` (under the lock; a
    corrupt file is rebuilt and the method retried once)."""

    @functools.wraps(method)
    def wrapper(part: _PartT, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return part.db.run(method, part, *args, **kwargs)

    return wrapper


__all__ = ["IN_MEMORY", "IndexDatabase", "DerivedBusy", "DerivedError", "recovering"]
