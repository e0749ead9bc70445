"""Shared bits of the replay tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.transcripts import THREE_TOPICS


@pytest.fixture
def three_topics() -> Path:
    return THREE_TOPICS
