"""Refusals are one bounded line (issue 33, hole 11): a bad slash command is not preceded by the whole usage,
a refusal naming the open efforts names a few, and the MCP session name is described as its pattern checks it."""

from __future__ import annotations

import re

from ccm_tui.cli import main
from ccm_tui.config import Settings
from ccm_tui.core.efforts.operations import ActionContext, find_effort
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.errors import EffortNotFound


def test_an_unknown_slash_command_is_its_reason_alone(tmp_path, capsys):
    assert main(["send", "--session-dir", str(tmp_path / "s"), "/nosuchcommand"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "ccm-tui: error: unknown command /nosuchcommand — /help lists them (// sends a message that starts with /)"
    ]


def test_no_effort_with_an_id_names_a_few_open_ones(tmp_path):
    engine = open_engine(tmp_path / "s", Settings(), probe_model_window=False)
    try:
        session = engine._session
        from ccm_tui.core.efforts import lifecycle

        for i in range(40):
            lifecycle.open_effort(session, f"topic {i:02d}", turn=1)
        ctx = ActionContext(session=session, turn=1, llm=None)
        try:
            find_effort(ctx, "x" * 5_000)
        except EffortNotFound as exc:
            said = str(exc)
        else:
            raise AssertionError("an unknown id was found")
    finally:
        engine.close()
    assert "topic-00, topic-01, topic-02, topic-03, topic-04 and 35 more" in said
    assert len(said) < 300 and "\n" not in said


def test_the_session_names_description_says_what_its_pattern_checks():
    from ccm_tui.memory_server import descriptions
    from ccm_tui.memory_server.scope import SESSION_NAME_PATTERN

    for text in (descriptions.SESSION, descriptions.SEARCH_SESSION):
        assert "64 characters" in text and "'/'" in text and "'\\'" in text and "control" in text
    pattern = re.compile(SESSION_NAME_PATTERN)
    assert pattern.match("work notes") and pattern.match("é-2") and pattern.match("x" * 64)
    assert not any(pattern.match(bad) for bad in ("a/b", "a\\b", "a\x1bb", "x" * 65, ""))
