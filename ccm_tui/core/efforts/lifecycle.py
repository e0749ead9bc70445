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

from ...atomic_file import fsync_dir
from ..manifest.effort import CONCLUDED, OPEN, SLUG_RE, Effort, ManifestError, effort_from_dict
from ..session.session import EFFORTS_DIR, Session
from ..session.withdrawn import live
from ..storage import eventlog as ev
from ..storage.durable import StoreError, read_jsonl
from ..storage.eventlog import now_iso
from ..text.terminal import clean_name, invisible_in
from .names import MAX_NAME_CHARS, RESERVED_IDS, slug_sequence, slugify, unique_slug
from .states import REFUSALS, Action, ActionRefused, effort_state, refuse_unless_valid
from .working_context import effort_context_tokens

UNPUBLISHED_IMPORT_PREFIX = ".import-"

REOPEN_SEPARATOR = "--- Effort reopened ---"

Event = tuple[str, dict[str, Any]]  # an event to log: its name and fields (Session.log_events)


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
    session.save_manifest((ev.EFFORT_OPENED, {"effort_id": effort.id, "name": name}))
    session.view.last_referenced[effort.id] = turn
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
    session.save_manifest((ev.EFFORT_SWITCHED, {"effort_id": effort.id, "previous": previous.id if previous else None}))
    return previous


def conclude(session: Session, effort: Effort, summary: str, *, turn: int) -> None:
    """Open → concluded: the summary replaces the raw log in working memory (with its grace period)."""
    require(session, effort, Action.CONCLUDE)
    session.efforts.set_status(effort, CONCLUDED)
    effort.summary = summary
    effort.summary_tokens = session.counter.count_text(summary)
    effort.concluded_at = now_iso()
    effort.checkpoint, effort.checkpoint_upto = None, 0
    effort.summary_by = None  # a new conclusion's summary is the model's (a user's edit is in the event log)
    session.view.summaries[effort.id] = turn
    session.view.expanded.pop(effort.id, None)
    concluded = {
        "effort_id": effort.id,
        "summary": summary,
        "summary_tokens": effort.summary_tokens,
        "raw_tokens": effort.raw_tokens,
    }
    session.save_manifest((ev.EFFORT_CONCLUDED, concluded))  # the record first, the view's snapshot after
    session.save_view()


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
    session.save_manifest((ev.EFFORT_REOPENED, {"effort_id": effort.id, "reopen_count": effort.reopen_count}))
    session.save_view()
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
    restored = _referenced(session, effort_id, turn)
    if restored:
        session.log_events(*restored)
    return bool(restored)


def _referenced(session: Session, effort_id: str, turn: int) -> list[Event]:
    """:func:`mark_referenced` in memory; the event it calls for (``summary_restored``, when the
    summary was evicted), for the caller to log — an edit logs it in its own append, after its event."""
    session.view.last_referenced[effort_id] = turn
    effort = session.efforts.get(effort_id)
    if effort is None or not effort.is_concluded:
        return []
    restored = effort_id not in session.view.summaries
    session.view.summaries[effort_id] = turn
    return [(ev.SUMMARY_RESTORED, {"effort_id": effort_id})] if restored else []


# --------------------------------------------------------------------------- the user's edits
# What the model wrote about the user, corrected by the user (issue 41). The id never changes: it
# names the log, the events, the view state, the index rows and every id an agent holds over MCP;
# the name is a display field, which every reader shows and /switch NAME resolves.
def rename(session: Session, effort: Effort, name: str) -> str:
    """Give ``effort`` another name (its id stays); returns the name it had."""
    clean = clean_name(name)[:MAX_NAME_CHARS].strip()
    if not clean:
        raise ActionRefused("an effort's name needs at least one letter or digit")
    previous = effort.name
    if clean == previous:
        return previous
    effort.name = clean
    session.save_manifest((ev.EFFORT_RENAMED, {"effort_id": effort.id, "name": clean, "previous": previous}))
    return previous


def edit_summary(session: Session, effort: Effort, summary: str, *, turn: int) -> str | None:
    """The user's summary replaces the model's in context; the one it replaces stays in the event log
    (``summary_edited``'s ``replaced``). Only a concluded effort has a summary to edit. A later
    conclusion (after a reopen) writes a new summary from the whole log, and that one is the model's
    again. Returns the replaced summary."""
    text = summary.strip()
    if not effort.is_concluded:
        raise ActionRefused(f"effort '{effort.id}' is open: its summary is written when it is concluded")
    if not text:
        raise ActionRefused("a summary needs some text")
    replaced = effort.summary
    if text == replaced:
        return replaced
    effort.summary = text
    effort.summary_tokens = session.counter.count_text(text)
    effort.summary_by = "user"
    edited = {"effort_id": effort.id, "summary": text, "replaced": replaced, "summary_tokens": effort.summary_tokens}
    events: list[Event] = [(ev.SUMMARY_EDITED, edited)]
    if effort.id not in session.view.expanded:  # the corrected summary is in working memory at once
        events += _referenced(session, effort.id, turn)
    session.save_manifest(*events)  # the entry, the edit and what it brought back: one append
    session.save_view()
    return replaced


def set_pinned(session: Session, effort: Effort, pinned: bool, *, turn: int) -> bool:
    """Pin (or unpin) an effort: a pinned effort's summary stays in working memory (salience never
    evicts it; compaction drops it only when nothing else is left, and says so). Pinning an evicted
    summary brings it back. Returns whether anything changed."""
    if effort.pinned == pinned:
        return False
    effort.pinned = pinned
    events: list[Event] = [(ev.EFFORT_PINNED if pinned else ev.EFFORT_UNPINNED, {"effort_id": effort.id})]
    if pinned and effort.is_concluded:
        events += _referenced(session, effort.id, turn)
    session.save_manifest(*events)
    session.save_view()
    return True


MERGED_FROM = "merged_from"  # the key of the marker line a merge writes in the kept effort's log


def merge_lines(session: Session, other: Effort) -> list[dict[str, Any]]:
    """What a merge copies of ``other``'s log: its live chat (withdrawn exchanges and markers left
    out), each line with its own time."""
    records = [(i + 1, r) for i, r in enumerate(session.effort_log(other.id))]
    return chat_copies(r for _, r in live(records))


def merge(session: Session, other: Effort, into: Effort, summary: str | None, *, turn: int) -> int:
    """Merge ``other`` (concluded) into ``into``: ``into``'s log gets a marker line and then
    ``other``'s lines (logs only grow, so they follow ``into``'s own, each with its own time; one
    fsynced append), ``other`` points to ``into`` (``merged_into``) and leaves working memory, and
    ``into`` takes ``summary`` when it is concluded. The journal entry is the commit point: a kill
    before it leaves the lines appended and no merge recorded, and the merge run again finds its
    marker and does not append them twice. Returns the lines merged."""
    if other.id == into.id:
        raise ActionRefused(f"effort '{other.id}' cannot be merged into itself")
    if other.merged_into:
        raise ActionRefused(f"effort '{other.id}' is already merged into '{other.merged_into}'")
    if into.merged_into:
        raise ActionRefused(f"effort '{into.id}' was merged into '{into.merged_into}': merge into that one")
    lines = merge_lines(session, other)
    if not any(r.get(MERGED_FROM) == other.id for r in session.effort_log(into.id)):
        marker = {
            "role": "system",
            "content": f"--- Merged from effort {other.id} ({other.name or other.id}): {len(lines)} lines ---",
            "ts": now_iso(),
            MERGED_FROM: other.id,
        }
        session.append_effort(into, [marker, *lines])
    other.merged_into = into.id
    if summary is not None and into.is_concluded:
        into.summary = summary
        into.summary_tokens = session.counter.count_text(summary)
        into.summary_by = None
    other.pinned = False
    session.view.summaries.pop(other.id, None)
    session.view.expanded.pop(other.id, None)
    session.forget_log(into.id)
    events: list[Event] = [
        (ev.EFFORTS_MERGED, {"effort_id": other.id, "into": into.id, "lines": len(lines), "summary": summary})
    ]
    if into.is_concluded and into.id not in session.view.expanded:
        events += _referenced(session, into.id, turn)
    session.save_manifest(*events)  # the commit: the entries, the merge and what it brought back in one append
    session.save_view()
    return len(lines)


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
    effort, adopted = _import_effort(session, name, messages, summary, source, restored_at or now_iso(), reserved)
    if adopted is None:
        session.publish_effort_log(effort, messages, f"{UNPUBLISHED_IMPORT_PREFIX}{effort.id}.tmp")
        session.efforts.add(effort)
    session.save_manifest()  # the import is stored once its entry is journaled: what follows may fail
    session.view.summaries[effort.id] = session.state.turn  # the usual grace period
    try:
        _restored(session, effort)
    except (OSError, StoreError) as exc:  # a full disk: noted, caught up at the next start, not a failed import
        session.mark_unclean(f"the import of {effort.id} is stored; its view and event were not written ({exc})")
    return effort


@dataclass(frozen=True)
class Landing:
    """One transcript of :func:`land_imported_many`: what :func:`land_imported` takes."""

    name: str
    messages: list[dict[str, Any]]
    summary: str
    source: dict[str, Any]


def land_imported_many(session: Session, landings: list[Landing], *, restored_at: str | None = None) -> list[Effort]:
    """Several transcripts become concluded efforts at once (``watch``'s backfill), each as
    :func:`land_imported` lands it, with one durable point for them all: every log is written under a
    temporary name (fsynced) and renamed into place, the directory fsynced once, then one manifest
    save journals every entry, one view save and one append their events. A kill before the manifest
    save leaves published logs without entries, which the next import of the same messages takes back
    (:func:`_import_id`): nothing twice, nothing half-written."""
    restored_at = restored_at or now_iso()
    efforts: list[Effort] = []
    published = False
    for landing in landings:
        effort, adopted = _import_effort(
            session, landing.name, landing.messages, landing.summary, landing.source, restored_at, ""
        )
        if adopted is None:
            temporary = f"{UNPUBLISHED_IMPORT_PREFIX}{effort.id}.tmp"
            session.publish_effort_log(effort, landing.messages, temporary, durable_dir=False)
            session.efforts.add(effort)
            published = True
        efforts.append(effort)
    if published:
        fsync_dir(session.dir / EFFORTS_DIR)  # every rename durable before the manifest names them
    if not efforts:
        return efforts
    session.save_manifest()
    for effort in efforts:
        session.view.summaries[effort.id] = session.state.turn
    try:
        session.save_view()
        session.log_events(*(_restored_event(effort) for effort in efforts))
    except (OSError, StoreError) as exc:
        session.mark_unclean(f"{len(efforts)} imports are stored; their view and events were not written ({exc})")
    return efforts


def _import_effort(
    session: Session,
    name: str,
    messages: list[dict[str, Any]],
    summary: str,
    source: dict[str, Any],
    restored_at: str,
    reserved: str,
) -> tuple[Effort, Effort | None]:
    """The effort an import lands as, and the effort ``repair`` rebuilt that it completes (None: a new one)."""
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
    return effort, adopted


def _restored(session: Session, effort: Effort) -> None:
    session.save_view()
    session.log_events(_restored_event(effort))


def _restored_event(effort: Effort) -> tuple[str, dict[str, Any]]:
    source = effort.source or {}
    return ev.EFFORT_RESTORED, {
        "effort_id": effort.id,
        "name": effort.name,
        "summary": effort.summary,
        "source": source.get("file"),
        "format": source.get("format"),
        "sha256": source.get("sha256"),
        "turns": source.get("turns"),
        "max_turns": source.get("max_turns"),
        "summary_tokens": effort.summary_tokens,
        "raw_tokens": effort.raw_tokens,
    }


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
