"""aider chat history (``.aider.chat.history.md``).

One file appends many sessions, each opened by ``# aider chat started at ...``.
User input is a run of ``#### `` lines; aider's own messages are ``> `` lines;
everything else is assistant markdown. Traps handled here:

* aider ends every input line with two spaces and puts a blank line between
  inputs, so the lines of one (multi-line, pasted) input follow each other
  directly; the two spaces also tell input apart from assistant ``#### ``
  headings. A history whose trailing spaces were stripped (and blank lines
  put between all ``####`` lines, as Markdown formatters do: the "old style")
  has lost where one input ends: a run of input lines separated only by blank
  lines is one message. In both styles input never directly follows prose.
* Slash commands are logged as input. aider reads a command only from the
  first line of an input, and the command owns the whole input: a pasted
  prompt with a line starting ``/help`` or ``/settings`` is one message, and
  the lines under ``/add a`` (more paths) are its argument. (In the old style
  a command line counts at the start of a run or after another command.)
  Bare commands (``/add``, ``/clear``...) are not turns; ``/ask``, ``/code``,
  ``/architect`` and ``/context`` with a request are, and the echo of that
  request as the next input is dropped. ``/help <question>`` goes to aider's
  documentation bot: neither it nor the answer is part of the conversation.
  ``/copy-context <instructions>`` only copies the context to the clipboard.
* ``#### <blank>`` records an empty input: nothing was sent.
* Architect mode copies the architect's answer back as input for the editor
  model; input equal to the preceding assistant answer is such an echo.
* A request re-sent after ``/clear`` or ``/reset`` in the same session joins the
  turn it repeats instead of counting as a new one (``/code X`` then ``/clear``
  then ``X``: one turn). A session boundary always
  ends a turn, and so does anything between two requests (aider messages such
  as a provider error, a command): a request that got no answer is still a turn,
  its error recorded as the agent's response.

Artifacts: ``> Applied edit to X`` (edited, or created when the edit block had an
empty SEARCH part), ``> Create new file?`` confirmations (created), and
``/add``, ``/read-only``, ``> Added X to the chat`` and "Add file to the chat?"
confirmations (read). Files added between turns belong to the next turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ccm_tui.restore.formats._aider_input import (
    BLANK_INPUT,
    COMMAND,
    CONFIRMATION_ECHO,
    REQUEST_COMMANDS,
    Segment,
    split_run,
)
from ccm_tui.restore.formats._common import TurnBuilder, split_lines, squash
from ccm_tui.restore.turns import ArtifactAction, ParsedTranscript

NAME = "aider"

_SESSION = re.compile(r"^# aider chat started at ")
_INPUT = re.compile(r"^####(?: |$)")
_INFO = re.compile(r"^>(?: |$)")
_FILE_COMMANDS = frozenset({"add", "read-only"})
_RESET_COMMANDS = frozenset({"clear", "reset"})
_APPLIED = re.compile(r"^Applied edit to (?P<path>.+)$")
_ADDED = re.compile(r"^Added (?P<path>.+?) to the chat(?: \(read-only\))?\.?$")
_ALLOW_CREATION = re.compile(r"^Allow creation of new file (?P<path>.+?)\?(?P<answer>.*)$")
_CONFIRM_CREATE = re.compile(r"^Create new file\?(?P<answer>.*)$")
_CONFIRM_ADD = re.compile(
    r"^Add (?:file|these files) to the chat\?(?P<answer>.*)$"
)  # "Add URL to the chat?" adds no file
_ERROR = re.compile(
    r"(?i)\b(?:\w*error|exception|rate.?limit|quota|exceeded|unavailable|timed? ?out|"
    r"overloaded|connection (?:refused|reset)|retrying)\b"
)
_CONFIRMATION_REPLY = re.compile(r"^\s*(?:y|n|yes|no|a|all|s|d)\s*$", re.IGNORECASE)
_ECHO_PREFIX = 200
_MIN_ECHO = 20
_MIN_REPEAT = 10


@dataclass
class _State:
    """Parser state carried across the lines of the history file."""

    builder: TurnBuilder = field(default_factory=TurnBuilder)
    prose: list[tuple[int, str]] = field(default_factory=list)
    last_answer: str = ""
    context_reset: bool = True
    between_turns: bool = True
    pending: list[tuple[str, ArtifactAction, int]] = field(default_factory=list)
    new_files: set[str] = field(default_factory=set)
    help_answer: bool = False
    new_session: bool = True


def sniff(head: str, path: Path) -> float:
    """Confidence that ``head`` is an aider chat history."""
    if re.search(r"^# aider chat started at ", head, re.MULTILINE):
        return 0.95
    if path.name.endswith(".aider.chat.history.md"):
        return 0.9
    if re.search(r"^#### ", head, re.MULTILINE) and re.search(r"^> Tokens: ", head, re.MULTILINE):
        return 0.6
    return 0.0


def parse(text: str) -> ParsedTranscript:
    """Parse an aider chat history into turn rounds."""
    lines = split_lines(text)
    is_input, strict = _input_lines(lines)
    state = _State()
    previous_kind = "start"
    index = 0
    while index < len(lines):
        line = lines[index]
        if is_input[index] and (previous_kind != "prose" or (strict[index] and _cut_short(state.prose))):
            _flush_prose(state)
            index = _handle_input_run(state, lines, is_input, index)
            previous_kind = "input"
            continue
        if _SESSION.match(line):
            _flush_prose(state)
            state.context_reset = state.between_turns = True
            state.new_session = True
            previous_kind = "session"
        elif _INFO.match(line) or (line.strip() and previous_kind == "info" and _is_info_tail(lines, index)):
            _flush_prose(state)
            _handle_info(state, lines, index)
            previous_kind = "info"
        elif line.strip():
            state.prose.append((index + 1, line))
            previous_kind = "prose"
        elif state.prose:
            state.prose.append((index + 1, line))
        index += 1
    _flush_prose(state)
    return state.builder.result(NAME)


def _input_lines(lines: list[str]) -> tuple[list[bool], list[bool]]:
    """Per line: can it be user input, and is that certain?

    In a new-style session input ends with two spaces; such a line is certain
    input, and may follow assistant prose directly when that answer was cut
    short by ^C inside a code block (an assistant heading can end with two
    spaces too, but never sits inside an open code block).
    """
    flags: list[bool] = []
    strict: list[bool] = []
    session_start = 0
    for index in range(len(lines) + 1):
        if index == len(lines) or (index > session_start and _SESSION.match(lines[index])):
            session = lines[session_start:index]
            inputs = [line for line in session if _INPUT.match(line)]
            new_style = sum(1 for line in inputs if line.endswith("  ")) * 2 > len(inputs)
            flags.extend(bool(_INPUT.match(line)) and (not new_style or line.endswith("  ")) for line in session)
            strict.extend(new_style and bool(_INPUT.match(line)) and line.endswith("  ") for line in session)
            session_start = index
    return flags, strict


def _cut_short(prose: list[tuple[int, str]]) -> bool:
    """Was the answer so far interrupted (^C) inside a code block? Then a request may follow it directly."""
    fences = sum(1 for _, line in prose if line.lstrip().startswith(("```", "~~~")))
    return fences % 2 == 1


def _is_info_tail(lines: list[str], index: int) -> bool:
    """A wrapped continuation of an aider message (e.g. the ``Cost:`` line after ``> Tokens:``)."""
    previous = lines[index - 1] if index else ""
    return bool(previous.strip()) and not lines[index].startswith("#")


def _handle_input_run(state: _State, lines: list[str], is_input: list[bool], start: int) -> int:
    """Process a run of input lines starting at ``start``; returns the index after it."""
    run: list[tuple[int, str, bool]] = []  # line number, content, follows the previous input line directly
    index = start
    while index < len(lines):
        if is_input[index]:
            joined = index > start and is_input[index - 1] and lines[index - 1].endswith("  ")
            run.append((index + 1, lines[index][5:].rstrip(), joined))
            index += 1
        elif not lines[index].strip() and index + 1 < len(lines) and is_input[index + 1]:
            index += 1
        else:
            break
    grouped = all(lines[number - 1].endswith("  ") for number, _, _ in run)  # new style: inputs are known
    for segment in split_run(run, grouped):
        if segment.command is None:
            _handle_message(state, segment)
        else:
            _handle_command(state, segment)
    return index


def _handle_command(state: _State, segment: Segment) -> None:
    name = segment.command or ""
    if name in REQUEST_COMMANDS and segment.argument:
        _handle_message(state, segment)
        return
    if name == "help" and segment.argument:
        state.builder.note(segment.line, "/help question to aider's documentation bot (answer skipped)")
        state.help_answer = True
    else:
        state.builder.note(segment.line, f"slash command {segment.text}")
    if name in _FILE_COMMANDS:
        for path in segment.argument.split():
            state.pending.append((path, "read", segment.line))
    if name in _RESET_COMMANDS:
        state.context_reset = True
    state.between_turns = True


def _handle_message(state: _State, segment: Segment) -> None:
    builder = state.builder
    if segment.text == BLANK_INPUT:
        builder.note(segment.line, "empty input")
        return
    if _CONFIRMATION_REPLY.match(segment.text):
        builder.note(segment.line, f"answer {segment.text.strip()!r} to a confirmation, typed at the prompt")
        return
    if CONFIRMATION_ECHO.match(segment.text):
        builder.note(segment.line, "a confirmation answered for the person by a group answer (aider's echo)")
        return
    if _is_echo(segment.text, state.last_answer):
        builder.note(segment.line, "architect→editor echo of the previous answer")
    elif (
        state.context_reset
        and not state.new_session
        and builder.turns
        and _repeats(segment.text, builder.turns[-1].user_messages)
    ):
        builder.note(segment.line, "request re-sent after a context reset")
        builder.join(segment.text, segment.line, segment.end)
    else:
        builder.user(segment.text, segment.line, segment.end)
        state.new_files.clear()
    for path, action, line in state.pending:
        builder.artifact(path, action, line)
    state.pending.clear()
    state.last_answer = ""
    state.context_reset = state.between_turns = state.help_answer = state.new_session = False


def _is_echo(text: str, answer: str) -> bool:
    """Is ``text`` a copy of the assistant answer just before it?"""
    message = squash(text)
    size = min(len(message), len(answer), _ECHO_PREFIX)
    return size >= _MIN_ECHO and message[:size] == answer[:size]


def _repeats(text: str, previous: list[str]) -> bool:
    """Does ``text`` re-send (a prefix of, or an extension of) one of ``previous``? A request made
    with ``/code X`` (``/ask``, ``/architect``...) is compared by its ``X``."""
    compact = _request_words(text)
    for message in previous:
        other = _request_words(message)
        if min(len(compact), len(other)) >= _MIN_REPEAT and (compact.startswith(other) or other.startswith(compact)):
            return True
    return False


def _request_words(text: str) -> str:
    command = COMMAND.match(text.strip())
    if command and command.group("name") in REQUEST_COMMANDS and command.group("arg"):
        text = command.group("arg")
    return "".join(text.split()).lower()


def _flush_prose(state: _State) -> None:
    if not state.prose or state.help_answer:
        state.prose.clear()
        return
    text = "\n".join(line for _, line in state.prose)
    state.builder.agent(text, state.prose[0][0], state.prose[-1][0])
    state.last_answer = squash(text)
    state.new_files.update(_new_file_blocks([line for _, line in state.prose]))
    state.prose.clear()


def _new_file_blocks(prose: list[str]) -> set[str]:
    """Paths of SEARCH/REPLACE blocks with an empty SEARCH part (file creation)."""
    paths: set[str] = set()
    for index, line in enumerate(prose):
        if line.strip() == "<<<<<<< SEARCH" and index + 1 < len(prose) and prose[index + 1].strip() == "=======":
            path = _block_path(prose, index)
            if path:
                paths.add(_normalize(path))
    return paths


def _block_path(prose: list[str], search_index: int) -> str | None:
    """The file name line above the opening fence of an edit block."""
    index = search_index - 1
    if index >= 0 and prose[index].lstrip().startswith("```"):
        index -= 1
    while index >= 0 and not prose[index].strip():
        index -= 1
    return prose[index].strip() if index >= 0 else None


def _handle_info(state: _State, lines: list[str], index: int) -> None:
    """Record artifacts (or a provider error) from one ``> `` line of aider output."""
    message = lines[index][1:].strip()
    turn = state.builder.turns[-1] if state.builder.turns else None
    if turn is not None and not state.between_turns and not turn.agent_responses and _ERROR.search(message):
        state.builder.agent(f"(no answer: aider reported {message})", index + 1)
        return
    applied = _APPLIED.match(message)
    if applied:
        path = applied.group("path")
        action: ArtifactAction = "created" if _normalize(path) in state.new_files else "edited"
        _add_artifact(state, path, action, index + 1)
        return
    added = _ADDED.match(message)
    if added:
        _add_artifact(state, added.group("path"), "read", index + 1)
        return
    creation = _ALLOW_CREATION.match(message)
    if creation and _accepted(creation.group("answer")):
        _add_artifact(state, creation.group("path"), "created", index + 1)
        return
    confirm_create = _CONFIRM_CREATE.match(message)
    if confirm_create and _accepted(confirm_create.group("answer")):
        for path in _listed_paths(lines, index)[-1:]:
            _add_artifact(state, path, "created", index + 1)
        return
    confirm_add = _CONFIRM_ADD.match(message)
    if confirm_add and _accepted(confirm_add.group("answer")):
        for path in _listed_paths(lines, index):
            _add_artifact(state, path, "read", index + 1)


def _accepted(answer: str) -> bool:
    """The user's reply to an aider question such as ``(Y)es/(N)o [Yes]: y``; empty takes the default."""
    question, separator, reply = answer.rpartition("]:")
    reply = reply.strip().lower()
    if reply:
        return reply.startswith(("y", "a"))
    return not separator or question.lower().endswith(("[yes", "[y", "[all"))


def _listed_paths(lines: list[str], index: int) -> list[str]:
    """The single-word ``> path`` lines right above an aider question."""
    paths: list[str] = []
    previous = index - 1
    while previous >= 0 and _INFO.match(lines[previous]):
        candidate = lines[previous][1:].strip()
        if not candidate or " " in candidate or candidate.endswith(("?", ":")):
            break
        paths.append(candidate)
        previous -= 1
    return paths[::-1]


def _add_artifact(state: _State, path: str, action: ArtifactAction, line: int) -> None:
    if state.between_turns:
        state.pending.append((path, action, line))
    else:
        state.builder.artifact(path, action, line)


def _normalize(path: str) -> str:
    return path.strip().strip("`").replace("\\", "/")
