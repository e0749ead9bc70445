r"""aider's input runs: which ``####`` lines form one input, and which inputs are slash commands.

aider logs each input as ``#### line`` lines, every line but the blank-line
separated ones ending with two spaces; it reads a command (``/add``, ``/ask
X``...) only from the first line of an input, and the command owns the whole
input. :func:`split_run` turns a run of input lines into :class:`Segment`\ s:
commands and messages, with the echo aider logs after a request command dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ccm_tui.restore.formats._common import squash

COMMAND = re.compile(r"^/(?P<name>[a-z][\w-]*|!)(?:\s+(?P<arg>.*))?$")
KNOWN_COMMANDS = frozenset(
    "add architect ask chat-mode clear code commit context copy copy-context diff drop edit editor "
    "editor-model exit git help lint load ls map map-refresh model models multiline-mode ok paste "
    "quit read-only reasoning-effort report reset run save settings test think-tokens tokens undo "
    "voice weak-model web !".split()
)
REQUEST_COMMANDS = frozenset({"ask", "code", "architect", "context"})
BLANK_INPUT = "<blank>"
# A confirmation question with its answer, logged as input: aider writes one when a group answer ("all",
# "skip all") answers the next questions of the group for the person ("Add file to the chat? (Y)es/(N)o/
# (A)ll/(S)kip all/(D)on't ask again [Yes]: all"); any of its yes/no prompts has this shape.
CONFIRMATION_ECHO = re.compile(
    r"^[^\n]{1,600}\?\s*(?:\(Y\)es(?:/\([A-Z]\)[^/\[\]\n]{0,30})*\s*\[[^\]\n]{1,40}\]|\[(?:Yes|No|Y|N)\])"
    r":[ \t]*[\w' -]{0,20}$",
    re.IGNORECASE,
)


@dataclass
class Segment:
    """A piece of one input run: a slash command or the lines of a message."""

    line: int
    end: int
    text: str
    command: str | None = None
    argument: str = ""


def _inputs_of(run: list[tuple[int, str, bool]]) -> list[list[tuple[int, str]]]:
    """The run cut into the user's inputs: a new-style input is its lines joined without a blank line
    (aider ends each with two spaces); in an old-style history every line stands alone."""
    inputs: list[list[tuple[int, str]]] = []
    for number, content, joined in run:
        if joined and inputs:
            inputs[-1].append((number, content))
        else:
            inputs.append([(number, content)])
    return inputs


def split_run(run: list[tuple[int, str, bool]], grouped: bool) -> list[Segment]:
    """Split an input run into slash commands and messages, dropping request echoes.

    aider reads a command only from the first line of an input: a pasted prompt whose later lines
    start with ``/help`` or ``/settings`` is one message. Where inputs cannot be told apart (an
    old-style history, each line its own block) a command line counts only at the start of the run
    or after another command: a message in progress keeps the lines that follow it.
    """
    inputs = _inputs_of(run)
    segments: list[Segment] = []
    message: list[tuple[int, str]] = []
    echo: str | None = None
    position = 0
    while position < len(inputs):
        lines = inputs[position]
        position += 1
        first = lines[0][1].strip()
        if echo is not None:
            consumed = _echo_length(inputs, position - 1, echo)
            echo = None
            if consumed:
                position += consumed - 1
                continue
        if first == BLANK_INPUT and len(lines) == 1:
            _close_message(segments, message)
            segments.append(Segment(lines[0][0], lines[0][0], BLANK_INPUT))
            continue
        command = COMMAND.match(first)
        can_command = grouped or not message
        if command and can_command and command.group("name") in KNOWN_COMMANDS:
            _close_message(segments, message)
            name = command.group("name")
            segments.append(_command_segment(name, command.group("arg") or "", lines))
            if name == "help" and segments[-1].argument:
                break  # the rest of the run is the prompt aider generated for its help bot
            echo = squash(segments[-1].argument) if name in REQUEST_COMMANDS and segments[-1].argument else None
            continue
        if grouped:
            _close_message(segments, message)
        message.extend(lines)
    _close_message(segments, message)
    return segments


def _command_segment(name: str, first_argument: str, lines: list[tuple[int, str]]) -> Segment:
    """A slash command owning its whole input: a request command's later lines are part of its
    request, another command's (more ``/add`` paths) of its argument."""
    rest = [content for _, content in lines[1:]]
    text = "\n".join([lines[0][1].strip(), *rest]).strip()
    if name in REQUEST_COMMANDS:
        argument = "\n".join([first_argument, *rest]).strip()
    else:
        argument = " ".join(part.strip() for part in [first_argument, *rest] if part.strip())
    return Segment(lines[0][0], lines[-1][0], text, name, argument)


def _echo_length(inputs: list[list[tuple[int, str]]], start: int, echo: str) -> int:
    """How many inputs from ``start`` repeat a request command's text (aider logs it again as
    the input it sends); 0 when they do not. Blank inputs before the echo are part of it."""
    seen: list[str] = []
    for count, lines in enumerate(inputs[start:], start=1):
        seen.extend(content for _, content in lines)
        so_far = squash(" ".join(seen))
        if so_far == echo and so_far:
            return count
        if not echo.startswith(so_far):
            return 0
    return 0


def _close_message(segments: list[Segment], message: list[tuple[int, str]]) -> None:
    text = "\n".join(content for _, content in message).strip()
    if text:
        segments.append(Segment(message[0][0], message[-1][0], text))
    message.clear()
