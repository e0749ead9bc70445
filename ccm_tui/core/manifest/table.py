"""The efforts of an open session: the ones in use as objects, the rest in the catalog.

Every open effort is held as an :class:`Effort`; a concluded one becomes an object when something
asks for it (``get``) and stays one, so the same id always gives the same object. Counts and
pages come from the catalog, so nothing here grows with the number of concluded efforts. Change
an effort's status only through :meth:`EffortTable.set_status` (open efforts are indexed apart).

What changed since the last save is found by comparing each held effort with the entry last
saved (:meth:`changed`), and :meth:`saved` makes those the new baseline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .catalog import EffortCatalog
from .effort import CONCLUDED, OPEN, STATUSES, Effort


def _weight(entry: dict[str, Any] | None) -> tuple[int, int, int]:
    """What an entry adds to the totals: (efforts, concluded, raw tokens)."""
    if entry is None:
        return 0, 0, 0
    raw = entry.get("raw_tokens")
    return 1, 1 if entry.get("status") == CONCLUDED else 0, raw if isinstance(raw, int) else 0


def folded_last(effort: Effort) -> int:
    """The last ambient line ``effort`` holds when it was folded from the ambient chat (else 0)."""
    source = effort.source if isinstance(effort.source, dict) else {}
    lines = source.get("lines")
    if source.get("folded_from") != "ambient" or not isinstance(lines, list) or len(lines) != 2:
        return 0
    last = lines[1]
    return last if type(last) is int and last > 0 else 0


class EffortTable:
    """Lookups by id, the open efforts, totals and pages, over an :class:`EffortCatalog`."""

    def __init__(self, catalog: EffortCatalog | None = None) -> None:
        self.catalog = catalog or EffortCatalog.in_memory()
        self._held: dict[str, Effort] = {}
        self._saved: dict[str, dict[str, Any]] = {}  # the entry as the catalog has it (absent: new)
        self._open: dict[str, Effort] = {}
        totals = self.catalog.totals()
        self._count, self._concluded, self._raw = totals.count, totals.concluded, totals.raw_tokens
        for effort in self.catalog.open_efforts():
            self._hold(effort, saved=True)

    @classmethod
    def of(cls, efforts: Iterable[Effort]) -> EffortTable:
        """A table of these efforts (tests, tools that build a session by hand)."""
        table = cls()
        for effort in efforts:
            table.add(effort)
        table.saved(table.changed())
        table.catalog.apply(list(table._held.values()), applied=None)
        return table

    def close(self) -> None:
        self.catalog.close()

    def _hold(self, effort: Effort, *, saved: bool) -> None:
        self._held[effort.id] = effort
        if saved:
            self._saved[effort.id] = effort.to_dict()
        if effort.is_open:
            self._open[effort.id] = effort

    # ------------------------------------------------------------------ lookups
    def get(self, effort_id: str) -> Effort | None:
        effort = self._held.get(effort_id)
        if effort is None and isinstance(effort_id, str):
            effort = self.catalog.get(effort_id)
            if effort is not None:
                self._hold(effort, saved=True)
        return effort

    def __contains__(self, effort_id: object) -> bool:
        return isinstance(effort_id, str) and (effort_id in self._held or bool(self.catalog.existing([effort_id])))

    def existing(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` name an effort."""
        wanted = set(ids)
        held = wanted & self._held.keys()
        return held | self.catalog.existing(wanted - held)

    def __len__(self) -> int:
        return self._count + sum(1 for effort_id in self._held if effort_id not in self._saved)

    @property
    def concluded_count(self) -> int:
        return self._concluded + sum(
            int(e.is_concluded) - _weight(self._saved.get(i))[1] for i, e in self._held.items()
        )

    @property
    def raw_tokens(self) -> int:
        """Tokens of every effort's raw log (the naive figure's efforts part)."""
        return self._raw + sum(e.raw_tokens - _weight(self._saved.get(i))[2] for i, e in self._held.items())

    def held(self) -> list[Effort]:
        return list(self._held.values())

    # ------------------------------------------------------------------ the open efforts
    def add(self, effort: Effort) -> None:
        self._hold(effort, saved=False)

    def set_status(self, effort: Effort, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        effort.status = status
        if status == OPEN:
            self._open[effort.id] = effort
        else:
            self._open.pop(effort.id, None)
            effort.active = False

    @property
    def active(self) -> Effort | None:
        for e in self._open.values():
            if e.active:
                return e
        return None

    def open_efforts(self) -> list[Effort]:
        return list(self._open.values())

    def set_active(self, effort: Effort | None) -> None:
        for e in self._open.values():
            e.active = e is effort

    # ------------------------------------------------------------------ saving
    def changed(self) -> list[Effort]:
        """The held efforts that differ from their last saved entry (new ones included)."""
        return [e for i, e in self._held.items() if self._saved.get(i) != e.to_dict()]

    def saved(self, efforts: Iterable[Effort]) -> None:
        """These efforts' entries are now saved (journaled and in the catalog)."""
        for effort in efforts:
            entry = effort.to_dict()
            before, after = _weight(self._saved.get(effort.id)), _weight(entry)
            self._count += after[0] - before[0]
            self._concluded += after[1] - before[1]
            self._raw += after[2] - before[2]
            self._saved[effort.id] = entry

    # ------------------------------------------------------------------ everything
    def __iter__(self) -> Iterator[Effort]:
        """Every effort in manifest order. It reads the whole catalog: for a report or an export,
        never for a turn."""
        for effort in self.catalog.iter_efforts():
            yield self._held.get(effort.id, effort)
        for effort_id, effort in self._held.items():
            if effort_id not in self._saved:
                yield effort

    def index_rows(self) -> Iterator[tuple[str, str, str | None, str | None]]:
        """(id, status, summary, name) of every effort, for the search index."""
        for row in self.catalog.index_rows():
            held = self._held.get(row[0])
            yield row if held is None else (held.id, held.status, held.summary, held.name)
        for effort_id, e in self._held.items():
            if effort_id not in self._saved:
                yield e.id, e.status, e.summary, e.name

    def concluded_page(self, offset: int, limit: int) -> list[Effort]:
        """Concluded efforts, the latest conclusion first."""
        return [
            self._held.get(e.id, e)
            for e in self.catalog.efforts(concluded=True, newest_first=True, offset=offset, limit=limit)
        ]

    def by_digest(self, digest: str) -> list[Effort]:
        return [self._held.get(e.id, e) for e in self.catalog.by_digest(digest)]

    def folded_upto(self) -> int:
        """The last ambient line folded into an effort (0: none), from the folded efforts' sources,
        saved or not yet: a fold is recorded once, in the effort it lands."""
        held = [folded_last(e) for e in self._held.values()]
        return max([self.catalog.folded_upto(), *held])

    def by_source_kind(self, kind: str) -> list[Effort]:
        found = {e.id: self._held.get(e.id, e) for e in self.catalog.by_source_kind(kind)}
        found.update((i, e) for i, e in self._held.items() if (e.source or {}).get("kind") == kind)
        return list(found.values())

    def changed_since(self, ts: str) -> list[Effort]:
        """Efforts created or concluded at or after ``ts``."""
        found = [self._held.get(e.id, e) for e in self.catalog.changed_since(ts)]
        found += [
            e
            for i, e in self._held.items()
            if i not in self._saved and (e.created >= ts or (e.concluded_at or "") >= ts)
        ]
        return found
