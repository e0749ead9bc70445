"""Parse-sanity warnings: too few turns, too many turns, per format, in one line each."""

from __future__ import annotations

import json

from ccm_tui.restore.formats import aider
from ccm_tui.restore.sanity import aider_inputs, check_parse
from ccm_tui.restore.turns import ParsedTranscript, TurnRound


def _parsed(fmt: str, turns: int) -> ParsedTranscript:
    rounds = [
        TurnRound(turn=n, user_messages=[f"request {n}"], agent_responses=[], start_line=n, end_line=n)
        for n in range(turns)
    ]
    return ParsedTranscript(format=fmt, turns=rounds)


def _aider_history(requests: int) -> str:
    body = "".join(
        f"\n#### request number {n}  \n\nanswer {n}\n\n> Tokens: 1k sent, 9 received.  \n" for n in range(requests)
    )
    return "\n# aider chat started at 2025-09-01 09:00:00\n\n> Aider v0.86.1  \n" + body


def test_too_many_turns_for_the_user_messages_is_a_warning() -> None:
    text = _aider_history(11)
    assert check_parse(text, "aider", aider.parse(text)) == []
    warnings = check_parse(text, "aider", _parsed("aider", 20))
    assert warnings == [
        "20 turns found but the file has only 11 user messages: "
        "the parse may have split requests or taken tool output or quoted text for them"
    ]


def test_one_turn_is_said_in_the_singular() -> None:
    warnings = check_parse(_aider_history(30), "aider", _parsed("aider", 1))
    assert warnings and warnings[0].startswith("1 turn found but the file has 30 user messages")


def test_aider_inputs_are_counted_as_aider_writes_them() -> None:
    paste = "#### fix these routes:  \n#### /help page  \n####   \n#### /settings page  \n"
    commands = "#### /add a.py  \n####   b.py  \n\n#### /clear  \n\n#### <blank>  \n\n#### n  \n"
    heading = "\nAnswer.\n\n#### Summary  \nDone.\n"  # an assistant heading right after its prose
    text = (
        "# aider chat started at 2025-09-01\n\n"
        + paste
        + "\n"
        + commands
        + "\n#### /ask why?  \n\n#### why?  \n"
        + heading
    )
    offsets, count = aider_inputs(text)
    assert count == 3  # the paste, /ask why?, its echo
    assert text[offsets[0] :].startswith("#### fix these routes")
    old_style = "\n#### fix these routes:\n\n#### /help page\n\n#### /settings page\n"
    assert aider_inputs(old_style)[1] == 1


def _json_history(fmt: str, users: int) -> str:
    if fmt == "cline":
        messages = [
            {"role": "user", "content": [{"type": "text", "text": f"<feedback>\nmore {n}\n</feedback>"}]}
            for n in range(users)
        ]
    elif fmt == "gemini-cli":
        messages = [{"id": f"m{n}", "timestamp": "t", "type": "user", "content": f"ask {n}"} for n in range(users)]
        return json.dumps({"sessionId": "s", "projectHash": "p", "messages": messages}, indent=2)
    elif fmt == "opencode-json":
        messages = [{"info": {"id": f"msg_{n}", "role": "user"}, "parts": []} for n in range(users)]
        return json.dumps({"info": {"id": "ses_1"}, "messages": messages}, indent=2)
    else:  # chatgpt
        mapping = {
            f"n{n}": {
                "message": {
                    "author": {"role": "user", "metadata": {}},
                    "content": {"content_type": "text", "parts": ["q"]},
                }
            }
            for n in range(users)
        }
        return json.dumps([{"title": "t", "mapping": mapping}], indent=2)
    return json.dumps(messages, indent=2)


def test_json_formats_have_user_markers_both_ways() -> None:
    for fmt in ("cline", "gemini-cli", "opencode-json", "chatgpt"):
        text = _json_history(fmt, 30)
        assert check_parse(text, fmt, _parsed(fmt, 30)) == [], fmt
        short = check_parse(text, fmt, _parsed(fmt, 3))
        assert short and short[0].startswith("3 turns found but the file has 30 user messages"), fmt
        long = check_parse(_json_history(fmt, 10), fmt, _parsed(fmt, 30))
        assert long and "has only 10 user messages" in long[0], fmt


def test_claude_code_export_counts_chevron_prompts_only() -> None:
    quoted = "".join(f"> quoted line {n}\n" for n in range(40))
    text = "❯ here is the mail I got:\n" + quoted + "\n● Read it.\n"
    assert check_parse(text, "claude-code-terminal", _parsed("claude-code-terminal", 1)) == []
