"""Slash commands: a message that starts with ``/`` is a command, in the TUI and in ``ccm-tui send`` alike.

They manage efforts without the model (``/open``, ``/conclude`` …; concluding still
asks the summary model for the summary, or extracts one from the log when it
fails) and ask the session questions (``/search``, ``/status``, ``/help``). The
session controller runs them; this module parses, completes and explains them.
``//text`` sends the literal ``/text`` as a message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...errors import InputError
from ..efforts.states import Action
from .run_state import SendMessage, SlashCommand


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
    CommandSpec("search", "QUERY", "search every effort and all the chat, with passages and line numbers"),
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
    if spec.argument in ("NAME", "ID", "QUERY") and not argument:
        raise SlashError(f"/{spec.name} needs {_needs(spec.argument)}: {spec.usage}")
    if not spec.argument and argument:
        raise SlashError(f"/{spec.name} takes nothing after it: {spec.usage}")
    return SlashCommand(spec.name, argument)


def _needs(argument: str) -> str:
    return {"NAME": "a name", "ID": "an effort id", "QUERY": "something to look for"}[argument]


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
