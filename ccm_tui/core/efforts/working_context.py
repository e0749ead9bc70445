"""Assembling the working context: exactly the messages sent to the model this turn.

Order (DESIGN §5's layers, laid out for providers' prefix caches: what changes least first): the
system prompt (the prompt alone: the same in every request) → backgrounded open efforts' raw logs →
the in-memory concluded summaries, in the order they entered memory (a new one is appended) →
expanded efforts' raw logs → the ambient window (sliding in steps, :func:`stepped_ambient`) → the
active effort's raw log → this turn's messages → the *context note*.

Each part after the system prompt is headed by a bracketed line from the app, in a user-role message
(providers that take one system prompt hoist every system message into it: a line that changes
there would re-read the whole request). A turn in which no effort changes state only appends: the
request is byte for byte the previous one up to where the previous turn's note stood. What changes
every turn (the effort state, the budget line, how long ago each expansion was used, the recalled
lines) is in the note, last, framed as the app's, never as the user's words. A change of state
re-writes from the layer it touches (a conclusion: from the summaries on; an open: from the new
active effort on), never the system prompt or the tool definitions. :func:`cache_breakpoints` says
where a provider that takes ``cache_control`` hints should put them.

Every section is counted with the session's token counter (cached per message),
and the figures are reported per layer together with the *naive* figure: the
context if every raw log were in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..manifest.effort import Effort
from ..session.chat_line import framed_note, note_author, with_interrupted_end
from ..session.session import Session
from ..text.terminal import drop_invisible
from ..text.tokens import REPLY_PRIMING, TokenCounter, keep_head_and_tail

ACTIVE_HEAD = "[Active effort '"
LAYERS = ("system", "tools", "summaries", "recall", "ambient", "expanded", "open", "turn")


@dataclass
class Section:
    """One contiguous part of the working context, for token figures and the inspector."""

    layer: str
    title: str
    messages: list[dict[str, Any]]
    tokens: int = 0
    effort_id: str | None = None


@dataclass
class WorkingContext:
    sections: list[Section]
    tools_tokens: int
    naive: int
    layers: dict[str, int] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for section in self.sections:
            out.extend(section.messages)
        return out

    @property
    def total(self) -> int:
        return sum(self.layers.values())


def _clean(message: dict[str, Any]) -> dict[str, Any]:
    """What the provider sees of a logged line: role and content (plus tool plumbing in-turn); a reply
    that was interrupted ends saying so (the model then knows it is incomplete); an agent's note is
    framed as one, never as the user's own words."""
    out = {"role": message["role"], "content": message.get("content") or ""}
    if isinstance(out["content"], str):  # what no one sees is no instruction to the model either
        out["content"] = drop_invisible(out["content"])
    if message.get("interrupted") is True and message["role"] == "assistant":
        out["content"] = with_interrupted_end(str(out["content"]))
    if (author := note_author(message)) is not None:
        out["content"] = framed_note(author, out["content"])
    for key in ("tool_calls", "tool_call_id", "name"):
        if message.get(key):
            out[key] = message[key]
    return out


def message_cap(configured: int | None, budget: int) -> int:
    """Most tokens one logged message may take in the working context (default: budget/4)."""
    return configured or max(500, budget // 4)


def fit_message(message: dict[str, Any], cap: int | None, counter: TokenCounter) -> dict[str, Any]:
    """A logged message as the working context shows it: whole, or — when it alone is larger
    than ``cap`` tokens — its head and tail around a marker. The raw log keeps the full text."""
    if not cap:
        return message
    content, cut = keep_head_and_tail(message.get("content") or "", cap, counter, _context_marker)
    return message if not cut else {**message, "content": content}


def _context_marker(cut: int) -> str:
    return (
        f"[… {cut:,} tokens of this message are left out of the working context; the full text stays in the raw log …]"
    )


def effort_messages(
    session: Session, effort: Effort, *, read_only: bool, message_cap: int | None = None
) -> list[dict[str, Any]]:
    """An effort's raw log as chat messages, headed by a system line that names it.

    If an open effort was checkpointed by compaction, its oldest part is replaced
    by the checkpoint summary (the raw log on disk is untouched).
    """
    log = session.effort_log(effort.id)
    if read_only:
        head = f"[Expanded concluded effort '{effort.id}' — raw log, read-only. Summary: {effort.summary or '—'}]"
    elif effort.active:
        head = f"{ACTIVE_HEAD}{effort.id}' — its conversation so far]"
    else:
        head = f"[Backgrounded open effort '{effort.id}' — its conversation so far]"
    messages = [{"role": "user", "content": head}]  # (a system line: some providers hoist it to the top)
    start = 0
    if effort.checkpoint and 0 < effort.checkpoint_upto <= len(log):
        start = effort.checkpoint_upto
        messages.append(
            {
                "role": "user",
                "content": f"[Checkpoint summary of the first {start} messages of '{effort.id}': {effort.checkpoint}]",
            }
        )
    messages.extend(
        fit_message(_clean(m), message_cap, session.counter)
        for m in log[start:]
        if m.get("role") in ("user", "assistant", "system")
    )
    return messages


def effort_context_tokens(session: Session, effort: Effort, message_cap: int | None) -> int:
    """Tokens an open or expanded effort takes in the working context: its section, counted as the
    meter counts it (head line, checkpoint, messages fitted to the cap). The expansion banner, the
    sidebar and the meter all give this one figure."""
    messages = effort_messages(session, effort, read_only=effort.is_concluded, message_cap=message_cap)
    return sum(session.counter.count_message(m) for m in messages)


SUMMARIES_HEAD = "[Concluded efforts in working memory — their summaries; expand_effort reads one's whole log]"
AMBIENT_HEAD = "[Ambient chat — the latest exchanges that belong to no effort]"


def summaries_block(session: Session) -> str:
    """The in-memory summaries, in the order they entered memory (a new one comes last: the text before
    it stays byte for byte what the previous request sent)."""
    summaries = session.summaries_in_memory()
    if not summaries:
        return ""
    lines = [SUMMARIES_HEAD]
    lines += [f"- {e.id}: {e.summary}" for e in summaries]
    return "\n".join(lines)


def efforts_block(session: Session) -> str:
    """The effort state as the context note gives it (which efforts are open and which is active, which
    are expanded, how many summaries left memory): it changes only with the state itself, but sits in the
    note, last, so that a change of state breaks nothing before it."""
    open_efforts = session.efforts.open_efforts()
    evicted = session.evicted_count
    lines = [STATE_HEAD]
    if open_efforts:
        for e in open_efforts:
            lines.append(f"- open: {e.id}{' (ACTIVE: new messages go here)' if e.active else ' (backgrounded)'}")
    else:
        lines.append("- no open effort: messages go to the ambient log")
    for eid in session.view.expanded:
        lines.append(f"- expanded (read-only): {eid}")
    if evicted:
        lines.append(f"- {evicted} older concluded effort(s) are not shown here; find them with search_efforts.")
    else:
        lines.append("- older concluded efforts, if any, can be found with search_efforts.")
    return "\n".join(lines)


NOTE_TITLE = "Context note (changes every turn)"
NOTE_HEAD = "[Context note from ccm-tui, not written by the user: the current state of your working context]"


def note_lines(session: Session) -> list[str]:
    """The lines of the context note that change from turn to turn (the budget line comes after)."""
    return [
        f"- expanded {eid}: {idle} turn(s) since last reference (collapses by itself after a few more)"
        for eid, idle in session.view.expanded.items()
    ]


def is_note(message: dict[str, Any]) -> bool:
    """The context note (a user-role message the app writes), recognised by its first line."""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(NOTE_HEAD)


STATE_HEAD = "Effort state:"


def cache_breakpoints(messages: list[dict[str, Any]]) -> list[int]:
    """Where a provider that takes ``cache_control`` hints should mark the request (indices, at most the
    4 a request may carry): the system message (the tool definitions and the prompt before it), the
    last message before the context note (the history, which the next request reads back), the
    request's last message when the turn already has tool rounds (the next round reads it), and the
    ends of the layers before those a change of effort state rewrites first (the summaries, the
    ambient window, the active effort: found by their head lines), so that a change re-writes from
    there and not from the top. System messages after the first are never marked: some providers move
    them into the system prompt."""
    if not messages:
        return []
    last = len(messages) - 1
    note = next((i for i in range(last, -1, -1) if is_note(messages[i])), None)
    end = note - 1 if note is not None else last
    heads = [i for i in range(1, end + 1) if _is_layer_head(messages[i])]
    rounds = [last] if note is not None and last > note + 1 and messages[last].get("role") == "tool" else []
    marks: list[int] = [0] if messages[0].get("role") == "system" else []
    for index in [end, *rounds, *(head - 1 for head in reversed(heads))]:
        if len(marks) >= 4:
            break
        if 0 < index <= last and index not in marks and messages[index].get("role") != "system":
            marks.append(index)
    return sorted(marks)


def _is_layer_head(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith((SUMMARIES_HEAD, AMBIENT_HEAD, ACTIVE_HEAD))
    )


def ambient_steps(window: int) -> int:
    """How many exchanges the ambient window drops at once when it is full (a third of it, at least
    one): it slides in steps, so that most turns only append to it (see :func:`stepped_ambient`)."""
    return max(1, window // 3)


def stepped_ambient(numbered: list[tuple[int, dict[str, Any]]], window: int) -> list[tuple[int, dict[str, Any]]]:
    """The ambient window as the request shows it. ``numbered``: the session's window (its last ``window``
    exchanges, each message with its log line). While the window is not full, all of it; once it is, the
    exchanges from the first whose line is on a fixed grid (a step of :func:`ambient_steps` exchanges,
    counted as two log lines each) at or after the window's start. So the start stays put while
    exchanges are appended and jumps a step at a time: most turns re-read nothing before their new
    exchange (a window that slid by one exchange a turn would re-read itself every turn). It shows at
    most ``window`` exchanges and about ``window - ambient_steps(window)`` at least."""
    starts = [n for n, (_line, m) in enumerate(numbered) if m.get("role") == "user"]
    if len(starts) < window or window <= 1:
        return numbered
    step = 2 * ambient_steps(window)  # in log lines
    first = numbered[starts[0]][0]
    floor = -(-(first - 1) // step) * step + 1  # the first line of the grid at or after the window's start
    for index in starts:
        if numbered[index][0] >= floor:
            return numbered[index:]
    return numbered[starts[-1] :]


def shown_ambient(session: Session) -> list[tuple[int, dict[str, Any]]]:
    """The ambient exchanges the request shows, each message with its log line: the session's window,
    stepped (see :func:`stepped_ambient`). What the context lays out and what recall counts as already
    in the request."""
    return stepped_ambient(session.ambient_numbered(), session.ambient_window)


def budget_step(budget: int) -> int:
    """How coarsely the budget line rounds (the note it is in changes rarely within a turn)."""
    return 100 if budget < 10_000 else 500


def budget_line(used: int, budget: int) -> str:
    """The line that tells the model its budget and how much of it the working context uses."""
    step = budget_step(budget)
    rounded = max(step, int(round(used / step)) * step)
    return f"- budget: your working context uses about {rounded:,} of a {budget:,}-token budget."


def assemble(
    session: Session,
    system_prompt: str,
    turn_messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None = None,
    counter: TokenCounter | None = None,
    message_cap: int | None = None,
    budget: int | None = None,
    notes: tuple[str, ...] = (),
    recalled: str = "",
) -> WorkingContext:
    """Build the working context for the next request and count it, layer by layer.

    ``message_cap`` bounds how many tokens one *logged* message may take in the context
    (a giant pasted log or agent reply would otherwise crowd out everything else and
    could not be compacted away while its effort is open). ``notes`` are further lines for the
    effort state (e.g. that this model has no tools). The context note, last, gives the effort state,
    how long ago each expansion was used and, with ``budget``, the budget and what the context uses of
    it (rounded); ``recalled`` (logged lines that answer this turn's message, :mod:`.recall`) closes
    it, as its own layer.
    """
    counter = counter or session.counter
    state_text = "\n".join([efforts_block(session), *notes])
    system = {"role": "system", "content": system_prompt.rstrip()}

    recall_part = f"\n\n{recalled}" if recalled else ""
    volatile = note_lines(session)

    def note_message(budget_note: str = "") -> dict[str, Any]:
        lines = [NOTE_HEAD, state_text, *volatile, *([budget_note] if budget_note else [])]
        return {"role": "user", "content": "\n".join(lines) + recall_part}

    def count_note(message: dict[str, Any]) -> int:
        """Its text and the recalled lines counted apart: the text repeats turn after turn (its count
        is cached), the recall is new each time (one more token at most than counted whole)."""
        content = str(message["content"])
        own = {**message, "content": content[: len(content) - len(recall_part)]} if recall_part else message
        return counter.count_message(own) + counter.count_text(recall_part)

    def effort_section(kind: str, title: str, effort: Effort, *, read_only: bool) -> Section:
        messages = effort_messages(session, effort, read_only=read_only, message_cap=message_cap)
        return Section(kind, f"{title}: {effort.id}", messages, effort_id=effort.id)

    sections = [Section("system", "System prompt", [system])]
    open_efforts = session.efforts.open_efforts()
    sections += [effort_section("open", "Open", e, read_only=False) for e in open_efforts if not e.active]
    summaries_text = summaries_block(session)
    if summaries_text:
        sections.append(Section("summaries", "Summaries", [{"role": "user", "content": summaries_text}]))
    sections += [effort_section("expanded", "Expanded", e, read_only=True) for e in session.expanded_efforts()]
    ambient = [fit_message(_clean(m), message_cap, counter) for _line, m in shown_ambient(session)]
    if ambient:
        exchanges = sum(1 for m in ambient if m["role"] == "user")
        title = f"Ambient window ({exchanges} of the last {session.ambient_window} exchanges)"
        sections.append(Section("ambient", title, [{"role": "user", "content": AMBIENT_HEAD}, *ambient]))
    sections += [effort_section("open", "Active", e, read_only=False) for e in open_efforts if e.active]
    note = Section("system", NOTE_TITLE, [note_message()])
    sections.append(note)
    if turn_messages:
        sections.append(Section("turn", "This turn", [_clean(m) for m in turn_messages]))

    for section in sections:
        if section is not note:
            section.tokens = sum(counter.count_message(m) for m in section.messages)
    note.tokens = count_note(note.messages[0])
    tools_tokens = counter.count_json(tools) if tools else 0
    if budget:
        used = sum(section.tokens for section in sections) + tools_tokens + REPLY_PRIMING
        note.messages[0] = note_message(budget_line(used, budget))
        note.tokens = count_note(note.messages[0])

    # The few tokens that prime the reply are part of every request: the system section carries
    # them, so that the sections add up to the meter's total (less the tool definitions).
    sections[0].tokens += REPLY_PRIMING

    layers = {name: 0 for name in LAYERS}
    for section in sections:
        layers[section.layer] += section.tokens
    # The recalled lines are in the note: reported as their own layer.
    layers["recall"] = counter.count_text(recalled) if recalled else 0
    layers["system"] -= layers["recall"]
    layers["tools"] = tools_tokens

    turn_tokens = layers["turn"]
    fixed = layers["system"] + tools_tokens
    naive = fixed + session.state.ambient_tokens + session.effort_raw_total + turn_tokens
    naive = max(naive, sum(layers.values()))
    return WorkingContext(sections=sections, tools_tokens=tools_tokens, naive=naive, layers=layers)
