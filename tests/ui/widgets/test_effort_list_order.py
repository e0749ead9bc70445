"""One order of efforts everywhere (issue 38: concluded efforts were listed in three orders across the
sidebar, the command palette and ``ccm-tui status``): open, expanded, concluded in working memory, then
out of it, each the latest conclusion first — derived once, in the core (``listing_order``)."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from ccm_tui.config import Settings
from ccm_tui.core.api import read_status, status_text
from ccm_tui.core.efforts import lifecycle
from ccm_tui.core.session.session import Session
from ccm_tui.ui.palette import effort_commands
from ccm_tui.ui.widgets.effort_list import build_rows
from tests.helpers.sessionkit import exchange, open_effort


def test_the_sidebar_the_palette_and_status_list_efforts_in_one_order(tmp_path, monkeypatch) -> None:
    clock = itertools.count(1)
    monkeypatch.setattr(lifecycle, "now_iso", lambda: f"2026-01-01T00:00:{next(clock):02d}.000Z")
    with Session.open(tmp_path / "s") as session:
        made = {name: open_effort(session, name, exchange(f"about {name}", "noted")) for name in "abcde"}
        for name in "caeb":  # concluded in another order than made
            lifecycle.conclude(session, made[name], f"{name} done.", turn=session.state.turn)
        lifecycle.reopen(session, made["a"], turn=session.state.turn)
        lifecycle.conclude(session, made["a"], "a done again.", turn=session.state.turn)  # now the latest
        lifecycle.evict_summary(session, "e")  # out of working memory
        session.save_view()
    status, data = read_status(tmp_path / "s", Settings())
    expected = ["d", "a", "b", "c", "e"]

    words = [line.replace(":", " ").split() for line in status_text(status, data).splitlines()[1:]]
    in_status = [w[1] if w[0] == "▶" else w[0] for w in words if w and (w[1] if w[0] == "▶" else w[0]) in expected]
    rows, _ = build_rows(status.efforts, 3)
    sidebar = SimpleNamespace(efforts={e.id: e for e in status.efforts})
    chat = SimpleNamespace(query_one=lambda _cls: sidebar, efforts=SimpleNamespace(run=lambda *_: None))
    in_palette = list(dict.fromkeys(label.rsplit(": ", 1)[1] for label, *_ in effort_commands(chat)))  # type: ignore[arg-type]

    assert in_status == [row.effort_id for row in rows] == in_palette == expected
