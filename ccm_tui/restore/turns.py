"""Data model of a parsed transcript: turn rounds and the file artifacts they touched.

A *turn round* is one human request plus everything the agent did in answer to
it, up to the next human request. Every transcript format parser in
``ccm_tui.restore.formats`` produces a :class:`ParsedTranscript` made of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import InputError

ArtifactAction = Literal["read", "edited", "created"]


class TranscriptError(InputError):
    """A transcript cannot be read, detected or parsed (message is one line)."""


class UnknownTranscriptFormat(TranscriptError):
    """No known format recognises the file: in a directory scan, a file that is not a transcript."""


@dataclass(frozen=True)
class Artifact:
    """A file the agent read, edited or created during a turn.

    ``line`` is the 1-based line of the transcript where the action appears.
    """

    path: str
    action: ArtifactAction
    line: int


@dataclass
class TurnRound:
    """One human request (possibly several messages) and the agent's answer."""

    turn: int
    user_messages: list[str]
    agent_responses: list[str]
    start_line: int
    end_line: int
    artifacts: list[Artifact] = field(default_factory=list)

    @property
    def user(self) -> str:
        """All user messages of the turn, separated by blank lines."""
        return "\n\n".join(self.user_messages)


@dataclass
class ParsedTranscript:
    """The result of parsing one transcript file."""

    format: str
    turns: list[TurnRound]
    skipped: list[str] = field(default_factory=list)
    cwd: str | None = None
    title: str | None = None
    sha256: str | None = None  # of the very bytes parsed: what makes importing them idempotent
    # One-line notes that the parse looks wrong (``restore.sanity``): shown to the user, never fatal.
    warnings: list[str] = field(default_factory=list)


def to_parse_only_json(parsed: ParsedTranscript) -> dict[str, Any]:
    """Render a parsed transcript as the JSON document of ``--parse-only``."""
    document: dict[str, Any] = {
        "format": parsed.format,
        "turns": [
            {
                "turn": turn.turn,
                "user": turn.user,
                "artifacts": [{"path": artifact.path, "action": artifact.action} for artifact in turn.artifacts],
            }
            for turn in parsed.turns
        ],
        "skipped": list(parsed.skipped),
        "cwd": parsed.cwd,
        "title": parsed.title,
    }
    if parsed.warnings:
        document["warnings"] = list(parsed.warnings)
    return document
