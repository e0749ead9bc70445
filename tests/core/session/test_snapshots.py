"""The session schema is checked on open: an older session is migrated, a newer one refused in plain words."""

from __future__ import annotations

import json

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import start_engine
from ccm_tui.core.session.snapshots import MIGRATIONS, SCHEMA_VERSION, SessionTooNew, migrated, schema_of


def write_state(directory, **values) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "session_state.json").write_text(json.dumps({"turn": 3, **values}))


def test_every_older_schema_has_a_step_to_the_next():
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION))
    data, steps = migrated({"schema": 1, "turn": 3})
    assert data["schema"] == SCHEMA_VERSION and steps == list(range(1, SCHEMA_VERSION)) and data["turn"] == 3


@pytest.mark.parametrize("value", [None, "2", -4, True, 0])
def test_a_missing_or_damaged_schema_reads_as_the_first(value):
    assert schema_of({} if value is None else {"schema": value}) == 1


def test_an_older_session_is_brought_up_to_date_once(tmp_path):
    directory = tmp_path / "s"
    write_state(directory, schema=1)
    engine = start_engine(directory, Settings())
    try:
        assert engine.turn == 3
    finally:
        engine.close()
    assert json.loads((directory / "session_state.json").read_text())["schema"] == SCHEMA_VERSION
    events = [json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()]
    migrations = [e for e in events if e["event"] == "session_migrated"]
    assert len(migrations) == 1 and migrations[0]["schema_from"] == 1
    start_engine(directory, Settings()).close()  # a second open migrates nothing
    events = [json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()]
    assert len([e for e in events if e["event"] == "session_migrated"]) == 1


def test_a_newer_session_is_refused_before_anything_is_written(tmp_path):
    directory = tmp_path / "s"
    write_state(directory, schema=SCHEMA_VERSION + 1)
    before = sorted(p.name for p in directory.iterdir())
    with pytest.raises(SessionTooNew) as caught:
        start_engine(directory, Settings())
    assert "written by a newer ccm-tui" in str(caught.value) and "upgrade" in str(caught.value)
    assert not (directory / "events.jsonl").exists()
    assert sorted(p.name for p in directory.iterdir() if p.name not in (".lock", "efforts")) == before


def test_the_cli_says_so_in_one_line(tmp_path, capsys):
    from ccm_tui.cli import main

    directory = tmp_path / "s"
    write_state(directory, schema=SCHEMA_VERSION + 5)
    assert main(["status", "--session-dir", str(directory)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "newer ccm-tui" in err
