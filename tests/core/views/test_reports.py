"""Search results as text with the spans of the words found (issue 30: `/search` and `ccm-tui search`
printed raw `**term**` and lost the indent of wrapped lines): the core's report carries highlight
spans, a terminal gets bold (only a terminal: a pipe gets plain text) and wrapped lines keep their
indent."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccm_tui.commands import search as search_command
from ccm_tui.core.api import render_report, search_report, search_session
from ccm_tui.core.search._results import Marked
from ccm_tui.core.session.session import Session
from ccm_tui.core.views.reports import ReportLine, search_text
from tests.helpers.sessionkit import concluded_effort, exchange

OPEN, CLOSE = "\x02", "\x03"
HOSTILE = [
    "my pyproject has a [tool.poetry] table and a [pgbouncer] section",
    "please read the [README] first, then check the [docs](https://example.com/docs) page",
    "a [/] closer, a [bold]tag[/bold], [link=https://x.y]here[/link] and **stars** and a \\ backslash",
]


@given(st.lists(st.tuples(st.text(alphabet=st.characters(blacklist_characters=OPEN + CLOSE)), st.booleans())))
def test_marked_text_keeps_the_text_as_it_is_and_its_spans_cover_the_marked_pieces(pieces):
    marked = Marked.from_markers("".join(f"{OPEN}{t}{CLOSE}" if m else t for t, m in pieces))
    assert marked.text == "".join(t for t, _ in pieces)
    assert [marked.text[a:b] for a, b in marked.spans] == [t for t, m in pieces if m and t]
    assert all(b <= c for (_, b), (c, _) in zip(marked.spans, marked.spans[1:]))


def test_lines_and_cuts_keep_their_own_spans():
    marked = Marked.from_markers(f"user: the {OPEN}pool{CLOSE}\nassistant: {OPEN}pgbouncer{CLOSE} pool_size")
    first, second = marked.lines()
    assert first.text[first.spans[0][0] : first.spans[0][1]] == "pool"
    assert second.text[slice(*second.spans[0])] == "pgbouncer"
    assert second.cut(14).spans == ((11, 14),) and marked.markdown().startswith("user: the **pool**")


@pytest.fixture
def session_dir(tmp_path):
    with Session.open(tmp_path / "s") as session:
        chat = [m for line in HOSTILE for m in exchange(line, "Noted: " + line)]
        concluded_effort(session, "config notes", chat, summary="Config notes: pgbouncer and poetry.")
    return tmp_path / "s"


@pytest.mark.parametrize(
    ("query", "found"),
    [("pgbouncer", ["pgbouncer"]), ("README docs", ["README", "docs"]), ("stars backslash", ["stars", "backslash"])],
)
def test_the_report_shows_logged_text_as_logged_with_the_found_words_as_spans(session_dir, query, found):
    hits = search_session(session_dir, query)
    passage = [line for line in search_report(hits) if line.indent == 11]
    logged = {
        f"{role}: {prefix}{line}" for line in HOSTILE for role, prefix in (("user", ""), ("assistant", "Noted: "))
    }
    assert passage and all(line.text in logged for line in passage)  # brackets, links, ** and \\ as logged
    marked = [line.text[a:b] for line in passage for a, b in line.spans]
    assert marked and {m.lower() for m in marked} <= {f.lower() for f in found}
    assert "**" not in search_text(hits).replace("**stars**", "")  # no markup added to the plain text


def test_a_terminal_gets_bold_and_wrapped_lines_keep_their_indent():
    text = "user: the connection pool of pgbouncer runs out under load at night"
    line = ReportLine(11, text, ((text.index("pgbouncer"), text.index("pgbouncer") + 9),))
    plain = render_report([line])
    assert plain == " " * 11 + line.text and "\x1b" not in plain
    wrapped = render_report([line], width=40, bold=True).split("\n")
    assert len(wrapped) > 1 and all(
        w.startswith(" " * 11) and len(w.replace("\x1b[1m", "").replace("\x1b[22m", "")) <= 40 for w in wrapped
    )
    assert "\x1b[1mpgbouncer\x1b[22m" in "".join(wrapped)
    assert " ".join(w.replace("\x1b[1m", "").replace("\x1b[22m", "").strip() for w in wrapped) == line.text


def test_a_span_split_by_the_wrap_is_bold_on_both_parts():
    line = ReportLine(2, "aaaa bbbb cccc dddd", ((5, 14),))
    out = render_report([line], width=12, bold=True).split("\n")
    assert out == ["  aaaa \x1b[1mbbbb\x1b[22m", "  \x1b[1mcccc\x1b[22m dddd"]


def test_control_characters_in_logged_text_never_reach_the_terminal_and_spans_still_point_right():
    line = ReportLine.of(0, Marked.from_markers(f"a \x1b]52;c;ZXZpbA==\x07 {OPEN}hit{CLOSE} \x1b[2J end"))
    assert "\x1b" not in line.text and line.text[slice(*line.spans[0])] == "hit"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ccm_tui_search_prints_bold_on_a_terminal_and_plain_in_a_pipe(session_dir, monkeypatch, capsys):
    from ccm_tui.cli import main

    assert main(["search", "--session-dir", str(session_dir), "pgbouncer"]) == 0
    piped = capsys.readouterr().out
    assert "pgbouncer" in piped and "**" not in piped.replace("**stars**", "") and "\x1b" not in piped
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stdout", terminal)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert main(["search", "--session-dir", str(session_dir), "pgbouncer"]) == 0
    assert "\x1b[1mpgbouncer\x1b[22m" in terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    assert not search_command.styled_output(terminal)
