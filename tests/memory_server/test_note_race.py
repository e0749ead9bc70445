"""A note whose write was acknowledged is found by the next search, however many come at once.

A search once answered "Nothing found" for a note acknowledged before it (seen once, with an older
harness, while twenty notes went in parallel). Here K tasks each loop {remember a note with a word of
its own → the acknowledgement → search that word at once} against the real ``ccm-tui mcp
--allow-writes``: in one session, and across several with ``--all-sessions`` (the search naming the
note's session, or searching them all), and twenty sessions under 64 descriptors (readers and write
controllers closed and opened again as sessions take turns); one more task searches a word of every
note meanwhile, so the readers sync the index while notes are written. Every search must find its note.
``CCM_NOTE_RACE_PAIRS`` (pairs per configuration) and ``CCM_NOTE_RACE_TASKS`` make it a stress run:
`CCM_NOTE_RACE_PAIRS=1000 CCM_NOTE_RACE_TASKS=16 pytest -s tests/memory_server/test_note_race.py`
prints each configuration's count. 18,700 pairs so far (8 to 24 tasks, two runs at once on two cores):
none missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers.mcp_session import Client, mcp_server, sessions_root

PAIRS = int(os.environ.get("CCM_NOTE_RACE_PAIRS", "120"))
TASKS = int(os.environ.get("CCM_NOTE_RACE_TASKS", "8"))


@dataclass
class Tally:
    pairs: int = 0
    missed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # writes not acknowledged (said why, wrote nothing)


async def note_then_search(client: Client, word: str, session: str | None, search_session: str | None) -> str:
    """'' when the acknowledged note was found at once; else what the search (or the write) said."""
    where = {"session": session} if session else {}
    noted = await client.call("remember", text=f"the gizmo setting is {word}", **where)
    if noted.error:
        return "refused: " + noted.text
    asked = {"session": search_session} if search_session else {}
    found = await client.call("search", query=word, **asked)
    return "" if word in found.text and not found.error else f"missed {word}: {found.text}"


async def stress(client: Client, sessions: list[str | None], *, all_sessions_search: bool, tag: str) -> Tally:
    tally = Tally()
    count = iter(range(PAIRS))

    async def worker(k: int) -> None:
        for i in count:
            session = sessions[(i + k) % len(sessions)]
            word = f"{tag}q{i:05d}x"
            said = await note_then_search(client, word, session, None if all_sessions_search else session)
            tally.pairs += 1
            if said.startswith("refused"):
                tally.refused.append(said)
            elif said:
                tally.missed.append(said)

    async def hammer() -> None:
        """Searches of a word in every note, meanwhile: each syncs the index while notes are written."""
        while tally.pairs < PAIRS:
            await client.call("search", query="gizmo", **({"session": sessions[0]} if sessions[0] else {}))

    await asyncio.gather(hammer(), *(worker(k) for k in range(TASKS)))
    print(f"{tag}: {tally.pairs} pairs, {len(tally.missed)} missed, {len(tally.refused)} refused, {TASKS} tasks")
    return tally


def copies(template: Path, names: list[str]) -> None:
    for name in names:
        shutil.copytree(template, sessions_root() / name)


@pytest.mark.slow
async def test_notes_in_one_session_are_found_at_once(session_dir):
    async with mcp_server("--allow-writes") as client:
        tally = await stress(client, [None], all_sessions_search=False, tag="one")
    assert tally.pairs == PAIRS and not tally.refused, tally.refused[:3]
    assert not tally.missed, f"{len(tally.missed)} of {tally.pairs} missed: {tally.missed[:3]}"


@pytest.mark.slow
@pytest.mark.parametrize("all_sessions_search", [False, True], ids=["named", "all"])
async def test_notes_across_sessions_are_found_at_once(template, all_sessions_search):
    names = ["s0", "s1", "s2"]
    copies(template, names)
    async with mcp_server("--allow-writes", "--all-sessions") as client:
        tally = await stress(client, list(names), all_sessions_search=all_sessions_search, tag="many")
    assert tally.pairs == PAIRS and not tally.refused, tally.refused[:3]
    assert not tally.missed, f"{len(tally.missed)} of {tally.pairs} missed: {tally.missed[:3]}"


@contextlib.asynccontextmanager
async def limited_server(descriptors: int, *args: str) -> AsyncIterator[Client]:
    """The server started under a descriptor limit (the soft limit is lowered for the spawn only): its
    readers and write controllers are closed and opened again as sessions take turns."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, hard))
    try:
        async with mcp_server(*args) as client:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
            yield client
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.slow
async def test_notes_across_many_sessions_under_a_descriptor_limit_are_found_at_once(template):
    names = [f"s{i:02d}" for i in range(20)]
    copies(template, names)
    async with limited_server(64, "--allow-writes", "--all-sessions") as client:
        tally = await stress(client, list(names), all_sessions_search=False, tag="lim")
    assert tally.pairs == PAIRS
    assert not tally.missed, f"{len(tally.missed)} of {tally.pairs} missed: {tally.missed[:3]}"
