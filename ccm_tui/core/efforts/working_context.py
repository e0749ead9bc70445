"""Assembling the working context: exactly the messages sent to the model this turn.

Order (DESIGN §5, laid out for providers' prefix caches): system prompt (+ tool guidance, the
effort state, the in-memory concluded summaries in the order they entered memory, a line saying
older summaries are searchable) → ambient window → expanded efforts' raw logs → backgrounded open
efforts' raw logs → active effort's raw log → the *context note* → this turn's messages.

Everything before the context note changes only when the effort state changes (an effort opens,
concludes, is expanded, collapsed or evicted, a summary is rewritten) or the conversation grows at
its end, so a request is byte for byte the previous one's prefix up to where the previous turn's
note stood. What changes every turn (the budget line, how long ago each expansion was used, the
recalled lines) is in the note, a user-role message (providers that take one system message hoist
every system message into it: a changing system line would re-read the whole request) framed as
the app's, never as the user's words. :func:`cache_breakpoints` says where a provider that takes
``cache_control`` hints should put them.

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
        head = f"[Active effort '{effort.id}' — its conversation so far]"
    else:
        head = f"[Backgrounded open effort '{effort.id}' — its conversation so far]"
    messages = [{"role": "system", "content": head}]
    start = 0
    if effort.checkpoint and 0 < effort.checkpoint_upto <= len(log):
        start = effort.checkpoint_upto
        messages.append(
            {
                "role": "system",
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


def summaries_block(session: Session) -> str:
    summaries = session.summaries_in_memory()
    if not summaries:
        return ""
    lines = ["## Concluded efforts in working memory (summaries)"]
    lines += [f"- {e.id}: {e.summary}" for e in summaries]
    return "\n".join(lines)


def efforts_block(session: Session) -> str:
    """The effort state as the system message gives it: what changes only with the state itself (which
    efforts are open and which is active, which are expanded, how many summaries left memory)."""
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


STATE_HEAD = "## Effort state"


def system_split(messages: list[dict[str, Any]]) -> int | None:
    """Where the system message's stable head (the prompt, the same in every request) ends and the effort
    state begins: a provider that caches by breakpoint keeps the head cached when an effort changes state."""
    content = messages[0].get("content") if messages and messages[0].get("role") == "system" else None
    if not isinstance(content, str):
        return None
    at = content.find("\n\n" + STATE_HEAD)
    return at + 2 if at > 0 else None


def cache_breakpoints(messages: list[dict[str, Any]]) -> list[int]:
    """Where a provider that takes ``cache_control`` hints should mark the request (indices, at most 3
    of the 4 a request may carry): the system message (the tool definitions and the stable prompt before
    it), the last conversation message before the context note (the stable prefix, which the next
    request reads back), and the request's last message when the turn already has tool rounds (the
    next round reads it). System messages after the first are left unmarked: some providers move them
    into the system prompt."""
    marks: list[int] = []  # (the system message's hint goes on its stable head: system_split)
    if messages and messages[0].get("role") == "system":
        marks.append(0)
    note = next((i for i in range(len(messages) - 1, -1, -1) if is_note(messages[i])), None)
    end = note if note is not None else len(messages) - 1
    history = next((i for i in range(end - 1, 0, -1) if messages[i].get("role") != "system"), None)
    if history is not None:
        marks.append(history)
    last = len(messages) - 1
    if note is not None and last > note + 1 and messages[last].get("role") == "tool" and last not in marks:
        marks.append(last)
    return marks


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
    effort state (e.g. that this model has no tools: they change rarely). With ``budget`` the
    context note gives the budget and what the context uses of it (rounded); ``recalled`` (logged
    lines that answer this turn's message, :mod:`.recall`) closes the note, as its own layer.
    The note stands just before this turn's messages (at the end when there are none).
    """
    counter = counter or session.counter
    state_text = "\n".join([efforts_block(session), *notes])
    summaries_text = summaries_block(session)
    text = system_prompt.rstrip() + "\n\n" + state_text
    text += f"\n\n{summaries_text}" if summaries_text else ""
    system = {"role": "system", "content": text}

    recall_part = f"\n\n{recalled}" if recalled else ""
    volatile = note_lines(session)

    def note_message(budget_note: str = "") -> dict[str, Any]:
        lines = [NOTE_HEAD, *volatile, *([budget_note] if budget_note else [])]
        return {"role": "user", "content": "\n".join(lines) + recall_part}

    def count_note(message: dict[str, Any]) -> int:
        """Its text and the recalled lines counted apart: the text repeats turn after turn (its count
        is cached), the recall is new each time (one more token at most than counted whole)."""
        content = str(message["content"])
        own = {**message, "content": content[: len(content) - len(recall_part)]} if recall_part else message
        return counter.count_message(own) + counter.count_text(recall_part)

    sections = [Section("system", "System prompt", [system])]
    ambient = [fit_message(_clean(m), message_cap, counter) for m in session.ambient_messages()]
    if ambient:
        sections.append(Section("ambient", f"Ambient window (last {session.ambient_window} exchanges)", ambient))
    for effort in session.expanded_efforts():
        sections.append(
            Section(
                "expanded",
                f"Expanded: {effort.id}",
                effort_messages(session, effort, read_only=True, message_cap=message_cap),
                effort_id=effort.id,
            )
        )
    open_efforts = session.efforts.open_efforts()
    for effort in sorted(open_efforts, key=lambda e: e.active):  # backgrounded first, active last
        title = f"{'Active' if effort.active else 'Open'}: {effort.id}"
        sections.append(
            Section(
                "open",
                title,
                effort_messages(session, effort, read_only=False, message_cap=message_cap),
                effort_id=effort.id,
            )
        )
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
    # The summaries are inside the system message, the recalled lines in the note: both are reported
    # as their own layers.
    summaries_tokens = counter.count_text(summaries_text) if summaries_text else 0
    layers["summaries"] = summaries_tokens
    layers["recall"] = counter.count_text(recalled) if recalled else 0
    layers["system"] -= summaries_tokens + layers["recall"]
    layers["tools"] = tools_tokens

    turn_tokens = layers["turn"]
    fixed = layers["system"] + tools_tokens
    naive = fixed + session.state.ambient_tokens + session.effort_raw_total + turn_tokens
    naive = max(naive, sum(layers.values()))
    return WorkingContext(sections=sections, tools_tokens=tools_tokens, naive=naive, layers=layers)
