"""``ccm-tui replay``: replay a real transcript through the engine and measure tokens.

Pipeline: parse the transcript (restore parsers) → effort boundaries (a YAML
file, else a model when one is configured, else the offline TextTiling
segmenter) → every human turn through the real orchestrator with the replay
model (:mod:`.model`) → per-turn naive vs ccm token figures → table / JSON /
plot. See :mod:`.runner` for what is measured and :mod:`.capping` for how
giant agent responses are handled.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .boundaries import BoundaryError, EffortSpan, load_boundaries
from .segmenter import TurnText, segment

__all__ = ["run_replay", "replay_file", "choose_spans", "EffortSpan", "BoundaryError"]


@dataclass
class SpanChoice:
    spans: list[EffortSpan]
    source: str  # "file" | "model" | "offline"
    note: str | None = None


def offline_spans(parsed) -> list[EffortSpan]:
    return segment([TurnText(t.user, "\n\n".join(t.agent_responses)) for t in parsed.turns])


async def choose_spans(parsed, efforts: Path | None, llm: Any | None) -> SpanChoice:
    """Boundaries from the file, else the model, else the offline segmenter."""
    n = len(parsed.turns)
    if efforts is not None:
        return SpanChoice(load_boundaries(efforts, n), "file")
    if llm is not None:
        from ..core.llm import LLMError
        from .model_segmenter import segment_with_model

        try:
            return SpanChoice(await segment_with_model(llm, [t.user for t in parsed.turns]), "model")
        except (BoundaryError, LLMError) as exc:
            return SpanChoice(offline_spans(parsed), "offline",
                              f"model segmentation unusable ({exc}); used the offline segmenter")
    return SpanChoice(offline_spans(parsed), "offline")


async def replay_file(
    transcript: Path,
    *,
    efforts: Path | None = None,
    settings=None,
    fmt: str = "auto",
    session_dir: Path | None = None,
    progress=None,
):
    """Parse, choose boundaries, replay. Returns a :class:`~.runner.ReplayResult`.

    Raises TranscriptError, BoundaryError, ReplayFailed, BudgetTooSmall, LLMError.
    """
    from ..config import Settings
    from ..core.llm import LLMClient
    from ..restore.parse import parse_transcript
    from .runner import replay

    settings = settings or Settings()
    parsed = parse_transcript(transcript, fmt)
    if not parsed.turns:
        raise BoundaryError(f"{transcript}: no human turns found to replay")
    llm = None
    if settings.model:
        llm = LLMClient(settings.model, api_base=settings.api_base, summary_model=settings.summary_model,
                        timeout=settings.request_timeout)
    choice = await choose_spans(parsed, efforts, llm)
    result = await replay(
        parsed, choice.spans, settings, transcript=Path(transcript).name, segmenter=choice.source,
        summarizer=llm, session_dir=session_dir, progress=progress,
    )
    if choice.note:
        result.notes.append(choice.note)
    return result


class _Progress:
    """Turn progress on stderr: a live line on a terminal, otherwise a line every few seconds."""

    def __init__(self, every: float = 5.0) -> None:
        self.tty = sys.stderr.isatty()
        self.every = every
        self.started = time.monotonic()
        self.last = self.started
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.tty:
            if now - self.last >= 0.2 or done == total:
                sys.stderr.write(f"\rreplaying: turn {done}/{total}")
                sys.stderr.flush()
                self.last = now
                self.shown = True
        elif now - self.last >= self.every:
            sys.stderr.write(f"replaying: turn {done}/{total} ({now - self.started:.0f} s)\n")
            sys.stderr.flush()
            self.last = now
            self.shown = True

    def finish(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()


def run_replay(args) -> int:
    """The ``replay`` subcommand."""
    from ..cli import CliError, UsageError
    from ..config import ConfigError, load_settings
    from ..core.llm import LLMError
    from ..restore.turns import TranscriptError
    from .capping import BudgetTooSmall
    from .model import ReplayToolError
    from .plot import PlotError, write_plot
    from .report import render_text, to_json
    from .runner import ReplayFailed

    transcript = Path(args.transcript)
    plot = getattr(args, "plot", None)
    if plot is not None and Path(plot).suffix.lower() not in (".svg", ".png"):
        raise UsageError(f"--plot {plot}: use a .svg (or .png) file name")
    if not transcript.is_file():
        raise CliError(f"{transcript}: no such file")
    efforts = getattr(args, "efforts", None)
    if efforts is not None and not Path(efforts).is_file():
        raise CliError(f"{efforts}: no such file")
    keep = getattr(args, "keep_session", None)
    if keep is not None and Path(keep).exists() and any(Path(keep).iterdir()):
        raise UsageError(f"--keep-session {keep}: the directory must be new or empty")
    try:
        settings = load_settings(model=getattr(args, "model", None), api_base=getattr(args, "api_base", None))
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    progress = _Progress()
    try:
        result = asyncio.run(replay_file(
            transcript, efforts=efforts, settings=settings, fmt=getattr(args, "format", "auto") or "auto",
            session_dir=keep, progress=progress,
        ))
    except (TranscriptError, BoundaryError, ReplayFailed, BudgetTooSmall, LLMError, ReplayToolError) as exc:
        raise CliError(str(exc)) from None
    finally:
        progress.finish()
    if plot is not None:
        try:
            write_plot(result, Path(plot))
        except PlotError as exc:
            raise CliError(str(exc)) from None
        except OSError as exc:
            raise CliError(f"cannot write {plot}: {exc.strerror or exc}") from None
    if getattr(args, "json", False):
        print(json.dumps(to_json(result), ensure_ascii=False))
    else:
        print(render_text(result))
        if plot is not None:
            print(f"plot: {plot}")
    return 0
