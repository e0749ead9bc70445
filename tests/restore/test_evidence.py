"""Evidence search: tools confined to a root, and the tool-call loop against the fake LLM server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ccm_tui.core.models.litellm_client import LLMClient
from ccm_tui.restore import evidence as ev
from ccm_tui.restore import evidence_tools as et
from ccm_tui.restore.turns import Artifact, ParsedTranscript, TurnRound
from tests.helpers.openai_server import call, fault, text, tool_calls

MODEL = "openai/fake-model"
SECRET = "TOP-SECRET-OUTSIDE-THE-ROOT"
LOG = "\n".join(
    [
        "user: divide crashes",
        "agent: Read src/calc.py",
        "ZeroDivisionError: division by zero",
        "agent: Edit src/calc.py",
        "agent: added a guard",
        "user: thanks",
    ]
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root with ordinary files and every kind of way out of it."""
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (root / "src" / "calc.py").write_text(
        "def divide(a, b):\n    if b == 0:\n        raise ValueError('b is zero')\n    return a / b\n"
    )
    (root / "README.md").write_text("# calc\n")
    (root / ".env").write_text("API_KEY=sk-should-not-leak\n")
    (outside / "notes.txt").write_text(SECRET + "\n")
    (root / "link.txt").symlink_to(outside / "notes.txt")
    (root / "outdir").symlink_to(outside, target_is_directory=True)
    (root / "inner-link.py").symlink_to(root / "src" / "calc.py")
    os.mkfifo(root / "pipe.txt")
    return root


def parsed_transcript(cwd: str | None = None) -> ParsedTranscript:
    turns = [
        TurnRound(1, ["divide crashes"], ["Read src/calc.py"], 1, 3, [Artifact("src/calc.py", "read", 2)]),
        TurnRound(
            2, ["thanks"], ["done"], 4, 6, [Artifact("src/calc.py", "edited", 4), Artifact("gone.py", "created", 5)]
        ),
    ]
    return ParsedTranscript("opencode", turns, cwd=cwd)


def tools_for(root: Path | None, cwd: str | None = None) -> ev.EvidenceTools:
    return ev.EvidenceTools(LOG, parsed_transcript(cwd), ev.FileAccess(root, "", cwd))


ESCAPES = [
    "/etc/passwd",
    "../../../etc/passwd",
    "../outside/notes.txt",
    "src/../../outside/notes.txt",
    "link.txt",
    "outdir/notes.txt",
    "pipe.txt",
    "/dev/zero",
    "/proc/self/environ",
    ".env",
    "src/.git/config",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_file_tools_refuse_every_way_out(project: Path, path: str) -> None:
    tools = tools_for(project)
    for name, args in (("read_file", {"path": path}), ("search_file", {"path": path, "pattern": "."})):
        with pytest.raises(ev.ToolError, match="refused|no such file"):
            tools.run(name, args)


def test_refusals_say_why(project: Path) -> None:
    files = ev.FileAccess(project)
    with pytest.raises(ev.ToolError, match="through a symlink"):
        files.open("link.txt")
    with pytest.raises(ev.ToolError, match="is outside the readable root"):
        files.open("/etc/passwd")
    with pytest.raises(ev.ToolError, match="environment file, which may hold secrets"):
        files.open(".env")
    with pytest.raises(ev.ToolError, match="not a regular file"):
        files.open("pipe.txt")


def test_proc_and_dev_refused_even_when_root_is_slash() -> None:
    files = ev.FileAccess(Path("/"))
    for path in ("/proc/self/environ", "/proc/self/cmdline", "/dev/null", "/sys/kernel/hostname"):
        with pytest.raises(ev.ToolError, match="system or device path"):
            files.open(path)


def test_symlink_inside_root_is_fine_and_paths_are_relative(project: Path) -> None:
    tools = tools_for(project)
    out = tools.run("read_file", {"path": "inner-link.py", "start_line": 2, "end_line": 3})
    assert out["path"] == "src/calc.py"
    assert out["content"] == "2:     if b == 0:\n3:         raise ValueError('b is zero')"
    assert out["total_lines"] == 5


def test_recorded_cwd_paths_map_onto_the_root(project: Path) -> None:
    tools = tools_for(project, cwd="/home/someone/calc")
    out = tools.run("search_file", {"path": "/home/someone/calc/src/calc.py", "pattern": "raise ValueError"})
    assert out["matches"][0]["line"] == 3
    with pytest.raises(ev.ToolError, match="refused"):
        tools.run("read_file", {"path": "/home/someone/calc/../../../etc/passwd"})


def test_windows_style_paths(project: Path) -> None:
    tools = tools_for(project, cwd="C:\\Users\\dev\\calc")
    assert tools.run("read_file", {"path": "src\\calc.py"})["path"] == "src/calc.py"
    assert tools.run("read_file", {"path": "c:\\users\\dev\\calc\\src\\calc.py"})["path"] == "src/calc.py"
    for path in ("..\\outside\\notes.txt", "C:\\Users\\dev\\calc\\..\\..\\outside\\notes.txt"):
        with pytest.raises(ev.ToolError, match="refused|no such file"):
            tools.run("read_file", {"path": path})


def test_no_root_means_no_file_access() -> None:
    tools = ev.EvidenceTools(LOG, parsed_transcript(), ev.FileAccess(None, "no file access: nothing recorded"))
    with pytest.raises(ev.ToolError, match="no file access: nothing recorded"):
        tools.run("read_file", {"path": "src/calc.py"})
    listed = tools.run("list_artifacts", {})
    assert [a["readable_now"] for a in listed["artifacts"]] == [False, False]
    assert tools.run("search_log", {"pattern": "guard"})["matches"][0]["line"] == 5


def test_file_size_and_binary_caps(project: Path) -> None:
    big = project / "big.txt"
    big.write_text(("x" * 99 + "\n") * 5_000 + "NEEDLE\n")  # ~500 KB, needle past the cap
    (project / "blob.txt").write_bytes(b"\x00\x01binary")  # a text file's name, a binary's bytes
    tools = tools_for(project)
    out = tools.run("search_file", {"path": "big.txt", "pattern": "NEEDLE"})
    assert out["total_matches"] == 0 and "256 KB" in out["file_note"]
    read = tools.run("read_file", {"path": "big.txt", "start_line": 1, "end_line": 10_000})
    assert read["end_line"] - read["start_line"] + 1 == et.MAX_READ_LINES
    with pytest.raises(ev.ToolError, match="binary"):
        tools.run("read_file", {"path": "blob.txt"})


def test_search_log_regex_literal_context_and_caps() -> None:
    tools = tools_for(None)
    out = tools.run("search_log", {"pattern": r"zero\w*error", "context_lines": 1})
    assert out["mode"] == "regex" and out["matches"][0]["line"] == 3
    assert (
        out["matches"][0]["context"] == "2: agent: Read src/calc.py\n3: ZeroDivisionError: division by zero\n"
        "4: agent: Edit src/calc.py"
    )
    assert tools.run("search_log", {"pattern": "calc.py ("})["mode"] == "literal"  # invalid regex → literal
    many = ev.EvidenceTools("\n".join(f"line {i} hit" for i in range(500)), parsed_transcript(), ev.FileAccess(None))
    out = many.run("search_log", {"pattern": "hit", "context_lines": 0})
    assert len(out["matches"]) == et.MAX_MATCHES and out["total_matches"] == 500
    with pytest.raises(ev.ToolError, match="longer than"):
        tools.run("search_log", {"pattern": "a" * 500})
    with pytest.raises(ev.ToolError, match="unknown argument"):
        tools.run("search_log", {"pattern": "a", "path": "/etc/passwd"})


def test_runaway_regex_stops_on_time() -> None:
    """A pattern that backtracks for ever is stopped by the search's time limit and says so (how long the
    limit is, is the module's SEARCH_SECONDS: no wall-clock assertion here, the machine may be loaded)."""
    tools = ev.EvidenceTools("a" * 5_000 + "b\n" + "a" * 5_000, parsed_transcript(), ev.FileAccess(None))
    out = tools.run("search_log", {"pattern": r"(a|aa)+$"})
    assert "the search stopped early (time limit)" in out["note"]


def test_choose_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ev.choose_root(None, str(project))[0] == Path(os.path.realpath(project))
    assert ev.choose_root(None, str(tmp_path / "missing"))[0] is None
    assert ev.choose_root(None, None)[0] is None
    assert ev.choose_root(None, "relative/dir")[0] is None
    assert ev.choose_root(None, "/")[0] is None
    assert ev.choose_root(None, "/etc")[0] is None
    monkeypatch.setenv("HOME", str(project))
    assert ev.choose_root(None, str(project))[0] is None  # the home directory itself is too broad
    assert ev.choose_root(project, "/")[0] == Path(os.path.realpath(project))  # --root wins
    with pytest.raises(ValueError, match="not a directory"):
        ev.choose_root(tmp_path / "missing", None)


def test_default_root_is_a_visible_directory_inside_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    for sub in ("work/app", ".ssh", ".config/tool", "work/.hidden/x"):
        (home / sub).mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert ev.choose_root(None, str(home / "work/app"))[0] == Path(os.path.realpath(home / "work/app"))
    for cwd in (home / ".ssh", home / ".config/tool", home / "work/.hidden/x", outside, Path("/etc/ssh")):
        root, reason = ev.choose_root(None, str(cwd))
        assert root is None and "--root" in reason, cwd
    assert ev.choose_root(outside, str(home / ".ssh"))[0] == Path(os.path.realpath(outside))  # explicit wins


def test_results_are_capped_json() -> None:
    data = {"matches": [{"line": i, "text": "x" * 290} for i in range(100)]}
    out = et.to_json(data)
    assert len(out) <= et.RESULT_CHARS and json.loads(out)["truncated"] is True


# ----------------------------------------------------------------------------- the loop
@pytest.fixture
def llm(llm_server) -> LLMClient:
    return LLMClient(MODEL, api_base=llm_server.base_url, timeout=10)


def tool_messages(body: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


async def test_loop_runs_real_tool_calls_and_refuses_escapes(llm_server, llm, project: Path) -> None:
    llm_server.push(
        tool_calls(
            *(
                call("read_file", {"path": p}, id=f"esc{i}")
                for i, p in enumerate(
                    ["/etc/passwd", "../../../etc/passwd", "link.txt", "outdir/notes.txt", "pipe.txt", "/dev/zero"]
                )
            )
        ),
        tool_calls(
            call("search_log", {"pattern": "ZeroDivisionError"}),
            call("search_file", {"path": "src/calc.py", "pattern": "raise"}),
            call("list_artifacts"),
        ),
        tool_calls(call("complete", {"findings": "- calc.py:3 raises ValueError (verified)"})),
    )
    rounds: list[str] = []
    result = await ev.gather_evidence(
        llm, tools_for(project), "SESSION: calc", max_rounds=8, progress=lambda d, t, label: rounds.append(label)
    )

    assert result.findings == "- calc.py:3 raises ValueError (verified)"
    assert result.ended_by == "complete" and result.rounds == 3
    assert [c["ok"] for c in result.calls] == [False] * 6 + [True, True, True, True]
    requests = llm_server.chat_requests()
    assert len(requests) == 3
    assert {t["function"]["name"] for t in requests[0]["tools"]} == {
        "search_log",
        "search_file",
        "read_file",
        "list_artifacts",
        "complete",
    }
    refusals = tool_messages(requests[1])
    assert len(refusals) == 6 and all("refused" in r["error"] for r in refusals)
    found = tool_messages(requests[2])[6:]
    assert found[0]["matches"][0]["line"] == 3
    assert found[1]["matches"][0]["text"] == "        raise ValueError('b is zero')"
    assert [a["readable_now"] for a in found[2]["artifacts"]] == [True, False]
    everything = json.dumps(requests)
    assert SECRET not in everything and "root:x:0:0" not in everything
    assert rounds == [f"evidence search round {n}" for n in (1, 2, 3)]


async def test_bad_calls_get_json_errors_and_the_loop_goes_on(llm_server, llm, project: Path) -> None:
    llm_server.push(
        tool_calls(
            call("read_file", "{not json", id="a"),
            call("delete_file", {"path": "x"}, id="b"),
            call("read_file", {"path": 3}, id="c"),
            call("complete", {"findings": ""}, id="d"),
        ),
        text("The session fixed divide()."),
    )
    result = await ev.gather_evidence(llm, tools_for(project), "ctx")
    errors = [m["error"] for m in tool_messages(llm_server.chat_requests()[1])]
    assert "not valid JSON" in errors[0]
    assert "unknown tool 'delete_file'" in errors[1]
    assert "non-empty string" in errors[2] and "non-empty string" in errors[3]
    assert result.ended_by == "no_tool_calls" and result.findings == "The session fixed divide()."


async def test_max_searches_forces_completion(llm_server, llm, project: Path) -> None:
    def responder(body: dict):
        names = [t["function"]["name"] for t in body.get("tools") or []]
        if names == ["complete"]:
            return tool_calls(call("complete", {"findings": "- forced findings"}))
        return tool_calls(call("search_log", {"pattern": "guard"}))

    llm_server.responder = responder
    result = await ev.gather_evidence(llm, tools_for(project), "ctx", max_rounds=2)
    requests = llm_server.chat_requests()
    assert len(requests) == 3
    assert [t["function"]["name"] for t in requests[-1]["tools"]] == ["complete"]
    assert "used all 2 rounds" in requests[-1]["messages"][-1]["content"]
    assert result.ended_by == "max_searches" and result.rounds == 2
    assert result.findings == "- forced findings"


async def test_forced_completion_may_answer_in_text(llm_server, llm) -> None:
    llm_server.push(tool_calls(call("list_artifacts")), text("only text findings"))
    result = await ev.gather_evidence(llm, tools_for(None), "ctx", max_rounds=1)
    assert result.ended_by == "max_searches" and result.findings == "only text findings"


async def test_provider_error_ends_search_without_raising(llm_server, llm) -> None:
    llm_server.push(tool_calls(call("list_artifacts")), fault(500))
    result = await ev.gather_evidence(llm, tools_for(None), "ctx")
    assert result.ended_by == "error" and "provider error 500" in result.notes[0]
    assert "1 tool call(s)" in result.findings


async def test_zero_rounds_is_disabled(llm_server, llm) -> None:
    result = await ev.gather_evidence(llm, tools_for(None), "ctx", max_rounds=0)
    assert result.ended_by == "disabled" and llm_server.chat_requests() == []


async def test_too_many_calls_in_one_round_are_answered_not_run(llm_server, llm) -> None:
    calls = [call("search_log", {"pattern": "x"}, id=f"c{i}") for i in range(ev.MAX_CALLS_PER_ROUND + 2)]
    llm_server.push(tool_calls(*calls), text("done"))
    await ev.gather_evidence(llm, tools_for(None), "ctx")
    answers = tool_messages(llm_server.chat_requests()[1])
    assert len(answers) == ev.MAX_CALLS_PER_ROUND + 2
    assert all("too many tool calls" in a["error"] for a in answers[ev.MAX_CALLS_PER_ROUND :])
