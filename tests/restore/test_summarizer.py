"""Turn-by-turn summarizer and final SESSION SUMMARY against the loopback fake LLM server."""

from __future__ import annotations

import pytest

from ccm_tui.core.models.litellm_client import LLMClient
from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.restore import summarizer as sm
from ccm_tui.restore import summary_fields as sf
from ccm_tui.restore import turn_state as ts
from ccm_tui.restore.turns import Artifact, ParsedTranscript, TurnRound
from tests.helpers.openai_server import fault, text

MODEL = "openai/fake-model"


def turn_reply(n: int, request: str, outcome: str, *, constraints: str = "none", questions: str = "none") -> str:
    return "\n".join(
        [
            "TURN SUMMARY",
            "",
            f"Turn number: {n}",
            f"User request summary: {request}",
            f"Agent response summary: worked on {request}",
            f"Key outcomes: {outcome}",
            "State changes: none",
            "Artifacts modified: none",
            f"Constraints/assumptions added: {constraints}",
            f"Open questions after this turn: {questions}",
        ]
    )


def transcript() -> ParsedTranscript:
    turns = [
        TurnRound(
            1,
            ["Fix the crash in divide() when b is zero"],
            ["I read calc.py and found no guard."],
            1,
            10,
            [Artifact("src/calc.py", "read", 4)],
        ),
        TurnRound(
            2,
            ["Add a test for it", "use pytest please"],
            ["Created tests/test_calc.py.", "Tests pass."],
            11,
            20,
            [Artifact("tests/test_calc.py", "created", 15), Artifact("src/calc.py", "edited", 17)],
        ),
        TurnRound(3, ["Update the README"], ["Edited README.md."], 21, 30, [Artifact("README.md", "edited", 25)]),
    ]
    return ParsedTranscript("claude-code", turns, cwd="/home/dev/calc", title="Calculator fix")


@pytest.fixture
def llm(llm_server) -> LLMClient:
    return LLMClient(MODEL, api_base=llm_server.base_url, timeout=10)


@pytest.fixture
def counter() -> TokenCounter:
    return TokenCounter(MODEL)


def user_content(body: dict) -> str:
    return body["messages"][-1]["content"]


async def test_each_turn_gets_previous_summary_and_accumulated_state(llm_server, llm, counter) -> None:
    llm_server.push(
        text(
            turn_reply(
                1,
                "guard divide against zero",
                "found missing zero check in divide",
                constraints="keep Python 3.8 support",
                questions="should divide raise or return None?",
            )
        ),
        text(turn_reply(2, "add pytest test", "divide now raises ValueError; test added", questions="none")),
        text(turn_reply(3, "document behaviour", "README documents ValueError")),
    )
    steps: list[tuple[int, int, str]] = []
    result = await sm.summarize_turns(
        llm, transcript(), counter, progress=lambda d, t, label: steps.append((d, t, label))
    )

    assert [s.turn for s in result.summaries] == [1, 2, 3]
    assert result.notes == [] and result.failed == []
    first, second, third = (user_content(b) for b in llm_server.chat_requests())
    # turn 1: no previous summary, empty state, the turn itself with its artifacts
    assert "(none: this is the first turn summarized)" in first
    assert "Fix the crash in divide() when b is zero" in first
    assert "- read src/calc.py (transcript line 4)" in first
    # turn 2: turn 1's summary and the state built from it
    assert "PREVIOUS TURN SUMMARY:\nTURN SUMMARY" in second
    assert "Key outcomes: found missing zero check in divide" in second
    state_part = second.split("ACCUMULATED STATE:")[1].split("CURRENT TURN")[0]
    assert "T1: guard divide against zero" in state_part
    assert "keep Python 3.8 support" in state_part
    assert "should divide raise or return None?" in state_part
    assert "src/calc.py: read" in state_part
    assert "Add a test for it\n\nuse pytest please" in second
    # turn 3: turn 2's summary, state updated (open question answered, artifacts merged)
    assert "Key outcomes: divide now raises ValueError; test added" in third
    state_part = third.split("ACCUMULATED STATE:")[1].split("CURRENT TURN")[0]
    assert "should divide raise" not in state_part
    assert "src/calc.py: read, edited (turns 1, 2)" in state_part
    assert "tests/test_calc.py: created" in state_part
    # the schema is in the system prompt, with the turn number filled in
    system = llm_server.chat_requests()[2]["messages"][0]["content"]
    assert "Turn number: 3" in system and "Open questions after this turn:" in system

    state = result.state
    assert state.goals[0] == "T1: guard divide against zero"
    assert state.constraints == ["keep Python 3.8 support"]
    assert state.open_questions == []
    assert set(state.artifacts) == {"src/calc.py", "tests/test_calc.py", "README.md"}
    assert steps[0] == (0, 3, "summarizing turn 1") and steps[-1] == (3, 3, "turns summarized")


async def test_failed_turn_is_logged_and_skipped_state_kept(llm_server, llm, counter) -> None:
    llm_server.push(
        text(turn_reply(1, "guard divide", "zero check missing")),
        fault(500),
        text(turn_reply(3, "document behaviour", "README updated")),
    )
    result = await sm.summarize_turns(llm, transcript(), counter)

    assert [s.turn for s in result.summaries] == [1, 3]
    assert result.failed == [2]
    assert len(result.notes) == 1 and result.notes[0].startswith("turn 2 skipped: provider error 500")
    third = user_content(llm_server.chat_requests()[2])
    assert "Key outcomes: zero check missing" in third  # previous summary is still turn 1's
    assert "CURRENT TURN 3" in third
    assert [d.split(": ", 1)[0] for d in result.state.decisions] == ["T1", "T3"]
    # the parser's artifacts of the skipped turn are facts and still recorded
    assert "tests/test_calc.py" in result.state.artifacts


async def test_unparsable_answer_skips_the_turn(llm_server, llm, counter) -> None:
    llm_server.push(
        text("Sure! Here you go."), text(turn_reply(2, "add test", "test added")), text(turn_reply(3, "docs", "done"))
    )
    result = await sm.summarize_turns(llm, transcript(), counter)
    assert result.failed == [1]
    assert "not a TURN SUMMARY" in result.notes[0]
    second = user_content(llm_server.chat_requests()[1])
    assert "(none: this is the first turn summarized)" in second


async def test_transient_error_is_retried_when_asked(llm_server, llm, counter) -> None:
    parsed = transcript()
    parsed.turns = parsed.turns[:1]
    llm_server.push(fault(503), text(turn_reply(1, "guard divide", "done")))
    result = await sm.summarize_turns(llm, parsed, counter, retries=1, retry_base=0)
    assert [s.turn for s in result.summaries] == [1] and result.notes == []


async def test_bad_key_aborts_instead_of_skipping_every_turn(llm_server, llm, counter) -> None:
    llm_server.push(fault(401))
    with pytest.raises(sm.RestoreAborted, match="API key"):
        await sm.summarize_turns(llm, transcript(), counter)
    assert len(llm_server.chat_requests()) == 1


async def test_many_failures_in_a_row_abort(llm_server, llm, counter) -> None:
    llm_server.responder = lambda body: fault(500)
    with pytest.raises(sm.RestoreAborted, match="first 2 turns all failed"):
        await sm.summarize_turns(llm, transcript(), counter, max_consecutive_failures=2)


async def test_long_agent_responses_are_cut_to_the_token_cap(llm_server, llm, counter) -> None:
    long_reply = "START " + "word " * 20_000 + " THE-END"
    parsed = ParsedTranscript("aider", [TurnRound(1, ["do it"], [long_reply], 1, 2)])
    llm_server.push(text(turn_reply(1, "do it", "done")))
    await sm.summarize_turns(llm, parsed, counter)
    body = user_content(llm_server.chat_requests()[0])
    assert "START" in body and "THE-END" in body and "tokens omitted" in body
    assert counter.count_text(body) < sm.AGENT_TOKENS + sm.USER_TOKENS + 600


def test_parse_tolerates_markdown_and_continuation_lines() -> None:
    answer = """```
**TURN SUMMARY**

**Turn number:** 7
**User request summary:** fix login
- **Agent response summary**: traced the token refresh
  across two modules
Key outcomes: refresh fixed
Constraints/assumptions added: none
Open questions after this turn: flaky CI?; timeouts
```"""
    summary = sm.TurnSummary.parse(answer, 2)
    assert summary.turn == 2
    assert summary.user_request == "fix login"
    assert summary.agent_response == "traced the token refresh\nacross two modules"
    assert sf.split_items(summary.open_questions) == ["flaky CI?", "timeouts"]
    assert sf.split_items(summary.constraints) == []
    with pytest.raises(sm.SummaryParseError):
        sm.TurnSummary.parse("", 1)


def test_state_stays_bounded() -> None:
    state = sm.RestoreState()
    for n in range(1, 60):
        state.update(sm.TurnSummary(n, user_request=f"request {n}", key_outcomes=f"a{n}; b{n}", constraints=f"c{n}"))
    assert len(state.goals) == ts.MAX_GOALS and state.goals[0] == "T1: request 1"
    assert state.goals[-1] == "T59: request 59"
    assert len(state.decisions) == ts.MAX_DECISIONS and len(state.constraints) == ts.MAX_CONSTRAINTS


async def test_session_summary_uses_turns_state_and_evidence(llm_server, llm, counter) -> None:
    llm_server.push(text(turn_reply(1, "guard divide", "zero check added")))
    parsed = transcript()
    parsed.turns = parsed.turns[:1]
    turns = await sm.summarize_turns(llm, parsed, counter)
    final = (
        "SESSION SUMMARY\n\nSummary: Calculator: divide() now raises ValueError on zero; tested.\n"
        "Goal: stop the crash\nOutcome: fixed\nKey decisions: raise ValueError\nArtifacts: src/calc.py\n"
        "Constraints: none\nOpen questions / next steps: none"
    )
    llm_server.push(text(final))
    result = await sm.summarize_session(
        llm, parsed, turns, "- calc.py:12 raises ValueError (verified)", counter, name="Calculator fix"
    )
    assert result.summary == "Calculator: divide() now raises ValueError on zero; tested."
    assert result.report.startswith("SESSION SUMMARY") and "Key decisions: raise ValueError" in result.report
    assert result.fields["outcome"] == "fixed"
    body = user_content(llm_server.chat_requests()[-1])
    assert "SESSION: Calculator fix (claude-code, 1 turn(s))" in body
    assert "Key outcomes: zero check added" in body
    assert "EVIDENCE:\n- calc.py:12 raises ValueError (verified)" in body
    assert "ACCUMULATED STATE:" in body


async def test_session_summary_is_capped(llm_server, llm, counter) -> None:
    turns = sm.TurnSummaries([], sm.RestoreState())
    llm_server.push(text("Summary: " + "very long sentence about things. " * 400))
    result = await sm.summarize_session(llm, transcript(), turns, None, counter)
    assert counter.count_text(result.summary) <= sm.SUMMARY_TOKENS
    assert counter.count_text(result.report) <= sm.REPORT_TOKENS + 20


def test_offline_summary_from_state(counter) -> None:
    state = sm.RestoreState()
    parsed = transcript()
    for turn in parsed.turns:
        state.note_artifacts(turn)
    state.update(sm.TurnSummary(1, user_request="guard divide", key_outcomes="check added"))
    result = sm.offline_summary(parsed, sm.TurnSummaries([], state), counter, name="Calculator fix")
    assert result.offline
    assert "Calculator fix" in result.summary and "guard divide" in result.summary and "src/calc.py" in result.summary


def test_turn_digest_keeps_latest_in_full_and_older_as_lines(counter) -> None:
    summaries = [
        sm.TurnSummary(n, user_request=f"request {n} " + "x " * 80, key_outcomes=f"outcome {n}") for n in range(1, 40)
    ]
    digest = sm.turn_digest(summaries, counter, budget=1_500)
    assert counter.count_text(digest) <= 1_600
    assert "Turn number: 39" in digest
    assert "earlier turn(s) omitted" in digest or "Turn 1:" in digest
