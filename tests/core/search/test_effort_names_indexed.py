"""Effort names reach the search index through the engine (the path of ``ccm-tui search`` and the TUI)."""

from __future__ import annotations

from ccm_tui.core.engine.opening import search_session
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.session.session import Session


def test_a_word_only_in_the_effort_name_finds_it(tmp_path):
    session = Session.open(tmp_path / "s")
    effort = Effort(id="q3", name="Quarterly budget review", status=CONCLUDED, summary="Numbers agreed with finance.")
    session.efforts.add(effort)
    session.append_effort(effort, [{"role": "user", "content": "let's go through the spreadsheet"}])
    session.save_manifest()
    session.close()

    hits = search_session(tmp_path / "s", "quarterly")

    assert [h.id for h in hits] == ["q3"]
