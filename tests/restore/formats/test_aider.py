"""aider chat history: turns, traps and artifacts."""

from __future__ import annotations

import pytest

from ccm_tui.restore.formats import aider
from ccm_tui.restore.turns import ParsedTranscript
from tests.helpers.transcripts import fixture_text


@pytest.fixture(scope="module")
def parsed() -> ParsedTranscript:
    return aider.parse(fixture_text("aider.chat.history.md"))


def _artifacts(parsed: ParsedTranscript, turn: int) -> list[tuple[str, str]]:
    return [(artifact.path, artifact.action) for artifact in parsed.turns[turn - 1].artifacts]


def test_finds_the_human_turns(parsed: ParsedTranscript) -> None:
    assert [turn.user.splitlines()[0] for turn in parsed.turns] == [
        "pojdme podle zadání v instructions md modifikovat naši hydrogen šablonu, dělejme to krok po kroku",
        "okkey pokračujme",
        "pokračujme",
        "jak zprovoznit přihlašování ? An error occured",
        "/code uprav to",
        "Create a plan for how to make this command line app into a webservice using FastAPI.",
        "/ask I nodes.py used in the backend project?",
    ]


def test_old_style_lines_separated_by_blanks_form_one_message(parsed: ParsedTranscript) -> None:
    assert parsed.turns[3].user_messages == [
        'jak zprovoznit přihlašování ? An error occured\ninvalid_request\nThe error was: "redirect_uri" mismatch'
        "\n\n\nRequest ID: 98503908-7d5f-4e0c-9fb8-95d7acf32346-1724180701"
    ]


def test_new_style_multi_line_prompt_is_one_message(parsed: ParsedTranscript) -> None:
    assert parsed.turns[5].user_messages == [
        "Create a plan for how to make this command line app into a webservice using FastAPI.\n"
        "Put the webservice project inside backend folder."
    ]


def test_assistant_heading_lookalikes_are_not_turns(parsed: ParsedTranscript) -> None:
    response = "\n".join(parsed.turns[3].agent_responses)
    assert "#### 1. Upravit soubor `app/routes/($locale).account_.login.tsx`" in response
    assert "#### Summary" in "\n".join(parsed.turns[6].agent_responses)


def test_architect_echo_is_not_a_turn(parsed: ParsedTranscript) -> None:
    assert any("architect→editor echo" in note for note in parsed.skipped)
    assert not any(message.startswith("Changes to implement") for t in parsed.turns for message in t.user_messages)


def test_request_command_echo_is_dropped(parsed: ParsedTranscript) -> None:
    assert parsed.turns[4].user_messages == ["/code uprav to"]
    assert parsed.turns[6].user_messages == ["/ask I nodes.py used in the backend project?"]


def test_bare_slash_commands_are_skipped_and_noted(parsed: ParsedTranscript) -> None:
    notes = [note for note in parsed.skipped if "slash command" in note]
    assert "line 11: slash command /add instructions.md" in notes
    assert any(note.endswith("slash command /ask") for note in notes)
    messages = [message for turn in parsed.turns for message in turn.user_messages]
    assert not any(message.startswith(("/clear", "/drop", "/exit")) for message in messages)


def test_help_question_and_its_generated_prompt_are_skipped(parsed: ParsedTranscript) -> None:
    assert any("/help question" in note for note in parsed.skipped)
    assert not any("What is this repo" in turn.user for turn in parsed.turns)
    assert not any("Repository map" in response for turn in parsed.turns for response in turn.agent_responses)


def test_request_resent_after_clear_joins_its_turn(parsed: ParsedTranscript) -> None:
    first = parsed.turns[0]
    assert len(first.user_messages) == 2
    assert first.user_messages[1].endswith("požádej o vhodné soubory abys je měl k dispozici")
    assert any("re-sent after a context reset" in note for note in parsed.skipped)


def test_consecutive_identical_requests_without_reset_stay_separate(parsed: ParsedTranscript) -> None:
    assert [t.user for t in parsed.turns[1:3]] == ["okkey pokračujme", "pokračujme"]


def test_artifacts_of_an_old_style_session(parsed: ParsedTranscript) -> None:
    # A file keeps its first spelling: "> Added C:\\...\\instructions.md" is the /add'ed one.
    assert _artifacts(parsed, 1) == [
        ("instructions.md", "read"),
        ("app/styles/app.css", "edited"),
        ("app\\root.tsx", "read"),
        ("app/styles/app.css", "read"),
        ("app/styles/home.css", "created"),
        ("app\\root.tsx", "edited"),
    ]


def test_artifacts_of_an_architect_session(parsed: ParsedTranscript) -> None:
    assert _artifacts(parsed, 6) == [
        ("LLM.md", "read"),
        ("backend/settings.py", "created"),
        ("backend/app.py", "created"),
    ]
    assert _artifacts(parsed, 7) == [("backend/app.py", "read")]


def test_empty_search_block_marks_created_file() -> None:
    text = (
        "# aider chat started at 2025-01-01 10:00:00\n\n"
        "#### add a logger  \n\n"
        "src/log.py\n```python\n<<<<<<< SEARCH\n=======\nimport logging\n>>>>>>> REPLACE\n```\n\n"
        "> Tokens: 1k sent, 100 received.  \n"
        "> Applied edit to src/log.py  \n"
    )

    parsed = aider.parse(text)

    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("src/log.py", "created")]


def test_new_style_heading_without_trailing_spaces_is_prose() -> None:
    text = (
        "# aider chat started at 2025-01-01 10:00:00\n\n"
        "#### explain the plan  \n"
        "#### in two steps  \n\n"
        "#### Step 1\n\nDo the thing.\n\n"
        "> Tokens: 1k sent, 100 received.  \n"
    )

    parsed = aider.parse(text)

    assert [turn.user for turn in parsed.turns] == ["explain the plan\nin two steps"]
    assert parsed.turns[0].agent_responses == ["#### Step 1\n\nDo the thing."]


def test_sniff_recognises_session_header_and_file_name(tmp_path) -> None:
    assert aider.sniff("# aider chat started at 2024-08-20 14:08:19\n", tmp_path / "x.md") > 0.9
    assert aider.sniff("", tmp_path / ".aider.chat.history.md") > 0.5
    assert aider.sniff("# Title\n\nplain markdown\n", tmp_path / "notes.md") == 0.0


FAILED_REQUESTS = """\
# aider chat started at 2025-03-01 10:00:00

> Aider v0.82.0
> Model: openrouter/some-model with diff edit format

#### fix the login redirect

> litellm.APIConnectionError: OpenrouterException - provider returned error
> Retrying in 0.2 seconds...

#### /exit

# aider chat started at 2025-03-01 10:05:00

> Aider v0.82.0

#### fix the login redirect please

> litellm.RateLimitError: rate limit exceeded

#### /exit

# aider chat started at 2025-03-01 10:09:00

#### fix the login redirect

The redirect URI is built from the request host; use the configured origin instead.

> Tokens: 9,185 sent, 130 received.

#### and add a test

#### with the mobile viewport too

Added the test.
"""


def test_failed_requests_and_session_boundaries_end_turns() -> None:
    parsed = aider.parse(FAILED_REQUESTS)
    assert [turn.user for turn in parsed.turns] == [
        "fix the login redirect",
        "fix the login redirect please",
        "fix the login redirect",
        "and add a test\nwith the mobile viewport too",  # nothing came between the lines: one request
    ]
    first, second = parsed.turns[0], parsed.turns[1]
    assert first.agent_responses[0].startswith("(no answer: aider reported litellm.APIConnectionError")
    assert "RateLimitError" in second.agent_responses[0]
    assert parsed.turns[2].agent_responses[0].startswith("The redirect URI")


def _inputs(*texts: str) -> str:
    """Inputs as aider logs them: each line ``#### line`` with two trailing spaces, a blank line before each input."""
    return "".join("\n#### " + "  \n#### ".join(text.split("\n")) + "  \n" for text in texts)


def _session(body: str) -> str:
    return "\n# aider chat started at 2025-09-01 09:00:00\n\n> Aider v0.86.1  \n> Main model: x  \n" + body


PASTE = "\n".join(
    ["请根据下面的需求实现后端接口。", "", "## 路由", "/login 登录页", "/help 帮助页", "/settings 设置页", ""]
    + [f"- 表 t_{n}: id, name" for n in range(1, 40)]
    + ["", "```sql", "SELECT * FROM t_1;", "请注意：上面的 SQL 没有写完"]
)


def test_a_pasted_prompt_is_one_input_whatever_its_later_lines_start_with() -> None:
    text = _session(_inputs(PASTE) + "\n好的。\n\n> Tokens: 1.0k sent, 20 received.  \n")

    parsed = aider.parse(text)

    assert [turn.user for turn in parsed.turns] == [PASTE]
    assert not any("slash command" in note or "/help" in note for note in parsed.skipped)


def test_a_command_is_read_from_the_first_line_of_an_input_only() -> None:
    text = _session(
        _inputs("/add app/models.py\napp/routes.py", "为什么 schemas 里没有 created_at？")
        + "\n因为它是可选字段。\n\n> Tokens: 3k sent, 50 received.  \n"
    )

    parsed = aider.parse(text)

    assert [turn.user for turn in parsed.turns] == ["为什么 schemas 里没有 created_at？"]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [
        ("app/models.py", "read"),
        ("app/routes.py", "read"),
    ]


def test_a_request_made_with_code_and_resent_after_clear_is_one_turn() -> None:
    text = _session(
        _inputs("/code 把 README 翻译成英文", "把 README 翻译成英文")
        + "\nDone.\n\n> Tokens: 1k sent, 5 received.  \n"
        + _inputs("/clear", "把 README 翻译成英文")
        + "\nDone again.\n\n> Tokens: 1k sent, 5 received.  \n"
        + _inputs("再加一个 CHANGELOG")
        + "\n好的。\n"
    )

    parsed = aider.parse(text)

    assert [turn.user_messages for turn in parsed.turns] == [
        ["/code 把 README 翻译成英文", "把 README 翻译成英文"],
        ["再加一个 CHANGELOG"],
    ]


def test_confirmations_and_a_stray_answer_do_not_count_in_a_russian_history() -> None:
    text = _session(
        _inputs("/ask что делает функция `expire_lots`?", "что делает функция `expire_lots`?")
        + "\nОна помечает просроченные места.\n\n> Tokens: 2k sent, 30 received.  \n"
        + "> app/tasks.py  \n> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: y  \n"
        + "\nТеперь вижу файл.\n\n> Tokens: 3k sent, 10 received.  \n"
        + _inputs("n", "Добавь логирование в неё")
        + "\nГотово.\n\n> Applied edit to app/tasks.py  \n"
    )

    parsed = aider.parse(text)

    assert [turn.user for turn in parsed.turns] == [
        "/ask что делает функция `expire_lots`?",
        "Добавь логирование в неё",
    ]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("app/tasks.py", "read")]
    assert any("answer 'n' to a confirmation" in note for note in parsed.skipped)


def test_old_style_run_keeps_command_lookalikes_inside_a_message() -> None:
    text = _session("\n#### fix the routes listed below\n\n#### /help page\n\n#### /settings page\n\nDone.\n")

    parsed = aider.parse(text)

    assert [turn.user for turn in parsed.turns] == ["fix the routes listed below\n/help page\n/settings page"]


# New-style aider input lines end with two spaces (written here explicitly).
AIDER = "\n".join(
    [
        "",
        "# aider chat started at 2025-10-23 17:04:56",
        "",
        "> Aider v0.86.1  ",
        "",
        "#### /add src/a.py  ",
        "####   src/b.py  ",
        "####   src/c.py  ",
        "> Added src/a.py to the chat  ",
        "",
        "#### /copy-context explain the gemini handling  ",
        "> Copied code context to clipboard.  ",
        "",
        "#### <blank>  ",
        "",
        "#### fix the token count  ",
        "",
        "Done, see the edit.",
        "",
        "> Tokens: 1k sent, 100 received.  ",
        "",
    ]
)


def test_aider_blank_input_copy_context_and_multi_line_add() -> None:
    parsed = aider.parse(AIDER)
    assert [turn.user for turn in parsed.turns] == ["fix the token count"]
    assert {a.path for a in parsed.turns[0].artifacts} == {"src/a.py", "src/b.py", "src/c.py"}
    assert any("empty input" in note for note in parsed.skipped)
