"""Which sessions the server serves, and what a tool's caller may name: sessions and efforts.

Everything a caller names is checked here before it becomes a path: an effort id is a
slug (``[a-z0-9][a-z0-9-]{0,63}``, whole string) or ``ambient``; a session name is a
plain word of the data directory's sessions, and must be one of them. So no tool ever
opens a file outside the sessions it serves. And what the tools say names sessions, not
local paths: :meth:`Scope.private` turns a path under the sessions served into one
relative to its session (``manifest.yaml``), the session's directory into its name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from ..core.api import SessionCatalogError, session_paths
from ..errors import InputError

AMBIENT = "ambient"
EFFORT_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
EFFORT_ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"  # the same, for the tools' JSON schemas
READ_ID_PATTERN = r"^(ambient|[a-z0-9][a-z0-9-]{0,63})$"
SESSION_NAME_PATTERN = r"^[^/\\\u0000-\u001f\u007f-\u009f]{1,64}$"  # --session's rule: no path, no controls
SESSION_NAME_RULE = "up to 64 characters, no '/', '\\' or control character"  # the pattern in words
SESSION_FILES = ("manifest.yaml", "events.jsonl", "raw.jsonl")  # any of them: a directory is a session


LOCAL_PATH_RE = re.compile(r"(?<![\w./~:-])~?(?:/[^\s/'\"`:,;()<>]+)+/([^\s/'\"`:,;()<>]+)")


def is_session(directory: Path) -> bool:
    """Whether ``directory`` holds a session (any of its files)."""
    return any((directory / name).is_file() for name in SESSION_FILES)


class ToolInputError(ToolError, InputError):
    """What the caller asked for cannot be answered as asked; the message says why, in plain words
    (the caller gets it as the tool's error result, ``isError``)."""


def shown(value: object, width: int = 60) -> str:
    """A caller's value, quoted and cut, for an error message."""
    if isinstance(value, str):
        return repr(value[:width] + ("…" if len(value) > width else ""))
    return repr(value)[:width]


def effort_id(value: object, *, ambient: bool = False) -> str:
    """A valid effort id (or ``ambient`` when allowed), else :class:`ToolInputError`."""
    if isinstance(value, str) and (EFFORT_ID_RE.fullmatch(value) or (ambient and value == AMBIENT)):
        return value
    also = " or 'ambient' (the chat between efforts)" if ambient else ""
    raise ToolInputError(
        f"{shown(value)} is not an effort id: ids are lowercase letters, digits and '-' (up to 64), "
        f"as search and list show them{also}"
    )


@dataclass(frozen=True)
class Scope:
    """One session directory, or (``root``) every session under the data directory's ``sessions/``."""

    directory: Path | None = None
    root: Path | None = None
    archived: bool = False  # with root: archived sessions too (--include-archived)
    seen: set[str] = field(default_factory=set, compare=False, repr=False)  # sessions found here once

    def __post_init__(self) -> None:
        if self.directory is not None and is_session(self.directory):
            self.seen.add(self.directory.name)  # there at start: gone later means renamed or removed

    @property
    def all_sessions(self) -> bool:
        return self.root is not None

    @property
    def served(self) -> str | None:
        """The name of the one session served (None: every session is)."""
        return self.directory.name if self.directory is not None else None

    def private(self, text: str) -> str:
        """``text`` (an error bound for the caller) without local paths: a path in a session served
        relative to it (with every session served: relative to the sessions directory, so it starts
        with the session's name), the session's directory as ``session NAME``, any other absolute
        path as its last part."""
        bases: list[tuple[Path, str]] = []
        if self.directory is not None:
            bases.append((self.directory, f"session {self.directory.name}"))
        if self.root is not None:
            bases.append((self.root, "the sessions directory"))
        for base, said in bases:
            forms = {str(base), str(base.absolute()), os.path.realpath(base)}
            for form in sorted(forms, key=len, reverse=True):
                text = text.replace(form + os.sep, "").replace(form, said)
        return LOCAL_PATH_RE.sub(lambda m: m.group(1), text)

    def names(self) -> list[str]:
        """The sessions under ``root`` — every name ``--session`` takes ("work notes" too), never one
        that is a symbolic link out of the data directory — sorted."""
        if self.root is None:
            return []
        try:
            return [p.name for p in session_paths(self.root, links=False, archived=self.archived) if p.is_dir()]
        except (SessionCatalogError, OSError) as exc:  # an error, never "no sessions"
            reason = self.private(str(exc))
            raise ToolInputError(f"{reason}; nothing was read — try again in a moment") from None

    def session(self, name: object = None) -> tuple[str, Path]:
        """(name, directory) of the session a tool works on: the one served, or (all sessions) the one
        named, which must exist."""
        if self.directory is not None:
            name = self.directory.name
            if is_session(self.directory):
                self.seen.add(name)
            elif name in self.seen:  # it was here: renamed (Ctrl+S) or removed since
                raise ToolInputError(
                    f"session {name} was renamed or removed while this server ran; nothing was read or written "
                    "(start ccm-tui mcp again with the session's new name)"
                )
            else:
                raise ToolInputError(
                    f"session {name} holds no conversation yet (the first ccm-tui or ccm-tui send on it makes it)"
                )
            return name, self.directory
        assert self.root is not None
        known = self.names()
        if name is None or name == "":
            raise ToolInputError(f"say which session: {_listed(known)}")
        if not isinstance(name, str) or name not in known:  # only a listed name: never a path
            raise ToolInputError(f"there is no session {shown(name)}: {_listed(known)}")
        return name, self.root / name

    def sessions(self, name: object = None) -> list[tuple[str, Path]]:
        """The sessions a search covers: the one named, else every one served."""
        if self.root is not None and (name is None or name == ""):
            return [(n, self.root / n) for n in self.names()]
        return [self.session(name)]


def _listed(names: list[str]) -> str:
    if not names:
        return "there are no sessions yet (the first ccm-tui or ccm-tui send makes one)"
    more = f" and {len(names) - 20} more" if len(names) > 20 else ""
    return "the sessions are " + ", ".join(names[:20]) + more
