"""The user's edits in the lifecycle (issue 41): rename keeps the id, a summary edit keeps the model's in
the event log, a merge cut by a crash before its commit completes when run again without doubling lines."""

from __future__ import annotations

import json

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

    def killed() -> None:
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
