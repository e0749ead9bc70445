"""The session's small snapshots: ``session_state.json`` and ``expanded.json``, with the schema check.

``session_state.json`` carries the session's schema version. A session written
by an older ccm-tui is migrated step by step when it is opened (each step in
:data:`MIGRATIONS`); one written by a newer ccm-tui is refused with a message
that says so, before anything is read or written, so an old version never
misreads a newer session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..storage.durable import StoreError

SCHEMA_VERSION = 3


class SessionTooNew(StoreError):
    """The session was written by a newer ccm-tui, whose files this version may misread."""


def _migrate_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 changed no field: it is the first version that checks the schema when a session is
    opened (so that sessions written from now on are refused by versions that cannot read them)."""
    return data


def _migrate_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 keeps no second record of what the logs and the efforts hold (issue 32):

    * ``withdrawn`` (the newest withdrawn line ranges) goes: the marker lines in the logs are the
      record of every withdrawal, and a withdrawal appended its marker before it saved the range, so
      no range is lost (:mod:`.withdrawn` reads the markers);
    * ``ambient_folded_upto`` goes: the folded efforts' ``source.lines`` say which ambient lines are
      folded (a kill between the fold's effort and this state could make a fold land twice);
    * ``ambient_messages`` (chat messages) becomes ``ambient_lines`` (file lines, as every read and
      the search index number them). Its old value is kept as a first guess, and ``ambient_bytes``
      is set to -1 so that the next writer's start recounts the totals from ``raw.jsonl``."""
    if not data:
        return data  # a new session: nothing to carry over
    data.pop("withdrawn", None)
    data.pop("ambient_folded_upto", None)
    if "ambient_messages" in data:
        data["ambient_lines"] = data.pop("ambient_messages")
    data["ambient_bytes"] = -1
    return data


# MIGRATIONS[n] turns schema n's session_state.json into schema n + 1's.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _migrate_1_to_2, 2: _migrate_2_to_3}


def schema_of(data: dict[str, Any]) -> int:
    """The schema a ``session_state.json`` says it is (1 when it says nothing usable: the files of
    the first release carried 1, and a damaged value is read as the oldest)."""
    value = data.get("schema", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1


def migrated(data: dict[str, Any], *, where: str = "session_state.json") -> tuple[dict[str, Any], list[int]]:
    """``data`` brought up to :data:`SCHEMA_VERSION`, and the versions it went through; raises
    :class:`SessionTooNew` for a session of a newer schema."""
    version = schema_of(data)
    if version > SCHEMA_VERSION:
        raise SessionTooNew(
            f"{where}: this session was written by a newer ccm-tui (session schema {version}; this version "
            f"reads up to {SCHEMA_VERSION}): upgrade ccm-tui (pip install -U ccm-tui) to open it"
        )
    steps = []
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](dict(data))
        steps.append(version)
        version += 1
    data["schema"] = SCHEMA_VERSION
    return data, steps


USAGE_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "requests",
    "cost",
    "cached_tokens",  # read from the provider's prompt cache, when it says so
    "cache_write_tokens",
    "cached_estimate",  # a repeated prefix, when it does not
)


@dataclass
class SessionState:
    """``session_state.json``: the turn counter and small running totals."""

    schema: int = SCHEMA_VERSION
    turn: int = 0
    compaction_count: int = 0
    ambient_lines: int = 0  # raw.jsonl's file lines (every line: as reads and the index number them)
    ambient_tokens: int = 0  # tokens of its live chat (withdrawn exchanges and their markers left out)
    ambient_bytes: int = 0  # size of raw.jsonl the totals above describe (-1: to be recounted)
    ambient_window: int | None = None  # shrunk by compaction; None = configured size
    clean_shutdown: bool = True
    budget: int | None = None  # the token budget last used (for status without a model)
    encoding: str | None = None  # the tokenizer the writer counts with (readers count with it too)
    saved_at: str = ""
    history: list[dict[str, int]] = field(default_factory=list)  # per-turn context figures (bounded)
    last_effort_tool_turn: int = 0  # the last turn the model called an effort tool (core/turn/folding.py)
    # what the provider reported for this session's requests, across launches:
    # prompt_tokens, completion_tokens, requests (ints) and cost (dollars, when the model's price is known)
    usage: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionState:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        state = cls(**known)
        counts = ("turn", "compaction_count", "ambient_lines", "ambient_tokens", "last_effort_tool_turn")
        for key in counts:
            value = getattr(state, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                setattr(state, key, 0)
        if isinstance(state.ambient_bytes, bool) or not isinstance(state.ambient_bytes, int) or state.ambient_bytes < 0:
            state.ambient_bytes = -1  # describes no file: recounted
        for key in ("ambient_window", "budget"):
            value = getattr(state, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                setattr(state, key, None)
        if not isinstance(state.clean_shutdown, bool):
            state.clean_shutdown = False
        if not isinstance(state.saved_at, str):
            state.saved_at = ""
        if not isinstance(state.encoding, str):
            state.encoding = None
        if not isinstance(state.usage, dict):
            state.usage = {}
        state.usage = {
            k: v
            for k, v in state.usage.items()
            if k in USAGE_KEYS and type(v) in (int, float) and v >= 0 and (k == "cost" or type(v) is int)
        }
        if not isinstance(state.history, list):
            state.history = []
        state.history = [
            h
            for h in state.history
            if isinstance(h, dict) and all(isinstance(h.get(k), int) for k in ("turn", "ccm", "naive"))
        ]
        return state


@dataclass
class ViewState:
    """``expanded.json``: which concluded efforts are expanded and reference bookkeeping.

    ``expanded`` maps id → turns since last reference. ``summaries`` maps the ids
    of concluded efforts whose summary is in working memory → the turn they were
    last referenced (or concluded). Concluded efforts not in it are *evicted*.
    """

    expanded: dict[str, int] = field(default_factory=dict)
    summaries: dict[str, int] = field(default_factory=dict)
    last_referenced: dict[str, int] = field(default_factory=dict)  # open efforts too, for the UI

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ViewState:
        def int_map(value: Any) -> dict[str, int]:
            if not isinstance(value, dict):
                return {}
            return {str(k): int(v) for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}

        return cls(
            expanded=int_map(data.get("expanded")),
            summaries=int_map(data.get("summaries")),
            last_referenced=int_map(data.get("last_referenced")),
        )
