"""Shared bits of the replay tests."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
THREE_TOPICS = DATA / "three-topics.aider.md"
CORPUS = Path("/work/shared/corpus")
BOUNDARIES = Path(__file__).resolve().parents[2] / "benchmarks" / "boundaries"


@pytest.fixture
def three_topics() -> Path:
    return THREE_TOPICS
