"""Locations of the transcript fixtures, of the replay tests' small transcript and of the shared real-transcript
corpus."""

from __future__ import annotations

import os
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
THREE_TOPICS = Path(__file__).resolve().parents[1] / "replay" / "data" / "three-topics.aider.md"


def corpus_dir() -> Path | None:
    """The shared corpus beside the clone, else ``$CCM_CORPUS_DIR``; None when absent."""
    beside_clone = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
    if (beside_clone / "SOURCES.tsv").is_file():
        return beside_clone
    configured = os.environ.get("CCM_CORPUS_DIR")
    if configured and (Path(configured) / "SOURCES.tsv").is_file():
        return Path(configured)
    return None


def fixture_text(name: str) -> str:
    """A fixture decoded exactly as the product reads transcripts (no newline translation)."""
    return (FIXTURES / name).read_bytes().decode("utf-8")
