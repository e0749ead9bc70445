"""The user's edits in the lifecycle (issue 41): rename keeps the id, a summary edit keeps the model's in
the event log, a merge cut by a crash before its commit completes when run again without doubling lines."""

from __future__ import annotations

import json
import os

import pytest

from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.efforts.states import Action, ActionRefused, EffortState, edit_actions
from ccm_tui.core.manifest.effort_list import load_manifest
from ccm_tui.core.session.session import MANIFEST_FILE, Session
from tests.helpers.sessionkit import concluded_effort, events, exchange, open_effort


@pytest.fixture
def session(tmp_path):
    session = Session.open(tmp_path / "s")
    yield session
    session.close()


def log_lines(session: Session, effort_id: str) -> list[dict]:
    return [json.loads(line) for line in session.effort_path(effort_id).read_text().splitlines()]


def test_the_edits_each_state_offers():
    assert edit_actions(EffortState.ACTIVE) == (Action.RENAME, Action.PIN)
    assert Action.UNPIN in edit_actions(EffortState.EVICTED, pinned=True)
    assert Action.PIN not in edit_actions(EffortState.CONCLUDED, pinned=True)
    assert Action.MERGE in edit_actions(EffortState.CONCLUDED)


def test_rename_and_summary_edit_change_fields_not_ids(session):
    effort = concluded_effort(session, "trip", exchange("q", "a"), summary="The model's summary.")
    lifecycle.rename(session, effort, "Japan 2027")
    lifecycle.edit_summary(session, effort, "Mine.", turn=1)
    [saved] = load_manifest(session.dir / MANIFEST_FILE)
    assert (saved.id, saved.name, saved.summary, saved.summary_by) == ("trip", "Japan 2027", "Mine.", "user")
    assert events(session.dir, "summary_edited")[-1]["replaced"] == "The model's summary."
    with pytest.raises(ActionRefused, match="is open"):
        lifecycle.edit_summary(session, open_effort(session, "other"), "x", turn=1)
    lifecycle.reopen(session, effort, turn=2)
    lifecycle.conclude(session, effort, "A new conclusion.", turn=3)
    assert (effort.summary, effort.summary_by) == ("A new conclusion.", None)  # the model's again


def test_a_merge_cut_before_its_commit_completes_on_the_rerun_without_doubling_lines(session, monkeypatch):
    keep = concluded_effort(session, "keep", exchange("keep q", "keep a"), summary="Keep.")
    other = concluded_effort(session, "other", exchange("other q", "other a"), summary="Other.")
    real_save = session.save_manifest

    def killed(*_events) -> None:
        raise OSError("killed before the journal entry")

    monkeypatch.setattr(session, "save_manifest", killed)
    with pytest.raises(OSError):
        lifecycle.merge(session, other, keep, "Both.", turn=4)
    monkeypatch.setattr(session, "save_manifest", real_save)
    other.merged_into = None  # what a relaunch reads: no merge recorded
    assert len(log_lines(session, "keep")) == 5  # the lines were appended: marker + 2

    assert lifecycle.merge(session, other, keep, "Both.", turn=4) == 2
    lines = log_lines(session, "keep")
    assert [line["content"] for line in lines if line["role"] != "system"] == ["keep q", "keep a", "other q", "other a"]
    assert sum(1 for line in lines if line.get("merged_from") == "other") == 1
    saved = {e.id: e for e in load_manifest(session.dir / MANIFEST_FILE)}
    assert saved["other"].merged_into == "keep" and saved["keep"].summary == "Both."
    assert "other" not in session.view.summaries
    with pytest.raises(ActionRefused, match="already merged"):
        lifecycle.merge(session, other, keep, None, turn=5)


def appended(session: Session, act) -> tuple[list[str], int]:
    """The events ``act`` logs, and the fsyncs it makes (each append to a log is one)."""
    path = session.dir / "events.jsonl"
    before = path.stat().st_size
    real, syncs = os.fsync, []

    def fsync(fd: int) -> None:
        syncs.append(fd)
        real(fd)

    os.fsync = fsync
    try:
        act()
    finally:
        os.fsync = real
    with open(path, "rb") as file:
        file.seek(before)
        return [json.loads(line)["event"] for line in file], len(syncs)


@pytest.mark.parametrize("edit", ["summary", "pin", "merge"])
def test_an_edit_that_brings_an_evicted_summary_back_is_one_append_the_edit_first(session, edit):
    keep = concluded_effort(session, "keep", exchange("keep q", "keep a"), summary="Keep.")
    other = concluded_effort(session, "other", exchange("other q", "other a"), summary="Other.")
    lifecycle.evict_summary(session, "keep")
    session.save_view()
    act, event, log_appends = {
        "summary": (lambda: lifecycle.edit_summary(session, keep, "Mine.", turn=3), "summary_edited", 0),
        "pin": (lambda: lifecycle.set_pinned(session, keep, True, turn=3), "effort_pinned", 0),
        "merge": (lambda: lifecycle.merge(session, other, keep, "Both.", turn=3), "efforts_merged", 1),
    }[edit]

    logged, fsyncs = appended(session, act)

    assert logged == ["efforts_saved", event, "summary_restored"]  # the record, the edit, what it brought back
    assert fsyncs == 1 + log_appends  # one append to events.jsonl (and the merge's lines to the log)
    assert session.view.summaries["keep"] == 3
    assert json.loads((session.dir / "expanded.json").read_text())["summaries"]["keep"] == 3
