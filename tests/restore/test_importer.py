"""The import library (``restore.importer``) against the fake OpenAI-compatible server, through litellm:
statuses, the bulk policy, idempotency, progress, and any ChatModel."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from ccm_tui.config import Settings
from ccm_tui.core.models.interface import ChatModel, Completion, OnDelta
from ccm_tui.core.models.litellm_client import LLMClient
from ccm_tui.restore.importer import Importer, ImportOptions, check_session, parse_file, parse_only
from ccm_tui.restore.results import ImportRow, ImportStatus, NotATranscript, ProviderRefused, RestoreFailed
from tests.helpers.openai_server import fault
from tests.helpers.restore_runs import MODEL, responder, write_claude_session, write_mixed_labels
from tests.helpers.transcripts import FIXTURES

S = ImportStatus
EFFORT = "fix-calculator-division-by-zero"


class Recorder:
    """Progress for one file and for a run, remembering what it was told."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def __call__(self, done: int, total: int, label: str) -> None:
        self.events.append(("step", label))

    def message(self, text: str) -> None:
        self.events.append(("message", text))

    def clear(self) -> None:
        self.events.append(("clear",))

    def turns_summarized(self, turns: Any) -> None:
        self.events.append(("turns", [s.turn for s in turns.summaries]))

    def start_file(self, index: int, total: int, path: Path) -> Recorder:
        self.events.append(("start", index, total, path.name))
        return self

    def file_done(self, index: int, total: int, row: ImportRow) -> None:
        self.events.append(("done", index, total, row.status))

    def of(self, kind: str) -> list[tuple[Any, ...]]:
        return [event for event in self.events if event[0] == kind]


class Delegating:
    """A ChatModel that is not the litellm client: it hands each request to one and notes its kind."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.model = inner.model
        self.kinds: list[str] = []

    @property
    def api_base(self) -> str | None:
        return self.inner.api_base

    @property
    def loaded(self) -> bool:
        return self.inner.loaded

    def load(self) -> None:
        self.inner.load()

    async def stream_chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, on_delta: OnDelta | None = None
    ) -> Completion:
        self.kinds.append("stream_chat")
        return await self.inner.stream_chat(messages, tools, on_delta)

    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        self.kinds.append("complete")
        return await self.inner.complete(messages, max_tokens=max_tokens, summary=summary)

    async def chat_once(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Completion:
        self.kinds.append("chat_once")
        return await self.inner.chat_once(messages, tools)


@pytest.fixture
def home(tmp_path: Path, llm_server, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with a project (src/calc.py), a Claude Code session of it, and the scripted server."""
    project = tmp_path / "calc"
    (project / "src").mkdir(parents=True)
    (project / "src" / "calc.py").write_text("def divide(a, b):\n    if b == 0:\n        raise ValueError\n")
    write_claude_session(tmp_path / "session.jsonl", project)
    monkeypatch.setenv("HOME", str(tmp_path))
    llm_server.responder = responder
    return tmp_path


def importer(llm_server, session: Path, llm: ChatModel | None = None, **options: Any) -> Importer:
    settings = Settings(model=MODEL, api_base=llm_server.base_url)
    model = llm or LLMClient(MODEL, api_base=llm_server.base_url, timeout=10)
    return Importer(session, settings, ImportOptions(retry_base=0, **options), model)


def five_turn_chat(path: Path) -> Path:
    path.write_text("".join(f"### Human\n\nquestion {n}\n\n### Assistant\n\nanswer {n}\n\n" for n in range(1, 6)))
    return path


def manifest(session: Path) -> list[dict[str, Any]]:
    return yaml.safe_load((session / "manifest.yaml").read_text())["efforts"]


# ----------------------------------------------------------------------------- one file
def test_one_transcript_lands_with_its_progress_and_its_cost(home: Path, llm_server) -> None:
    run = importer(llm_server, home / "ccm")
    progress = Recorder()

    result = run.import_one(home / "session.jsonl", progress)

    assert result.status is S.IMPORTED and result.effort_id == EFFORT
    assert (result.row.format, result.row.turns, result.row.status_text) == ("claude-code", 3, "imported")
    assert result.landed is not None and result.landed.turns == 3
    assert result.outcome is not None and result.outcome.evidence is not None
    assert result.warnings == [] and not result.stops_the_run
    assert progress.of("turns") == [("turns", [1, 2, 3])]
    assert (
        progress.of("message")[0][1]
        == f"evidence search: files under {home / 'calc'} (the transcript's working directory)"
    )
    assert ("step", "summarizing turn 1") in progress.events and progress.events[-1] == ("clear",)
    requests = len(llm_server.chat_requests())
    cost = run.cost()
    assert run.calls == cost.calls == requests == 6  # 3 turns, 2 evidence rounds, the session summary
    assert cost.turns == run.turns_imported == 3 and cost.tokens_sent > 0
    (effort,) = manifest(home / "ccm")
    assert effort["id"] == EFFORT and effort["source"]["sha256"] == sha256(home / "session.jsonl")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_any_chat_model_will_do(home: Path, llm_server) -> None:
    model = Delegating(LLMClient(MODEL, api_base=llm_server.base_url, timeout=10))
    assert isinstance(model, ChatModel)
    run = importer(llm_server, home / "ccm", llm=model)

    result = run.import_one(home / "session.jsonl", Recorder())

    assert result.status is S.IMPORTED
    assert model.kinds == ["complete"] * 3 + ["chat_once"] * 2 + ["complete"]
    assert run.calls == len(model.kinds) == len(llm_server.chat_requests())


def test_parse_warnings_reach_the_result_and_are_told_before_any_model_work(home: Path, llm_server) -> None:
    transcript = write_mixed_labels(home / "mixed.md")
    run = importer(llm_server, home / "ccm", skip_evidence_search=True)
    progress = Recorder()

    result = run.import_one(transcript, progress)

    assert result.status is S.IMPORTED and len(result.warnings) == 1
    assert result.warnings[0].startswith("1 turn found but the file has 13 user messages")
    assert progress.events[0] == ("message", f"warning: mixed.md: {result.warnings[0]}")
    again = run.import_one(transcript, Recorder())  # no model work, the same warning
    assert (again.status, again.warnings) == (S.SKIPPED_ALREADY, result.warnings)
    parsed = parse_file(transcript, run.options)
    parsed.turns = []
    assert run.import_parsed(transcript, parsed, Recorder()).warnings == result.warnings  # SKIPPED_NO_TURNS


def test_import_parsed_raises_when_the_provider_refuses(home: Path, llm_server) -> None:
    llm_server.responder = lambda body: fault(401)
    run = importer(llm_server, home / "ccm", skip_evidence_search=True)
    parsed = parse_file(home / "session.jsonl", run.options)

    with pytest.raises(ProviderRefused, match="nothing was imported"):
        run.import_parsed(home / "session.jsonl", parsed, Recorder())

    assert len(llm_server.chat_requests()) == 1
    assert not (home / "ccm" / "manifest.yaml").exists()


def test_a_root_that_is_no_directory_fails_before_any_model_work(home: Path, llm_server) -> None:
    run = importer(llm_server, home / "ccm", root=home / "nowhere")
    with pytest.raises(RestoreFailed, match="is not a directory"):
        run.import_parsed(home / "session.jsonl", parse_file(home / "session.jsonl", run.options), Recorder())
    assert llm_server.chat_requests() == []


# ----------------------------------------------------------------------------- idempotency
def test_the_same_bytes_and_max_turns_import_once(home: Path, llm_server) -> None:
    transcript, session = home / "session.jsonl", home / "ccm"
    assert (
        importer(llm_server, session, skip_evidence_search=True).import_one(transcript, Recorder()).status is S.IMPORTED
    )
    calls = len(llm_server.chat_requests())

    again = importer(llm_server, session, skip_evidence_search=True)
    result = again.import_one(transcript, Recorder())

    assert (result.status, result.effort_id) == (S.SKIPPED_ALREADY, EFFORT)
    assert result.row.status_text == f"skipped: already imported as {EFFORT}"
    assert len(llm_server.chat_requests()) == calls and again.calls == 0 and again.cost().turns == 0
    assert again.earlier_import(transcript, parse_file(transcript, again.options)) == (sha256(transcript), EFFORT)


def test_max_turns_force_and_new_bytes_import_again(home: Path, llm_server) -> None:
    transcript, session = home / "session.jsonl", home / "ccm"
    first = importer(llm_server, session, skip_evidence_search=True).import_one(transcript, Recorder())
    two = importer(llm_server, session, skip_evidence_search=True, max_turns=2)

    shorter = two.import_one(transcript, Recorder())  # another --max-turns is another import
    assert (shorter.status, shorter.row.turns) == (S.IMPORTED, 2) and shorter.effort_id != first.effort_id
    assert two.import_one(transcript, Recorder()).effort_id == shorter.effort_id  # …imported once too
    assert two.import_one(transcript, Recorder()).status is S.SKIPPED_ALREADY

    forced = importer(llm_server, session, skip_evidence_search=True, force=True).import_one(transcript, Recorder())
    assert forced.status is S.IMPORTED and forced.effort_id not in (first.effort_id, shorter.effort_id)

    transcript.write_text(transcript.read_text() + "\n")  # other bytes: another transcript
    grown = importer(llm_server, session, skip_evidence_search=True).import_one(transcript, Recorder())
    assert grown.status is S.IMPORTED
    assert len(manifest(session)) == 4


# ----------------------------------------------------------------------------- several files
def test_one_bad_file_never_stops_the_others(home: Path, llm_server) -> None:
    folder = home / "mixed"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a transcript\n")
    (folder / "empty.jsonl").write_text('{"parentUuid": null, "sessionId": "x"}\n')
    five = five_turn_chat(folder / "five.md")
    shutil.copy(FIXTURES / "aider.chat.history.md", folder / "history.md")
    shutil.copy(home / "session.jsonl", folder / "one.jsonl")
    paths = [folder / "notes.txt", folder / "empty.jsonl", folder / "gone.jsonl", five, folder / "history.md"]
    paths.append(folder / "one.jsonl")

    def five_fails(body: dict[str, Any]):  # every turn of five.md is refused as a bad request, not for the key
        return fault(400) if "of 5." in body["messages"][-1]["content"] else responder(body)

    llm_server.responder = five_fails
    run = importer(llm_server, home / "ccm", skip_evidence_search=True)
    progress = Recorder()

    rows = run.import_many(paths, progress)

    assert [row.status for row in rows] == [
        S.SKIPPED_NOT_A_TRANSCRIPT,
        S.SKIPPED_NO_TURNS,
        S.FAILED,
        S.FAILED,
        S.IMPORTED,
        S.IMPORTED,
    ]
    assert rows[1].format == "claude-code" and rows[1].turns == 0
    assert rows[2].error == f"no transcript file at {folder / 'gone.jsonl'}" and rows[2].format is None
    assert rows[3].error.startswith("restore stopped, nothing was imported: the first 5 turns all failed")
    assert (rows[3].format, rows[3].turns) == ("markdown", 5)
    assert run.turns_imported == rows[4].turns + rows[5].turns == run.cost().turns
    assert progress.of("start") == [("start", i, 6, path.name) for i, path in enumerate(paths, start=1)]
    assert progress.of("done") == [("done", i, 6, row.status) for i, row in enumerate(rows, start=1)]
    assert [e["id"] for e in manifest(home / "ccm")] == [rows[4].effort_id, rows[5].effort_id]


@pytest.mark.parametrize("status", [401, 404])
def test_a_provider_refusing_the_key_or_model_stops_the_run(home: Path, llm_server, status: int) -> None:
    folder = home / "more"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a transcript\n")
    paths = [home / "session.jsonl", folder / "notes.txt", five_turn_chat(folder / "five.md")]
    llm_server.responder = lambda body: fault(status)
    progress = Recorder()

    rows = importer(llm_server, home / "ccm").import_many(paths, progress)

    assert [row.status for row in rows] == [S.FAILED, S.NOT_TRIED, S.NOT_TRIED]
    assert "nothing was imported" in rows[0].error and rows[0].format == "claude-code"
    assert [row.file for row in rows] == paths and rows[1].format is None
    assert len(llm_server.chat_requests()) == 1  # one refused request, not one per file
    assert progress.of("done") == [("done", 1, 3, S.FAILED)]
    assert not (home / "ccm" / "manifest.yaml").exists()


# ----------------------------------------------------------------------------- no model
def test_parse_only_and_parse_file_need_no_model(home: Path) -> None:
    notes = home / "notes.txt"
    notes.write_text("not a transcript\n")
    files = parse_only([home / "session.jsonl", notes, home / "gone.md"], ImportOptions(max_turns=1))

    assert files[0].parsed is not None and len(files[0].parsed.turns) == 1 and files[0].error is None
    assert files[1].parsed is None and "cannot detect" in (files[1].error or "")
    assert files[2].error == f"no transcript file at {home / 'gone.md'}"
    with pytest.raises(NotATranscript):
        parse_file(notes, ImportOptions())
    bad = home / "ses_bad.json"  # an opencode session file whose id would lead out of its storage
    bad.write_text('{"id": "../../etc", "directory": "/w"}')
    with pytest.raises(RestoreFailed, match="its id is not a plain name") as raised:
        parse_file(bad, ImportOptions())
    assert not isinstance(raised.value, NotATranscript)


def test_a_session_whose_manifest_cannot_be_read_fails_early(tmp_path: Path) -> None:
    check_session(tmp_path / "new-session")  # a session still to be made is fine
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.yaml").write_text("efforts: [\n")
    with pytest.raises(RestoreFailed, match="manifest.yaml"):
        check_session(broken)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(RestoreFailed, match="not a directory"):
        check_session(tmp_path / "a-file")


def test_turn_summaries_come_back_in_order(home: Path, llm_server) -> None:
    """The summaries the model wrote are the outcome's, turn by turn (what --dump-turns prints)."""
    result = importer(llm_server, home / "ccm", skip_evidence_search=True).import_one(
        home / "session.jsonl", Recorder()
    )
    assert result.outcome is not None
    summaries = result.outcome.turns.summaries
    assert [s.turn for s in summaries] == [1, 2, 3]
    assert all(re.fullmatch(r"request \d", s.user_request) for s in summaries)
