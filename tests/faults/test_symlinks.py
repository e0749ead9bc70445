"""Session files planted as symbolic links must never make the app write outside the session."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.helpers.openai_server import call, text, tool_calls


@pytest.mark.parametrize(
    "name", [".lock", "raw.jsonl", "events.jsonl", "efforts/alpha.jsonl", "efforts", "manifest.yaml"]
)
def test_a_symlinked_session_file_is_refused_and_the_victim_untouched(ccm, tmp_path, name):
    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"))
    ccm.send("work on alpha")
    victim = tmp_path / "victim"
    if name == "efforts":
        victim.mkdir()
        (victim / "alpha.jsonl").write_text("precious\n")
        shutil.rmtree(ccm.dir / name)
    else:
        victim.write_text("precious\n")
        (ccm.dir / name).unlink(missing_ok=True)
    os.symlink(victim, ccm.dir / name)
    before = {p: p.read_bytes() for p in [victim, *victim.glob("*")] if p.is_file()}
    ccm.server.push(text("reply"))
    rc, out, err = ccm.run(
        "send",
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        "more on alpha",
    )
    assert rc == 1
    assert "is a symbolic link" in err and err.count("\n") == 1
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(victim.glob("*")) == sorted(p for p in before if p != victim)
    rc, out, err = ccm.run("status", "--session-dir", str(ccm.dir))
    assert rc == 1 and "is a symbolic link" in err


def test_a_symlinked_session_directory_is_allowed(ccm, tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    os.symlink(real, ccm.dir)
    ccm.server.push(text("hi"))
    assert ccm.send("hello")["reply"] == "hi"
    assert (real / "raw.jsonl").exists()


@pytest.mark.parametrize("name", ["derived.sqlite", "derived.sqlite-wal"])
def test_search_refuses_a_symlinked_index_and_writes_nothing_through_it(ccm, tmp_path, name):
    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"))
    ccm.send("work on alpha")
    ccm.run("search", "--session-dir", str(ccm.dir), "alpha")
    victim = tmp_path / "victim.sqlite"
    shutil.copy(ccm.dir / "derived.sqlite", victim)  # a real database elsewhere: SQLite would open it
    for derived in ccm.dir.glob("derived.sqlite*"):
        derived.unlink()
    if name != "derived.sqlite":
        shutil.copy(victim, ccm.dir / "derived.sqlite")
        victim.write_bytes(b"")
    os.symlink(victim, ccm.dir / name)
    before = victim.read_bytes()
    rc, out, err = ccm.run("search", "--session-dir", str(ccm.dir), "alpha")
    assert rc == 1
    assert "is a symbolic link" in err and err.count("\n") == 1
    assert victim.read_bytes() == before
    assert not list(tmp_path.glob("victim.sqlite-*"))  # no WAL beside the victim
