"""Boundary files: validation with clear one-line errors, and the turn plan."""

from __future__ import annotations

import pytest

from ccm_tui.replay.boundaries import BoundaryError, EffortSpan, load_boundaries, turn_plan, validate_spans


def write(tmp_path, text):
    path = tmp_path / "b.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file(tmp_path):
    path = write(
        tmp_path,
        "transcript: x.md\nefforts:\n  - {id: b, first_turn: 4, last_turn: 6}\n"
        "  - {id: a, first_turn: 1, last_turn: 3, note: first}\n",
    )
    assert load_boundaries(path, 6) == [EffortSpan("a", 1, 3), EffortSpan("b", 4, 6)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "efforts:\n  - {id: a, first_turn: 1, last_turn: 4}\n  - {id: b, first_turn: 3, last_turn: 5}\n",
            "efforts 'a' (turns 1–4) and 'b' (turns 3–5) overlap",
        ),
        (
            "efforts:\n  - {id: a, first_turn: 1, last_turn: 9}\n",
            "last_turn 9 is past the end (the transcript has 6 turns)",
        ),
        ("efforts:\n  - {id: a, first_turn: 0, last_turn: 2}\n", "turns start at 1"),
        ("efforts:\n  - {id: a, first_turn: 4, last_turn: 2}\n", "first_turn 4 is after last_turn 2"),
        ("efforts:\n  - {id: Auth Bug, first_turn: 1, last_turn: 2}\n", "bad id 'Auth Bug'"),
        ("efforts:\n  - {id: ../x, first_turn: 1, last_turn: 2}\n", "bad id '../x'"),
        ("efforts:\n  - {id: a, first_turn: 1}\n", "missing 'last_turn'"),
        ("efforts:\n  - {id: a, first: 1, first_turn: 1, last_turn: 2}\n", "unknown key(s) first"),
        ("efforts:\n  - {id: a, first_turn: true, last_turn: 2}\n", "first_turn must be a whole number"),
        ("efforts:\n  - {id: a, first_turn: '1', last_turn: 2}\n", "first_turn must be a whole number"),
        ("efforts: []\n", "'efforts' is empty"),
        ("efforts: {a: 1}\n", "'efforts' must be a list"),
        ("- just text\n", "effort #1 must be a mapping"),
        ("hello: world\n", "expected a mapping with an 'efforts' list"),
        ("efforts: [\n", "not valid YAML at line"),
        ("efforts:\n  - {id: a, first_turn: 1, last_turn: 2}\nefort: x\n", "unknown top-level key(s) efort"),
    ],
)
def test_errors_are_one_clear_line(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(BoundaryError) as err:
        load_boundaries(path, 6)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert str(path) in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(BoundaryError, match="no such file"):
        load_boundaries(tmp_path / "nope.yaml", 3)


def test_a_repeated_id_reopens_the_effort():
    spans = validate_spans(
        [
            {"id": "a", "first_turn": 1, "last_turn": 2},
            {"id": "b", "first_turn": 3, "last_turn": 3},
            {"id": "a", "first_turn": 5, "last_turn": 6},
        ],
        6,
    )
    plan = turn_plan(spans)
    assert plan[1] == {"open": "a", "effort": "a"}
    assert plan[2] == {"close": "a"}
    assert plan[3] == {"open": "b", "effort": "b", "close": "b"}
    assert plan[5] == {"reopen": "a", "effort": "a"}
    assert plan[6] == {"close": "a"}
    assert 4 not in plan  # an aside: ambient
