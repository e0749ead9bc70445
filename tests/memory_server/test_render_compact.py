"""A search lists ten hits in about a thousand tokens (counted with the session's tokenizer), however long
the efforts' summaries and messages are."""

from __future__ import annotations

import json
import random
import re

from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.manifest.effort_list import save_manifest
from ccm_tui.core.text.tokens import TokenCounter
from tests.helpers.mcp_session import MODEL, mcp_server, sessions_root

WORDS = (
    "token refresh cache database pool index query latency queue consumer partition deploy docker helm chart "
    "terraform module bucket trace metric alert budget invoice travel hotel flight recipe garden python router "
    "middleware session cookie header proxy certificate migration schema replica failover"
).split()


def long_sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def build_wordy_session(directory, efforts: int = 30, messages: int = 20) -> None:
    """Efforts with long summaries and long messages, each mentioning the words searched for."""
    rng = random.Random(7)
    (directory / "efforts").mkdir(parents=True)
    entries = []
    for i in range(efforts):
        eid = f"harbour-pelican-investigation-number-{i:03d}-with-a-long-descriptive-id"[:64].rstrip("-")
        lines = []
        for j in range(messages):
            content = long_sentence(rng, 60)
            if j % 5 == 2:
                content = f"{long_sentence(rng, 25)} the pelican at the harbour {long_sentence(rng, 35)}"
            lines.append(json.dumps({"role": "user" if j % 2 == 0 else "assistant", "content": content, "ts": ""}))
        (directory / "efforts" / f"{eid}.jsonl").write_text("\n".join(lines) + "\n")
        summary = f"Pelican harbour case {i}: " + long_sentence(rng, 45)
        entries.append(
            Effort(id=eid, status=CONCLUDED, summary=summary, name=f"Pelican harbour {i}", messages=messages)
        )
    save_manifest(directory / "manifest.yaml", entries)


async def test_ten_hits_fit_in_about_a_thousand_tokens():
    directory = sessions_root() / "default"
    build_wordy_session(directory)
    async with mcp_server() as client:
        found = await client.call("search", query="pelican harbour", limit=10)
    assert not found.error
    assert sum(1 for line in found.text.splitlines() if re.match(r"\d+\. ", line)) == 10
    tokens = TokenCounter(MODEL).count_text(found.text)
    assert tokens <= 1_100, f"{tokens} tokens:\n{found.text}"

    assert found.text.count("**pelican**") >= 10  # each hit still shows its match
