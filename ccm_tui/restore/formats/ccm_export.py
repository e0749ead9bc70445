"""ccm-tui's own export (``ccm-tui export --format json|jsonl``): read back on this or another machine.

As a transcript format (``restore``), every effort's messages are the turns of one transcript. As an
import (``ccm-tui import FILE``, :func:`land_export`), each exported effort lands as itself: its name,
its summary, its messages as logged (the ambient chat is not imported: it belongs to the session it
was said in), concluded ones concluded, open ones reopened — without a model. Importing the same
export again lands nothing twice (each effort's digest is kept in its ``source``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccm_tui.config import Settings
from ccm_tui.restore.formats._common import TurnBuilder
from ccm_tui.restore.turns import ParsedTranscript, TranscriptError

NAME = "ccm-export"
FORMAT = "ccm-tui-export"
_HEAD = re.compile(r'"format"\s*:\s*"ccm-tui-export"')
OPEN_SUMMARY = "(open when it was exported)"  # an open effort lands concluded with this, then is reopened


class ExportError(TranscriptError):
    """The file is not a ccm-tui export this version reads."""


def sniff(head: str, path: Path) -> float:
    return 1.0 if _HEAD.search(head[:4096]) else 0.0


def exported_efforts(text: str) -> list[dict[str, Any]]:
    """The efforts of an export (JSON or JSON lines), in order; each with its ``messages``.

    Raises:
        ExportError: the text is not a ccm-tui export.
    """
    text = text.lstrip("\ufeff")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        if document.get("format") != FORMAT or not isinstance(document.get("sessions"), list):
            raise ExportError('not a ccm-tui export (no "format": "ccm-tui-export" with sessions)')
        if document.get("version") != 1:
            raise ExportError(f"a ccm-tui export of version {document.get('version')!r}: this ccm-tui reads version 1")
        found = [e for s in document["sessions"] if isinstance(s, dict) for e in s.get("efforts") or []]
    else:
        found = _jsonl_efforts(text)
    return [e for e in found if isinstance(e, dict) and isinstance(e.get("messages"), list)]


def _jsonl_efforts(text: str) -> list[dict[str, Any]]:
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        records = [json.loads(line) for line in lines]
    except ValueError:
        raise ExportError("not a ccm-tui export: neither one JSON document nor JSON lines") from None
    if not records or not isinstance(records[0], dict) or records[0].get("format") != FORMAT:
        raise ExportError("not a ccm-tui export (its first line is not the export's head)")
    return [r for r in records if isinstance(r, dict) and r.get("type") == "effort"]


def parse(text: str) -> ParsedTranscript:
    """Every effort's messages as the turns of one transcript (``restore``)."""
    builder = TurnBuilder()
    line = 0
    for effort in exported_efforts(text):
        for record in effort["messages"]:
            line += 1
            if not isinstance(record, dict) or not isinstance(record.get("content"), str):
                builder.note(line, "a message of the wrong shape")
            elif record.get("role") == "user" and not record.get("note"):
                builder.user(record["content"], line)
            else:
                builder.agent(record["content"], line)
    return builder.result(NAME, title="ccm-tui export")


@dataclass
class LandedExport:
    landed: list[tuple[str, str]] = field(default_factory=list)  # (exported id, id here)
    skipped: list[str] = field(default_factory=list)  # imported before
    directory: Path | None = None

    def lines(self) -> list[str]:
        out = [f"imported {old} as {new}" if old != new else f"imported {new}" for old, new in self.landed]
        out += [f"{old}: imported before, skipped" for old in self.skipped]
        out.append(f"{len(self.landed)} effort(s) imported into {self.directory}")
        return out


def _digest(effort: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(effort, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _messages(effort: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        m for m in effort["messages"] if isinstance(m, dict) and isinstance(m.get("content"), str) and m.get("role")
    ]


def land_export(directory: Path, text: str, file: Path, settings: Settings | None = None) -> LandedExport:
    """Land each effort of the export ``text`` in the session at ``directory`` (created if needed).

    Raises:
        ExportError: the text is not a ccm-tui export.
        StoreError: the session cannot be opened for writing.
    """
    from ccm_tui.core.efforts.states import Action
    from ccm_tui.core.engine.opening import NO_MODEL, start_engine
    from ccm_tui.core.storage.eventlog import now_iso

    efforts = exported_efforts(text)
    report = LandedExport(directory=Path(directory))
    engine = start_engine(Path(directory), settings or Settings(), llm=NO_MODEL, probe_model_window=False)
    clean = False
    try:
        for effort in efforts:
            digest = _digest(effort)
            old_id = str(effort.get("id") or effort.get("name") or "effort")
            if engine.find_import(digest, None) is not None:
                report.skipped.append(old_id)
                continue
            source = {"format": NAME, "file": str(Path(file).expanduser().resolve()), "sha256": digest}
            if effort.get("source"):
                source["exported_source"] = effort["source"]
            summary = effort.get("summary") if isinstance(effort.get("summary"), str) else None
            name = str(effort.get("name") or old_id)
            landed = engine.land_import(
                name,
                _messages(effort),
                summary or OPEN_SUMMARY,
                source,
                restored_at=str(effort.get("concluded_at") or now_iso()),
            )
            if effort.get("status") == "open":
                asyncio.run(engine.run_action(Action.REOPEN, landed.id))
            report.landed.append((old_id, landed.id))
        clean = True
    finally:
        engine.close(clean=clean)
    return report
