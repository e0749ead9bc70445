"""A bound on the model calls of one file: the call plan, turns sharing a call, asking before going
past the budget, the hard ceiling, and a Ctrl+C that ends in one line — through the fake server,
which counts the requests. The campaign at scale is ``benchmarks/bench_call_budget.py``."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.core.models.litellm_client import LLMClient, LLMError
from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.restore import summarizer as sm
from ccm_tui.restore.call_plan import DEFAULT_MAX_CALLS, MAX_TURNS_PER_CALL, plan_calls
from ccm_tui.restore.pipeline import ModelCallMeter
from ccm_tui.restore.turns import ParsedTranscript, TurnRound
from tests.helpers.openai_server import FakeLLMServer, call, hang, text, tool_calls
from tests.helpers.restore_runs import MODEL, restore, run

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from ccm_tui.cli import main; sys.exit(main(sys.argv[1:]))"


def tiny_turns(path: Path, count: int) -> Path:
    """A Markdown chat export of ``count`` tiny turns (4 MB at 100,000)."""
    path.write_text("".join(f"**User:** q{n}\n\n**Assistant:** a{n}\n\n" for n in range(1, count + 1)))
    return path


def summaries_for(body: dict[str, Any]) -> str:
    """A TURN SUMMARY for every turn a request carries (one, or several sharing the call)."""
    numbers = re.findall(r"^CURRENT TURN (\d+):", body["messages"][-1]["content"], re.M)
    return "\n\n".join(
        f"TURN SUMMARY\n\nTurn number: {n}\nUser request summary: asked q{n}\nAgent response summary: said a{n}\n"
        f"Key outcomes: outcome {n}\nState changes: none\nArtifacts modified: none\n"
        "Constraints/assumptions added: none\nOpen questions after this turn: none"
        for n in numbers
    )


def model(body: dict[str, Any]):
    if body.get("tools"):
        return tool_calls(call("complete", {"findings": "- nothing to check"}))
    if "SESSION SUMMARY" in body["messages"][0]["content"]:
        return text("SESSION SUMMARY\n\nSummary: a long chat of small questions.")
    return text(summaries_for(body))


def turns(count: int, text_chars: int = 10) -> list[TurnRound]:
    return [TurnRound(n, [f"q{n}"], ["a" * text_chars], n, n) for n in range(1, count + 1)]


# ----------------------------------------------------------------------------- the plan
def test_within_the_budget_every_turn_has_its_own_call() -> None:
    plan = plan_calls(turns(100), evidence_rounds=8)
    assert plan.turn_calls == 100 and all(len(b) == 1 for b in plan.batches)
    assert plan.calls == 100 + 9 + 1 and not plan.over_budget
    assert plan.describe().startswith("up to 110 model call(s) (~")


def test_past_the_budget_small_turns_share_calls_as_few_as_it_allows() -> None:
    plan = plan_calls(turns(1_000), evidence_rounds=8, budget=500)
    assert [t.turn for b in plan.batches for t in b] == list(range(1, 1_001))  # every turn, in order
    assert max(len(b) for b in plan.batches) == 3 and plan.turn_calls == 334  # ceil(1000 / 490) = 3
    assert plan.calls <= 500 and not plan.over_budget
    assert "(up to 3 turns per call)" in plan.describe()


def test_large_turns_never_share_and_a_huge_file_is_over_any_budget() -> None:
    big = plan_calls(turns(1_000, text_chars=20_000), evidence_rounds=0, budget=100)
    assert all(len(b) == 1 for b in big.batches) and big.over_budget
    huge = plan_calls(turns(100_000), evidence_rounds=8)
    assert max(len(b) for b in huge.batches) == MAX_TURNS_PER_CALL
    assert huge.calls == 12_510 and huge.over_budget and huge.budget == DEFAULT_MAX_CALLS
    assert huge.ceiling == huge.calls + huge.calls // 10
    assert "--yes" in huge.refusal("x.md") and "12,510" in huge.refusal("x.md")


# ----------------------------------------------------------------------------- the command
@pytest.mark.slow
def test_a_100000_turn_file_makes_no_call_before_asking_and_says_its_estimate(
    capsys, llm_server, tmp_path: Path
) -> None:
    llm_server.responder = model
    transcript = tiny_turns(tmp_path / "chat.md", 100_000)
    rc, out, err = restore(capsys, llm_server, transcript, tmp_path / "ccm")
    assert rc == 1 and out == ""
    assert llm_server.chat_requests() == []
    estimate = next(line for line in err.splitlines() if "estimate:" in line)
    assert "up to 12,510 model call(s)" in estimate and "100,000 turn(s) in 12,500 call(s)" in estimate
    assert err.splitlines()[-1].startswith("ccm-tui: not imported: chat.md needs up to 12,510 model calls (~")
    assert "--yes" in err.splitlines()[-1] and "--max-turns" in err.splitlines()[-1]
    assert not (tmp_path / "ccm" / "manifest.yaml").exists()


class Terminal(io.StringIO):
    """Answers typed at a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("answer, imported", [("y\n", True), ("n\n", False), ("", False)])
def test_a_person_is_asked_on_a_terminal(capsys, llm_server, tmp_path, monkeypatch, answer, imported) -> None:
    llm_server.responder = model
    monkeypatch.setattr(sys, "stdin", Terminal(answer))
    transcript = tiny_turns(tmp_path / "chat.md", 60)
    rc, out, err = restore(capsys, llm_server, transcript, tmp_path / "ccm", "--max-calls", "10", "--max-searches", "1")
    assert "chat.md needs up to 11 model calls" in err and "Go ahead? [y/N]" in err
    if imported:
        assert rc == 0 and "60 turn(s)" in out
        assert len(llm_server.chat_requests()) <= 11  # 8 calls of up to 8 turns, 2 evidence, 1 summary: the plan
    else:
        assert rc == 1 and llm_server.chat_requests() == [] and "not imported" in err.splitlines()[-1]


def test_yes_goes_ahead_and_every_turn_keeps_its_own_summary(capsys, llm_server, tmp_path) -> None:
    llm_server.responder = model
    transcript = tiny_turns(tmp_path / "chat.md", 200)
    rc, out, err = restore(
        capsys, llm_server, transcript, tmp_path / "ccm", "--max-calls", "20", "--yes", "--json", "--dump-turns"
    )
    assert rc == 0, err
    assert "Go ahead" not in err and "estimate: up to 35 model call(s)" in err  # 25 calls of 8 turns, 9 + 1
    data = json.loads(out)
    assert [t["turn"] for t in data["turn_summaries"]] == list(range(1, 201))
    assert data["turn_summaries"][149]["key_outcomes"] == "outcome 150"
    assert data["cost"]["model_calls"] == len(llm_server.chat_requests()) <= 35


def test_a_bulk_restore_refuses_the_hostile_file_and_imports_the_others(capsys, llm_server, tmp_path) -> None:
    llm_server.responder = model
    folder = tmp_path / "chats"
    folder.mkdir()
    tiny_turns(folder / "a-small.md", 3)
    tiny_turns(folder / "b-hostile.md", 5_000)
    tiny_turns(folder / "c-small.md", 4)
    rc, out, err = restore(capsys, llm_server, folder, tmp_path / "ccm", "--skip-evidence-search", "--max-calls", "50")
    assert rc == 1
    table = {line.split()[0].rsplit("/", 1)[-1]: line for line in out.splitlines() if ".md" in line}
    assert "imported" in table["a-small.md"] and "imported" in table["c-small.md"]
    assert "failed: not imported: b-hostile.md needs up to 626 model calls" in table["b-hostile.md"]
    assert len(llm_server.chat_requests()) == (3 + 1) + (4 + 1)


def test_a_bulk_restore_keeps_to_one_budget_for_the_run_said_once(capsys, llm_server, tmp_path) -> None:
    """Six files of 2 turns (3 calls each) at --max-calls 6 made 18 calls unasked: the budget is the run's."""
    llm_server.responder = model
    folder = tmp_path / "chats"
    folder.mkdir()
    for n in range(6):
        (folder / f"chat-{n}.md").write_text(
            f"**User:** q1 of {n}\n\n**Assistant:** a1\n\n**User:** q2\n\n**Assistant:** a2\n"
        )
    rc, out, err = restore(capsys, llm_server, folder, tmp_path / "ccm", "--skip-evidence-search", "--max-calls", "6")
    assert rc == 1
    assert err.count("estimate for the run: 6 file(s) to import, up to 18 model call(s)") == 1
    assert len(llm_server.chat_requests()) <= 6
    table = [line for line in out.splitlines() if ".md" in line]
    assert sum(line.endswith(" imported") for line in table) == 2
    assert sum("the run would need more than its budget of 6" in line for line in table) == 4


def test_a_bulk_restore_over_the_budget_goes_ahead_whole_with_yes(capsys, llm_server, tmp_path) -> None:
    llm_server.responder = model
    folder = tmp_path / "chats"
    folder.mkdir()
    for n in range(3):
        (folder / f"chat-{n}.md").write_text(
            f"**User:** q1 of {n}\n\n**Assistant:** a1\n\n**User:** q2\n\n**Assistant:** a2\n"
        )
    rc, _, err = restore(
        capsys, llm_server, folder, tmp_path / "ccm", "--skip-evidence-search", "--max-calls", "4", "--yes"
    )
    assert rc == 0, err
    assert len(llm_server.chat_requests()) == 9 and "Go ahead?" not in err


def test_max_calls_must_be_positive(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as refused:  # argparse refuses it (tests/commands/test_numeric_options.py)
        run(capsys, "restore", str(tiny_turns(tmp_path / "c.md", 2)), "--max-calls", "0")
    assert refused.value.code == 2 and "--max-calls: must be from 1 to 1,000,000, got 0" in capsys.readouterr().err


# ----------------------------------------------------------------------------- turns sharing a call
@pytest.fixture
def llm(llm_server) -> LLMClient:
    return LLMClient(MODEL, api_base=llm_server.base_url, timeout=10)


async def test_a_shared_call_keeps_the_turn_by_turn_state(llm_server, llm) -> None:
    llm_server.responder = model
    parsed = ParsedTranscript("markdown", turns(7))
    batches = [parsed.turns[0:3], parsed.turns[3:6], parsed.turns[6:7]]
    result = await sm.summarize_turns(llm, parsed, TokenCounter(MODEL), batches=batches)
    requests = llm_server.chat_requests()
    assert len(requests) == 3
    assert [s.turn for s in result.summaries] == list(range(1, 8)) and result.notes == []
    second = requests[1]["messages"][-1]["content"]
    assert "these are turns 4 to 6 of 7" in second
    assert "Turn number: 3" in second.split("ACCUMULATED STATE")[0]  # the previous turn's summary
    state = second.split("ACCUMULATED STATE:")[1].split("CURRENT TURN 4:")[0]
    assert all(f"T{n}: asked q{n}" in state for n in (1, 2, 3))  # the state grew turn by turn
    assert "exactly 3 blocks" in requests[1]["messages"][0]["content"]
    assert "(none: this is the first turn summarized)" not in requests[0]["messages"][-1]["content"]
    assert "Turn number: 6" in requests[2]["messages"][-1]["content"]  # a batch's last turn leads the next


async def test_a_shared_answer_missing_a_turn_skips_that_turn_only(llm_server, llm) -> None:
    block = "TURN SUMMARY\nTurn number: {}\nUser request summary: asked q{}\nKey outcomes: done"
    unnumbered = "**TURN SUMMARY**\nUser request summary: asked q3\nKey outcomes: done"
    llm_server.push(text("\n\n".join([block.format(2, 2), block.format(1, 1), unnumbered])), text(block.format(5, 5)))
    parsed = ParsedTranscript("markdown", turns(5))
    batches = [parsed.turns[0:4], parsed.turns[4:5]]
    result = await sm.summarize_turns(llm, parsed, TokenCounter(MODEL), batches=batches)
    assert [s.turn for s in result.summaries] == [1, 2, 3, 5]  # numbered by their field, the unnumbered in order
    assert result.state.skipped_turns == [4]
    assert result.notes == ["turn 4 skipped: the answer has no TURN SUMMARY for it"]


async def test_the_ceiling_stops_a_file_at_its_limit(llm_server, llm) -> None:
    meter = ModelCallMeter(llm, TokenCounter(MODEL))
    llm_server.responder = lambda body: text("fine")
    meter.start_file(2)
    for _ in range(2):
        await meter.complete([{"role": "user", "content": "hi"}])
    with pytest.raises(LLMError, match="limit of 2 model calls"):
        await meter.complete([{"role": "user", "content": "hi"}])
    assert len(llm_server.chat_requests()) == 2 and meter.calls == 2
    meter.start_file(None)
    await meter.complete([{"role": "user", "content": "hi"}])
    assert meter.calls == 3


# ----------------------------------------------------------------------------- Ctrl+C
# litellm.acompletion builds each request's coroutine in a worker thread; an interrupt that lands
# while it does leaves that coroutine never awaited. This reproduces the moment exactly.
ABANDONED_HOP = """
import asyncio, os, signal, sys, threading
from ccm_tui.restore.importer import run_to_the_end
cancelled = threading.Event()
async def reply():
    return "reply"
def hop():  # the worker-thread step: Ctrl+C arrives, the step ends after the cancellation
    os.kill(os.getpid(), signal.SIGINT)
    cancelled.wait(30)
    return reply()
async def request():
    try:
        return await (await asyncio.get_running_loop().run_in_executor(None, hop))
    except asyncio.CancelledError:
        cancelled.set()
        raise
run = asyncio.run if sys.argv[1] == "asyncio.run" else run_to_the_end
try:
    run(request())
except KeyboardInterrupt:
    sys.stderr.write("ccm-tui: interrupted\\n")
    sys.exit(130)
"""


@pytest.mark.parametrize("runner", ["asyncio.run", "run_to_the_end"])
def test_an_interrupt_in_a_worker_hop_leaves_one_line(runner: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", ABANDONED_HOP, runner],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert done.returncode == 130
    if runner == "asyncio.run":  # the hole: a RuntimeWarning and its source line before "interrupted"
        assert "was never awaited" in done.stderr
    else:
        assert done.stderr == "ccm-tui: interrupted\n"


@pytest.mark.slow
@pytest.mark.parametrize("slow", [False, True])
def test_ctrl_c_ends_in_one_line(tmp_path: Path, slow: bool) -> None:
    """Interrupted while requests fly (instant answers: litellm's worker threads are busy) or while one
    hangs: exit 130 and one line, no RuntimeWarning about a coroutine never awaited."""
    seen = threading.Event()
    count = {"n": 0}

    def on_request(_record: Any) -> None:
        count["n"] += 1
        if count["n"] >= (1 if slow else 25):
            seen.set()

    def answer(body: dict[str, Any]):
        return hang(60) if slow else model(body)

    transcript = tiny_turns(tmp_path / "chat.md", 400)
    with FakeLLMServer(responder=answer, on_request=on_request) as server:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HOME": str(tmp_path)}
        argv = [sys.executable, "-c", CLI, "restore", str(transcript), "--session-dir", str(tmp_path / "ccm")]
        argv += ["--model", MODEL, "--api-base", server.base_url, "--skip-evidence-search"]
        process = subprocess.Popen(
            argv,
            env={**env, "OPENAI_API_KEY": "sk-test-fake"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            assert seen.wait(60), "no request reached the server"
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    lines = err.splitlines()
    after = lines[next(i for i, line in enumerate(lines) if "estimate:" in line) + 1 :]
    after = [line for line in after if not line.startswith("restore: summarizing")]
    assert process.returncode == 130 and out == ""
    assert after == ["ccm-tui: interrupted"], err[-2000:]
