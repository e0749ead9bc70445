"""``ccm-tui replay`` end to end on a small transcript: JSON contract, determinism, budget, plots."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ccm_tui.cli import main
from tests.helpers.transcripts import THREE_TOPICS

CORPUS = Path("/work/shared/corpus")
BOUNDARIES = Path(__file__).resolve().parents[2] / "benchmarks" / "boundaries"


def run_json(capsys, *args):
    code = main(["replay", str(THREE_TOPICS), "--json", *args])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_json_contract(capsys):
    doc = run_json(capsys)
    assert doc["segmenter"] == "offline" and doc["summarizer"] == "offline"
    assert len(doc["turns"]) == 12
    for i, turn in enumerate(doc["turns"], 1):
        assert turn["turn"] == i
        for key in ("naive", "ccm", "open", "concluded", "evicted"):
            assert type(turn[key]) is int, key
    end = doc["end"]
    for key in ("naive", "ccm", "max_ccm", "budget"):
        assert type(end[key]) is int, key
    assert isinstance(end["savings"], float) and 0 <= end["savings"] < 1
    assert end["savings"] == pytest.approx(1 - end["ccm"] / end["naive"], abs=1e-4)
    # the three topics are found, opened and concluded; nothing is left open
    assert [e["id"].split("-")[0] for e in doc["efforts"]] == ["bread", "brake", "tax"]
    assert doc["turns"][-1]["open"] == 0 and doc["turns"][-1]["concluded"] == 3
    # naive grows with the conversation
    naive = [t["naive"] for t in doc["turns"]]
    assert naive == sorted(naive) and end["naive"] >= naive[-1]
    assert all(e["summary"] for e in doc["efforts"])


def test_two_runs_are_identical(capsys):
    main(["replay", str(THREE_TOPICS), "--json"])
    first = capsys.readouterr().out
    main(["replay", str(THREE_TOPICS), "--json"])
    assert capsys.readouterr().out == first


def test_no_request_ever_passes_a_tight_budget(capsys, monkeypatch, tmp_path):
    # a giant agent response (a log dump) in turn 6, and a tight budget
    dump = "\n".join(f"brake log line {i}: pad wear {i % 7} mm, cable tension {i % 5} N" for i in range(400))
    text = THREE_TOPICS.read_text(encoding="utf-8").replace(
        "Bed the new brake pads in", f"Here is the log:\n\n{dump}\n\nBed the new brake pads in"
    )
    transcript = tmp_path / "giant.aider.md"
    transcript.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "3500")
    assert main(["replay", str(transcript), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["end"]["budget"] == 3500
    assert all(t["ccm"] <= 3500 and t["after"] <= 3500 for t in doc["turns"])
    assert doc["end"]["max_ccm"] <= 3500 and doc["end"]["over_budget_turns"] == []
    assert doc["caps"]["replies_capped"] > 0  # replies were cut to fit, and that is reported
    assert doc["end"]["naive"] > doc["end"]["naive_logged"]  # naive counts what the caps left out


def test_boundaries_file_and_text_output(capsys, tmp_path):
    efforts = tmp_path / "b.yaml"
    efforts.write_text(
        "efforts:\n  - {id: bread, first_turn: 1, last_turn: 4}\n  - {id: brakes, first_turn: 5, last_turn: 8}\n",
        encoding="utf-8",
    )
    doc = run_json(capsys, "--efforts", str(efforts))
    assert doc["segmenter"] == "file"
    assert [t["logged_to"] for t in doc["turns"]][8:] == ["ambient"] * 4  # turns 9-12 are in no effort
    assert main(["replay", str(THREE_TOPICS), "--efforts", str(efforts)]) == 0
    out = capsys.readouterr().out
    assert "efforts: 2 from the boundaries file" in out and "savings" in out and "(ambient)" in out


def test_bad_boundaries_are_a_one_line_runtime_error(capsys, tmp_path):
    efforts = tmp_path / "b.yaml"
    efforts.write_text("efforts:\n  - {id: a, first_turn: 1, last_turn: 40}\n", encoding="utf-8")
    assert main(["replay", str(THREE_TOPICS), "--efforts", str(efforts)]) == 1
    err = capsys.readouterr().err.strip()
    assert "past the end (the transcript has 12 turns)" in err and "\n" not in err


def test_svg_plot_is_well_formed(capsys, tmp_path):
    plot = tmp_path / "replay.svg"
    run_json(capsys, "--plot", str(plot))
    root = ET.parse(plot).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert len(root.findall(".//s:polyline", ns)) == 3  # naive + ccm on top, ccm zoomed below
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "naive" in texts and "ccm" in texts and "budget" in texts and "turn" in texts


def test_plot_file_type(capsys, tmp_path):
    assert main(["replay", str(THREE_TOPICS), "--plot", str(tmp_path / "x.txt")]) == 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert main(["replay", str(THREE_TOPICS), "--plot", str(tmp_path / "x.png")]) == 1
        assert "use an .svg" in capsys.readouterr().err


def test_missing_transcript(capsys, tmp_path):
    assert main(["replay", str(tmp_path / "nope.md")]) == 1
    assert "no such file" in capsys.readouterr().err


@pytest.mark.skipif(not (CORPUS / "claude-code-jsonl" / "m-claude_f551142a.jsonl").is_file(), reason="no corpus")
def test_a_real_transcript_with_hand_boundaries(capsys):
    path = CORPUS / "claude-code-jsonl" / "m-claude_f551142a.jsonl"
    code = main(["replay", str(path), "--efforts", str(BOUNDARIES / "m-claude_f551142a.yaml"), "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["segmenter"] == "file"
    assert doc["end"]["ccm"] <= 5_000 and doc["end"]["max_ccm"] <= doc["end"]["budget"]
    assert {t["logged_to"] for t in doc["turns"][3:5]} == {"ambient"}  # the guest-passes aside


def _responder(segmentation: str):
    from tests.helpers.openai_server import text

    def answer(body):
        system = body["messages"][0]["content"]
        if system.startswith("You split a conversation"):
            return text(segmentation)
        return text("MODEL SUMMARY of the effort.")

    return answer


def test_model_segments_and_summarizes(capsys, llm_server):
    llm_server.responder = _responder(
        '{"efforts": [{"id": "sourdough", "first_turn": 1, "last_turn": 4},'
        ' {"id": "bike brakes", "first_turn": 5, "last_turn": 8}, {"id": "tax", "first_turn": 9, "last_turn": 12}]}'
    )
    doc = run_json(capsys, "--model", "openai/fake-model", "--api-base", llm_server.base_url)
    assert doc["segmenter"] == "model" and doc["summarizer"] == "model"
    assert [e["id"] for e in doc["efforts"]] == ["sourdough", "bike-brakes", "tax"]
    assert all(e["summary"] == "MODEL SUMMARY of the effort." for e in doc["efforts"])
    # no model call for the replies: one segmentation request + one summary per effort
    assert len(llm_server.chat_requests()) == 4


def test_unusable_model_segmentation_falls_back_to_offline(capsys, llm_server):
    llm_server.responder = _responder("I think there are three topics.")
    doc = run_json(capsys, "--model", "openai/fake-model", "--api-base", llm_server.base_url)
    assert doc["segmenter"] == "offline" and doc["summarizer"] == "model"
    assert "model segmentation unusable" in doc["notes"][0]


def test_keep_session_leaves_a_real_session(capsys, tmp_path):
    import argparse

    import yaml

    from ccm_tui.commands.replay import run as run_replay

    session = tmp_path / "session"
    args = argparse.Namespace(
        transcript=THREE_TOPICS,
        efforts=None,
        model=None,
        api_base=None,
        format="auto",
        json=True,
        plot=None,
        debug=False,
        keep_session=session,
    )
    assert run_replay(args) == 0
    capsys.readouterr()
    manifest = yaml.safe_load((session / "manifest.yaml").read_text(encoding="utf-8"))
    assert [e["status"] for e in manifest["efforts"]] == ["concluded"] * 3
    assert all((session / e["raw_file"]).stat().st_size > 0 for e in manifest["efforts"])
    from ccm_tui.commands.common import UsageError

    with pytest.raises(UsageError, match="must be new or empty"):
        run_replay(args)
