"""Replay a real transcript through the engine and measure tokens (``ccm-tui replay``).

Pipeline: parse the transcript (restore parsers) → effort boundaries (a YAML
file, else a model when one is configured, else the offline TextTiling
segmenter) → every human turn through the real orchestrator with the replay
model (:mod:`.model`) → per-turn naive vs ccm token figures, and what each side
would be billed with and without providers' prompt caches (:mod:`.billing`) →
table / JSON / plot. See :mod:`.runner` for what is measured and :mod:`.capping` for how
giant agent responses are handled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.models.interface import ChatModel
from ..core.text.topics import TurnText, segment
from .boundaries import BoundaryError, EffortSpan, load_boundaries

__all__ = ["replay_file", "choose_spans", "EffortSpan", "BoundaryError"]


@dataclass
class SpanChoice:
    spans: list[EffortSpan]
    source: str  # "file" | "model" | "offline"
    note: str | None = None


def offline_spans(parsed) -> list[EffortSpan]:
    return segment([TurnText(t.user, "\n\n".join(t.agent_responses)) for t in parsed.turns])


async def choose_spans(parsed, efforts: Path | None, llm: ChatModel | None) -> SpanChoice:
    """Boundaries from the file, else the model, else the offline segmenter."""
    n = len(parsed.turns)
    if efforts is not None:
        return SpanChoice(load_boundaries(efforts, n), "file")
    if llm is not None:
        from ..core.models.provider_errors import LLMError
        from .model_segmenter import segment_with_model

        try:
            return SpanChoice(await segment_with_model(llm, [t.user for t in parsed.turns]), "model")
        except (BoundaryError, LLMError) as exc:
            return SpanChoice(
                offline_spans(parsed), "offline", f"model segmentation unusable ({exc}); used the offline segmenter"
            )
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
    from ..core.models.client_setup import model_client
    from ..restore.parse import parse_transcript
    from .billing import turn_times
    from .runner import replay

    settings = settings or Settings()
    parsed = parse_transcript(transcript, fmt)
    if not parsed.turns:
        raise BoundaryError(f"{transcript}: no human turns found to replay")
    llm = model_client(settings)
    choice = await choose_spans(parsed, efforts, llm)
    result = await replay(
        parsed,
        choice.spans,
        settings,
        transcript=Path(transcript).name,
        segmenter=choice.source,
        summarizer=llm,
        session_dir=session_dir,
        progress=progress,
        times=turn_times(Path(transcript), [t.start_line for t in parsed.turns]),
    )
    if choice.note:
        result.notes.append(choice.note)
    return result
