"""The durable-write primitives never follow a symbolic link, even one planted after the session
was opened."""

from __future__ import annotations

import os

import pytest

from ccm_tui.core.session.session import SessionLock
from ccm_tui.core.storage.durable import StoreError, append_jsonl, read_jsonl, read_jsonl_tail


@pytest.fixture
def planted(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link = tmp_path / "session" / "raw.jsonl"
    link.parent.mkdir()
    os.symlink(victim, link)
    return victim, link


def test_append_refuses_a_link(planted):
    victim, link = planted
    with pytest.raises(StoreError, match="is a symbolic link"):
        append_jsonl(link, [{"role": "user", "content": "x"}])
    assert victim.read_text() == "precious\n"


def test_reads_refuse_a_link(planted):
    victim, link = planted
    with pytest.raises(StoreError, match="is a symbolic link"):
        read_jsonl(link)
    with pytest.raises(StoreError, match="is a symbolic link"):
        read_jsonl_tail(link, 10)


def test_the_lock_refuses_a_link(planted):
    victim, link = planted
    os.symlink(victim, link.parent / ".lock")
    with pytest.raises(StoreError, match="is a symbolic link"):
        SessionLock(link.parent).try_acquire()
    assert victim.read_text() == "precious\n"
