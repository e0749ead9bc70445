"""The effort lifecycle: the only code that changes an effort's state and logs its effort events.

The states and which actions are valid in each are drawn once, in :mod:`.states` (the table this
module enforces through :func:`require`). On disk an effort is only ``open`` or ``concluded``
(:mod:`..manifest.effort`); *active*, *expanded* and *evicted* are the session's view of it. Imports
and restores land efforts concluded.

Every transition here updates the manifest or the view state in memory, saves
the snapshot it changed, and logs its event (names in :mod:`..storage.eventlog`).
Callers — the tools (the model's and the user's actions), salience (decay,
eviction), compaction, restore landing — decide *when*; this module decides
*what changes*. :func:`efforts_from_events` reads the same events back, for
``repair``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..manifest.effort import CONCLUDED, OPEN, SLUG_RE, Effort, ManifestError, effort_from_dict
from ..session.session import Session
from ..storage import eventlog as ev
from ..storage.durable import StoreError, read_jsonl
from ..storage.eventlog import now_iso
from ..text.terminal import clean_name, invisible_in
from .names import MAX_NAME_CHARS, RESERVED_IDS, slug_sequence, slugify, unique_slug
from .states import REFUSALS, Action, ActionRefused, effort_state, refuse_unless_valid
from .working_context import effort_context_tokens

UNPUBLISHED_IMPORT_PREFIX = ".import-"

REOPEN_SEPARATOR = "--- Effort reopened ---"


def require(session: Session, effort: Effort, action: Action) -> None:
    """Refuse (:class:`ActionRefused`) an action the state table does not allow for the effort now."""
    refuse_unless_valid(effort.id, effort_state(session, effort), action)


# --------------------------------------------------------------------------- open efforts
class _TakenIds:
    """Ids a new effort may not take: known ones, and any with a log on disk the manifest does not
    name (a damaged manifest, a hand edit): a new effort never appends to an old conversation."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def __contains__(self, effort_id: object) -> bool:
        return effort_id in self.session.efforts or os.path.lexists(self.session.effort_path(str(effort_id)))


def open_effort(session: Session, name: str, *, turn: int) -> Effort:
    """Create an effort from the name the model (or the user) gave; it becomes the active one. A name
    whose id is reserved (``ambient``, ``notes``: see RESERVED_IDS) is refused."""
    if (hidden := invisible_in(name)) is not None:
        raise ActionRefused(f"the effort name {clean_name(name)!r} cannot be used: {hidden}")
    name = clean_name(name)[:MAX_NAME_CHARS]  # never a control sequence replayed by every later status
    if (slug := slugify(name)) in RESERVED_IDS:
        raise ActionRefused(f"'{slug}' is reserved: it names {RESERVED_IDS[slug]}; give the effort another name")
    effort = Effort(id=unique_slug(name, _TakenIds(session)), name=name, status=OPEN, created=now_iso())
    session.efforts.add(effort)
    session.efforts.set_active(effort)
    session.effort_path(effort.id).touch()
    session.effort_log(effort.id)
    session.save_manifest()
    session.view.last_referenced[effort.id] = turn
    session.log_event(ev.EFFORT_OPENED, effort_id=effort.id, name=name)
    return effort


def chat_copies(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user and assistant messages of ``records`` as another effort's log takes them: role, text
    and time (a tool-call record is left out: a copy without its call would mean nothing)."""
    return [
        {"role": r["role"], "content": r["content"], "ts": r.get("ts") or now_iso()}
        for r in records
        if r.get("role") in ("user", "assistant") and isinstance(r.get("content"), str)
    ]


def carry_over(session: Session, effort: Effort, messages: list[dict[str, Any]], source: dict[str, Any]) -> None:
    """A just-opened effort starts with ``messages``: a topic's exchanges copied from the effort it
    began in (``source`` says which lines; that effort's raw log keeps them, as raw logs only grow)."""
    session.append_effort(effort, messages)
    effort.source = source
    session.save_manifest()


def switch_to(session: Session, effort: Effort) -> Effort | None:
    """Make another open effort the active one; returns the previously active effort."""
    require(session, effort, Action.SWITCH)
    previous = session.efforts.active
    session.efforts.set_active(effort)
    session.save_manifest()
    session.log_event(ev.EFFORT_SWITCHED, effort_id=effort.id, previous=previous.id if previous else None)
    return previous


def conclude(session: Session, effort: Effort, summary: str, *, turn: int) -> None:
    """Open → concluded: the summary replaces the raw log in working memory (with its grace period)."""
    require(session, effort, Action.CONCLUDE)
    session.efforts.set_status(effort, CONCLUDED)
    effort.summary = summary
    effort.summary_tokens = session.counter.count_text(summary)
    effort.concluded_at = now_iso()
    effort.checkpoint, effort.checkpoint_upto = None, 0
    session.view.summaries[effort.id] = turn
    session.view.expanded.pop(effort.id, None)
    session.save_manifest()
    session.save_view()
    session.log_event(
        ev.EFFORT_CONCLUDED,
        effort_id=effort.id,
        summary=summary,
        summary_tokens=effort.summary_tokens,
        raw_tokens=effort.raw_tokens,
    )


def reopen(session: Session, effort: Effort, *, turn: int) -> str | None:
    """Concluded → open and active; the log gets a separator line. Returns the prior summary.

    The summary stays in the manifest until the effort is concluded again, when
    it is rewritten from the whole log (original and new messages)."""
    require(session, effort, Action.REOPEN)
    prior = effort.summary
    session.efforts.set_status(effort, OPEN)
    session.efforts.set_active(effort)
    effort.reopen_count += 1
    session.view.expanded.pop(effort.id, None)
    session.view.summaries.pop(effort.id, None)
    session.view.last_referenced[effort.id] = turn
    session.forget_log(effort.id)
    session.append_effort(effort, [{"role": "system", "content": REOPEN_SEPARATOR, "ts": now_iso()}])
    session.effort_log(effort.id)
    session.save_manifest()
    session.save_view()
    session.log_event(ev.EFFORT_REOPENED, effort_id=effort.id, reopen_count=effort.reopen_count)
    return prior


def checkpoint(effort: Effort, text: str, upto: int) -> None:
    """Record a compaction checkpoint of an open effort's first ``upto`` log lines.

    Compaction saves the manifest and logs ``compaction_complete`` with its steps
    once it has finished, so one run is one event, not one per checkpoint."""
    effort.checkpoint, effort.checkpoint_upto = text, upto


# --------------------------------------------------------------------------- view states
@dataclass(frozen=True)
class Expansion:
    tokens: int
    already: bool


def expand(session: Session, effort: Effort, *, turn: int, message_cap: int | None = None) -> Expansion:
    """Bring a concluded effort's raw log back into working context (read-only).

    ``tokens`` is what the expansion adds to the working context, counted as the meter's expanded
    layer counts it (with the context's per-message cap)."""
    require(session, effort, Action.EXPAND)
    already = effort.id in session.view.expanded
    session.view.expanded[effort.id] = 0
    session.view.summaries[effort.id] = turn
    tokens = effort_context_tokens(session, effort, message_cap)
    session.save_view()
    if not already:
        session.log_event(ev.EFFORT_EXPANDED, effort_id=effort.id, tokens=tokens)
    return Expansion(tokens=tokens, already=already)


def collapse(session: Session, effort_id: str, *, reason: str = "tool") -> None:
    """Drop an expansion (the collapse tool, decay and compaction all come here)."""
    effort = session.efforts.get(effort_id)
    if effort is None or effort_id not in session.view.expanded:
        raise ActionRefused(REFUSALS[Action.COLLAPSE].format(id=effort_id))
    require(session, effort, Action.COLLAPSE)
    session.view.expanded.pop(effort_id, None)
    session.forget_log(effort_id)
    session.save_view()
    session.log_event(ev.EFFORT_COLLAPSED, effort_id=effort_id, reason=reason)


def evict_summary(session: Session, effort_id: str, **why: Any) -> None:
    """A concluded summary leaves working memory (it stays on disk and in the search index).

    The caller saves ``expanded.json`` (salience and compaction batch their changes)."""
    session.view.summaries.pop(effort_id, None)
    session.log_event(ev.SUMMARY_EVICTED, effort_id=effort_id, **why)


def mark_referenced(session: Session, effort_id: str, turn: int) -> bool:
    """A turn referenced an effort: note when, and bring an evicted summary back.

    Returns True when the summary was evicted and is now back in working memory."""
    session.view.last_referenced[effort_id] = turn
    effort = session.efforts.get(effort_id)
    if effort is None or not effort.is_concluded:
        return False
    restored = effort_id not in session.view.summaries
    if restored:
        session.log_event(ev.SUMMARY_RESTORED, effort_id=effort_id)
    session.view.summaries[effort_id] = turn
    return restored


# --------------------------------------------------------------------------- imports
def land_imported(
    session: Session,
    name: str,
    messages: list[dict[str, Any]],
    summary: str,
    source: dict[str, Any],
    *,
    restored_at: str | None = None,
    reserved: str = "",
) -> Effort:
    """A transcript from another agent becomes a concluded effort, its summary in working memory.

    Atomic: the log is written under a temporary name and renamed into place just
    before the manifest names it, so the manifest never points at a missing file
    and a kill leaves at most an unpublished log. Such a log (no manifest entry)
    is replaced by the next import of the same messages, never appended to or
    duplicated; a different file under the chosen id is never touched. A reserved id is not taken
    (the next one is) unless it is ``reserved``: the notes effort's own."""
    restored_at = restored_at or now_iso()
    name = clean_name(name) or "imported"
    adopted = _adopted_by_repair(session, name, messages)
    if adopted is not None:
        # killed after its log was published, then `repair` listed the bare file: this import completes it
        effort = adopted
        effort.summary, effort.name, effort.source = summary, name, source
        effort.created, effort.concluded_at = effort.created or restored_at, restored_at
    else:
        effort = Effort(
            id=_import_id(session, name, messages, reserved),
            status=CONCLUDED,
            summary=summary,
            name=name,
            created=restored_at,
            concluded_at=restored_at,
            source=source,
        )
    effort.summary_tokens = session.counter.count_text(summary)
    if adopted is None:
        session.publish_effort_log(effort, messages, f"{UNPUBLISHED_IMPORT_PREFIX}{effort.id}.tmp")
        session.efforts.add(effort)
    session.save_manifest()  # the import is stored once its entry is journaled: what follows may fail
    session.view.summaries[effort.id] = session.state.turn  # the usual grace period
    try:
        _restored(session, effort, name, summary, source)
    except (OSError, StoreError) as exc:  # a full disk: noted, caught up at the next start, not a failed import
        session.mark_unclean(f"the import of {effort.id} is stored; its view and event were not written ({exc})")
    return effort


def _restored(session: Session, effort: Effort, name: str, summary: str, source: dict[str, Any]) -> None:
    session.save_view()
    session.log_event(
        ev.EFFORT_RESTORED,
        effort_id=effort.id,
        name=name,
        summary=summary,
        source=source.get("file"),
        format=source.get("format"),
        sha256=source.get("sha256"),
        turns=source.get("turns"),
        max_turns=source.get("max_turns"),
        summary_tokens=effort.summary_tokens,
        raw_tokens=effort.raw_tokens,
    )


LOST_SUMMARY = "(summary lost in a repair; the raw log is intact — expand to read it)"


def _adopted_by_repair(session: Session, name: str, messages: list[dict[str, Any]]) -> Effort | None:
    """An effort ``repair`` rebuilt from its log file alone (no provenance, a placeholder summary)
    whose log holds exactly these messages: an import killed between publishing its log and
    saving the manifest. Its id is one the import would have chosen, so only those are looked at."""
    for effort_id in slug_sequence(name):
        effort = session.efforts.get(effort_id)
        if effort is None:
            return None
        placeholder = effort.source is None and (effort.summary or "").startswith(LOST_SUMMARY)
        if placeholder and _same_messages(session.effort_path(effort.id), messages):
            return effort
    return None


def remove_unpublished_imports(efforts_dir: Path) -> None:
    """Temporary logs of imports killed before their rename (at the start, with the session lock)."""
    if not efforts_dir.is_dir():
        return
    for leftover in efforts_dir.glob(UNPUBLISHED_IMPORT_PREFIX + "*.tmp"):
        leftover.unlink(missing_ok=True)


def _import_id(session: Session, name: str, messages: list[dict[str, Any]], reserved: str = "") -> str:
    """A free id for the import; a log left without a manifest entry by a killed import of
    the same messages gives its id back, any other existing file keeps its own. A reserved id is
    skipped ("ambient" → "ambient-2") unless it is ``reserved`` (the notes effort takes "notes")."""
    for effort_id in slug_sequence(name):
        if effort_id in session.efforts or (effort_id in RESERVED_IDS and effort_id != reserved):
            continue
        path = session.effort_path(effort_id)
        if not os.path.lexists(path) or _same_messages(path, messages):
            return effort_id
    raise AssertionError("unreachable: slug_sequence never ends")


def _same_messages(path: Path, messages: list[dict[str, Any]]) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    records = read_jsonl(path).records
    return [(r.get("role"), r.get("content")) for r in records] == [(m["role"], m["content"]) for m in messages]


# --------------------------------------------------------------------------- reading events back
def _restored_source(record: dict[str, Any]) -> dict[str, Any] | None:
    """An import's provenance from its ``effort_restored`` event, with the content hash that makes
    importing the same transcript again idempotent (so ``repair`` keeps it)."""
    source: dict[str, Any] = {}
    for key, field_name, kind in (("file", "source", str), ("format", "format", str), ("sha256", "sha256", str)):
        if isinstance(record.get(field_name), kind):
            source[key] = record[field_name]
    for key in ("turns", "max_turns"):
        if isinstance(record.get(key), int) and not isinstance(record.get(key), bool):
            source[key] = record[key]
    return source or None


def efforts_from_events(records: Iterable[dict[str, Any]]) -> dict[str, Effort]:
    """Replay the lifecycle events of a session into manifest entries (``repair``)."""
    efforts: dict[str, Effort] = {}
    active: str | None = None
    for record in records:
        kind = record.get("event")
        if kind == ev.EFFORTS_SAVED:  # whole entries, as the manifest would have them
            active = _saved_entries(record.get("entries"), efforts, active)
            continue
        effort_id = record.get("effort_id")
        if not isinstance(effort_id, str) or not SLUG_RE.fullmatch(effort_id):
            continue
        effort = efforts.get(effort_id)
        ts = str(record.get("ts", ""))
        if kind == ev.EFFORT_OPENED:
            efforts[effort_id] = Effort(
                id=effort_id, name=str(record.get("name") or effort_id), status=OPEN, created=ts
            )
            active = effort_id
        elif kind == ev.EFFORT_RESTORED:
            efforts[effort_id] = Effort(
                id=effort_id,
                name=str(record.get("name") or effort_id),
                status=CONCLUDED,
                summary=_text_or_none(record.get("summary")),
                created=ts,
                concluded_at=ts,
                source=_restored_source(record),
            )
        elif effort is None:
            continue
        elif kind == ev.EFFORT_CONCLUDED:
            effort.status = CONCLUDED
            effort.summary = _text_or_none(record.get("summary")) or effort.summary
            effort.concluded_at = ts
            if active == effort_id:
                active = None
        elif kind == ev.EFFORT_REOPENED:
            effort.status = OPEN
            effort.reopen_count += 1
            active = effort_id
        elif kind == ev.EFFORT_SWITCHED:
            active = effort_id
    for effort in efforts.values():
        effort.active = effort.id == active and effort.status == OPEN
    return efforts


def _saved_entries(entries: Any, efforts: dict[str, Effort], active: str | None) -> str | None:
    for i, entry in enumerate(entries if isinstance(entries, list) else ()):
        try:
            effort = effort_from_dict(entry, "events.jsonl", i)
        except ManifestError:
            continue
        efforts[effort.id] = effort
        if effort.active:
            active = effort.id
        elif active == effort.id:
            active = None
    return active


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
