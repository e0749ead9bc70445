"""Slash commands: a message that starts with ``/`` is a command, in the TUI and in ``ccm-tui send`` alike.

They manage efforts without the model (``/open``, ``/conclude`` …; concluding still
asks the summary model for the summary, or extracts one from the log when it
fails) and ask the session questions (``/search``, ``/status``, ``/help``). The
session controller runs them; this module parses, completes and explains them.
``//text`` sends the literal ``/text`` as a message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import InputError
from ..efforts.states import Action
from .run_state import SendMessage, SlashCommand

if TYPE_CHECKING:
    from ..engine.forget import ForgetRequest


class SlashError(InputError):
    """A command that cannot run as typed (unknown, or its argument missing): one line for the user."""


@dataclass(frozen=True)
class CommandSpec:
    name: str
    argument: str  # "" (none), "NAME", "ID", "[ID]" (optional), "QUERY"
    help: str
    action: Action | None = None
    aliases: tuple[str, ...] = ()

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.argument}".rstrip()

    @property
    def takes_effort(self) -> bool:
        return self.argument in ("ID", "[ID]")

    def split(self, argument: str) -> tuple[str, str]:
        """(the effort, the value) of an edit's argument: ``/rename trip Japan 2027`` → ``("trip",
        "Japan 2027")``; a command of one argument keeps it whole."""
        if " " not in self.argument:
            return argument, ""
        target, _, value = argument.partition(" ")
        return target, value


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("open", "NAME", "open a new effort; it becomes the active one", Action.OPEN),
    CommandSpec(
        "conclude",
        "[ID]",
        "conclude an effort (the active one by default): a summary replaces it",
        Action.CONCLUDE,
        ("done",),
    ),
    CommandSpec("reopen", "ID", "continue a concluded effort: open and active again", Action.REOPEN),
    CommandSpec("switch", "ID", "make another open effort the active one", Action.SWITCH),
    CommandSpec("expand", "ID", "load a concluded effort's raw log back into context", Action.EXPAND),
    CommandSpec("collapse", "ID", "an expanded effort back to its summary", Action.COLLAPSE),
    CommandSpec("rename", "ID NAME", "give an effort another name (its id stays)", Action.RENAME),
    CommandSpec("summary", "ID TEXT", "your summary of a concluded effort replaces the model's", Action.SUMMARY),
    CommandSpec("pin", "ID", "keep an effort's summary in working memory", Action.PIN),
    CommandSpec("unpin", "ID", "let an effort's summary leave working memory again", Action.UNPIN),
    CommandSpec("merge", "ID INTO", "append a concluded effort's lines to another effort's log", Action.MERGE),
    CommandSpec("search", "QUERY", "search every effort and all the chat, with passages and line numbers"),
    CommandSpec(
        "forget",
        "TEXT",
        "take a text out of every file of the session (--effort ID [--lines A-B]: an effort, lines of it);"
        " asks first: --yes forgets",
    ),
    CommandSpec("status", "", "the efforts and what the context holds"),
    CommandSpec("help", "", "these commands"),
)
_BY_NAME = {name: spec for spec in COMMANDS for name in (spec.name, *spec.aliases)}


def parse(text: str) -> SendMessage | SlashCommand:
    """What a message means: a command, or chat (``//text`` is the literal ``/text``).
    Raises :class:`SlashError` for an unknown command or a missing argument."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return SendMessage(text)
    if stripped.startswith("//"):
        return SendMessage(stripped[1:])
    word, _, rest = stripped[1:].partition(" ")
    if not word or word.startswith(" "):
        return SendMessage(text)  # a lone "/" is chat
    spec = _BY_NAME.get(word.casefold())
    if spec is None:
        raise SlashError(f"unknown command /{word} — /help lists them (// sends a message that starts with /)")
    argument = " ".join(rest.split())
    quoted = len(argument) >= 2 and argument[0] == argument[-1] and argument[0] in "'\""
    if quoted and spec.argument in ("NAME", "ID", "[ID]"):  # an id or a name quoted as in a shell
        argument = " ".join(argument[1:-1].split())
    if spec.argument in ("NAME", "ID", "QUERY", "TEXT") and not argument:
        raise SlashError(f"/{spec.name} needs {_needs(spec.argument)}: {spec.usage}")
    if " " in spec.argument and len(argument.split(" ", 1)) < 2:  # "ID NAME": an effort, then what to do
        raise SlashError(f"/{spec.name} needs an effort id and {spec.argument.split()[1].lower()}: {spec.usage}")
    if not spec.argument and argument:
        raise SlashError(f"/{spec.name} takes nothing after it: {spec.usage}")
    if spec.name == "forget":
        forget_request(argument)  # (refused now when it cannot be read)
    return SlashCommand(spec.name, argument)


_LINES = re.compile(r"(\d{1,9})(?:-(\d{1,9}))?")


def forget_request(argument: str) -> tuple[ForgetRequest, bool]:
    """``/forget``'s argument: ``[--yes] TEXT``, or ``[--yes] --effort ID [--lines A-B]``; and whether
    ``--yes`` says to go ahead (without it the command only says what would be forgotten)."""
    from ..engine.forget import ForgetRequest  # (not on the TUI's first paint)

    words = argument.split(" ")
    yes = bool(words) and words[0] == "--yes"
    words = words[1:] if yes else words
    if words and words[0] == "--effort":
        if len(words) not in (2, 4) or (len(words) == 4 and words[2] != "--lines"):
            raise SlashError("/forget --effort ID [--lines A-B]")
        if len(words) == 2:
            return ForgetRequest.of_effort(words[1]), yes
        match = _LINES.fullmatch(words[3])
        if match is None or int(match.group(1)) < 1 or int(match.group(2) or match.group(1)) < int(match.group(1)):
            raise SlashError(f"/forget --lines {words[3]}: give A-B with 1 <= A <= B")
        return ForgetRequest.of_lines(words[1], int(match.group(1)), int(match.group(2) or match.group(1))), yes
    text = " ".join(words)
    if not text.strip():
        raise SlashError("/forget needs the text to forget: /forget TEXT")
    return ForgetRequest.of_text(text), yes


def _needs(argument: str) -> str:
    return {"NAME": "a name", "ID": "an effort id", "QUERY": "something to look for", "TEXT": "the text"}[argument]


def spec_of(command: SlashCommand) -> CommandSpec:
    return _BY_NAME[command.name]


def help_text() -> str:
    width = max(len(spec.usage) for spec in COMMANDS)
    lines = [f"{spec.usage:<{width}}  {spec.help}" for spec in COMMANDS]
    lines.append(f"{'/done [ID]':<{width}}  the same as /conclude")
    lines.append(f"{'//text':<{width}}  send a message that starts with /")
    return "\n".join(lines)


def completions(typed: str, effort_ids: Iterable[str]) -> list[str]:
    """Ways to finish what is typed in the input: command names after ``/``, effort ids after a
    command that takes one. Each completion is the whole input as it would read."""
    if not typed.startswith("/") or typed.startswith("//") or "\n" in typed:
        return []
    word, space, rest = typed[1:].partition(" ")
    if not space:
        names = sorted({spec.name for spec in COMMANDS} | {a for spec in COMMANDS for a in spec.aliases})
        return [f"/{name} " for name in names if name.startswith(word.casefold())]
    spec = _BY_NAME.get(word.casefold())
    if spec is None or not spec.takes_effort or " " in rest.strip():
        return []
    return [f"/{word} {effort_id}" for effort_id in sorted(effort_ids) if effort_id.startswith(rest.strip())]
