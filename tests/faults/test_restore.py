"""Restore under faults: a kill mid-import, a transcript that names a system directory, a malformed record.

Kill points are reproduced deterministically by the files a kill -9 leaves behind
(an effort log published without its manifest entry, a temporary log never
renamed), then ``restore`` runs again as the user would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.cli_session import CCM
from tests.helpers.openai_server import call, fault, text, tool_calls
from tests.helpers.restore_runs import responder, write_claude_session


def restore(ccm: CCM, transcript: Path, *extra: str) -> tuple[int, str, str]:
    return ccm.run(
        "restore",
        str(transcript),
        "--session-dir",
        str(ccm.dir),
        "--model",
        "openai/fake-model",
        "--api-base",
        ccm.server.base_url,
        *extra,
    )


@pytest.fixture
def transcript(ccm: CCM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "calc"
    (project / "src").mkdir(parents=True)
    (project / "src" / "calc.py").write_text("def divide(a, b):\n    if b == 0:\n        raise ValueError\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CCM_RETRY_BASE_SECONDS", "0")
    ccm.server.responder = responder
    return write_claude_session(tmp_path / "session.jsonl", project)


def unpublish(ccm: CCM, effort_id: str) -> None:
    """Cut the session back to the kill point: the log is in place, the manifest, its journal and the
    events do not name it."""
    manifest = ccm.manifest()
    manifest["efforts"] = [e for e in manifest["efforts"] if e["id"] != effort_id]
    (ccm.dir / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    events = []
    for event in ccm.lines("events.jsonl"):
        if event.get("effort_id") == effort_id:
            continue
        if event.get("event") == "efforts_saved":  # the journal: the entry was never saved either
            event["entries"] = [e for e in event["entries"] if e["id"] != effort_id]
            if not event["entries"]:
                continue
        events.append(event)
    (ccm.dir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


def effort_ids(ccm: CCM) -> list[str]:
    return [e["id"] for e in ccm.status()["efforts"]]


# --------------------------------------------------------------------------- item 3
def test_a_restore_killed_after_its_log_is_published_is_not_duplicated(ccm: CCM, transcript: Path) -> None:
    rc, _, err = restore(ccm, transcript, "--skip-evidence-search")
    assert rc == 0, err
    (effort_id,) = effort_ids(ccm)
    log = ccm.lines(f"efforts/{effort_id}.jsonl")
    unpublish(ccm, effort_id)  # kill point: log renamed into place, manifest entry not yet written
    assert effort_ids(ccm) == []

    rc, out, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    assert effort_ids(ccm) == [effort_id]  # the same id, once
    again = ccm.lines(f"efforts/{effort_id}.jsonl")
    assert [(m["role"], m["content"]) for m in again] == [(m["role"], m["content"]) for m in log]  # not appended
    assert len(list((ccm.dir / "efforts").iterdir())) == 1


def test_a_restore_killed_before_its_log_is_renamed_leaves_nothing_behind(ccm: CCM, transcript: Path) -> None:
    rc, _, err = restore(ccm, transcript, "--skip-evidence-search")
    assert rc == 0, err
    (effort_id,) = effort_ids(ccm)
    log_path = ccm.dir / "efforts" / f"{effort_id}.jsonl"
    unpublish(ccm, effort_id)
    # kill point: the temporary log is half written and was never renamed
    log_path.rename(log_path.with_name(f".import-{effort_id}.tmp"))
    with log_path.with_name(f".import-{effort_id}.tmp").open("a") as torn:
        torn.write('{"role": "user", "content": "tor')

    rc, _, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    assert effort_ids(ccm) == [effort_id]
    assert sorted(p.name for p in (ccm.dir / "efforts").iterdir()) == [f"{effort_id}.jsonl"]
    assert len(ccm.lines(f"efforts/{effort_id}.jsonl")) == 6


def test_a_foreign_log_under_the_chosen_id_is_kept(ccm: CCM, transcript: Path) -> None:
    rc, _, err = restore(ccm, transcript, "--skip-evidence-search")
    (effort_id,) = effort_ids(ccm)
    unpublish(ccm, effort_id)
    foreign = ccm.dir / "efforts" / f"{effort_id}.jsonl"
    foreign.write_text(json.dumps({"role": "user", "content": "someone else's work", "ts": "x"}) + "\n")

    rc, _, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    assert effort_ids(ccm) == [f"{effort_id}-2"]
    assert ccm.lines(f"efforts/{effort_id}.jsonl")[0]["content"] == "someone else's work"


def test_importing_the_same_transcript_again_says_where_it_is(ccm: CCM, transcript: Path) -> None:
    assert restore(ccm, transcript, "--skip-evidence-search")[0] == 0
    (effort_id,) = effort_ids(ccm)
    calls = len(ccm.server.chat_requests())

    rc, out, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    assert f"already imported as {effort_id}" in out
    assert len(ccm.server.chat_requests()) == calls  # no model work
    assert effort_ids(ccm) == [effort_id]
    rc, out, err = restore(ccm, transcript, "--skip-evidence-search", "--force")
    assert rc == 0, err
    assert effort_ids(ccm) == [effort_id, f"{effort_id}-2"]


def test_an_import_rebuilt_by_repair_is_still_recognised(ccm: CCM, transcript: Path) -> None:
    """repair rebuilds the manifest from the event log: the import's content hash comes back with it."""
    assert restore(ccm, transcript, "--skip-evidence-search")[0] == 0
    (effort_id,) = effort_ids(ccm)
    (ccm.dir / "manifest.yaml").write_text("efforts: [\n")  # broken by hand
    rc, _out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 0, err

    rc, out, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    assert f"already imported as {effort_id}" in out
    assert effort_ids(ccm) == [effort_id]


def test_an_escaped_lone_surrogate_in_a_transcript_leaves_the_session_usable(ccm: CCM, transcript: Path) -> None:
    """JSON may escape half of an emoji ("\\ud83d"): it cannot be written as UTF-8, so the import
    replaces it, and search and status keep working afterwards (found in review)."""
    raw = transcript.read_text()
    transcript.write_text(raw.replace("crashes when b is zero", "crashes when b is zero \\ud83d"))
    assert "\\ud83d" in transcript.read_text()

    rc, _out, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    (effort_id,) = effort_ids(ccm)
    rc, out, err = ccm.run("search", "--session-dir", str(ccm.dir), "--json", "divide zero")
    assert rc == 0, err
    assert [r["id"] for r in json.loads(out)["results"]] == [effort_id]
    log = (ccm.dir / "efforts" / f"{effort_id}.jsonl").read_text(encoding="utf-8")
    assert "\ufffd" in log or "\\ufffd" in log


def test_a_killed_import_listed_by_repair_is_completed_not_copied(ccm: CCM, transcript: Path) -> None:
    """Killed after its log was published, before the manifest named it; then ``repair`` listed the
    bare file (placeholder summary, no provenance): the next import completes that effort."""
    assert restore(ccm, transcript, "--skip-evidence-search")[0] == 0
    (effort_id,) = effort_ids(ccm)
    logged = len(ccm.lines(f"efforts/{effort_id}.jsonl"))
    unpublish(ccm, effort_id)
    rc, _out, err = ccm.run("repair", "--session-dir", str(ccm.dir), "--force")
    assert rc == 0, err
    assert ccm.status()["efforts"][0]["summary"].startswith("(summary lost in a repair")

    rc, _out, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    (effort,) = ccm.status()["efforts"]
    assert effort["id"] == effort_id
    assert not effort["summary"].startswith("(summary lost") and effort["source"]["sha256"]
    assert len(ccm.lines(f"efforts/{effort_id}.jsonl")) == logged  # the transcript once, not twice
    assert f"already imported as {effort_id}" in restore(ccm, transcript, "--skip-evidence-search")[1]


# --------------------------------------------------------------------------- item 11
def test_a_transcript_cannot_make_a_system_directory_readable(ccm: CCM, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    transcript = write_claude_session(tmp_path / "session.jsonl", Path("/etc/ssh"))

    def probe(body):
        if body.get("tools") and not any(m["role"] == "tool" for m in body["messages"]):
            return tool_calls(
                call("read_file", {"path": "/etc/ssh/ssh_config"}),
                call("read_file", {"path": "ssh_config"}),
                call("search_file", {"path": "ssh_config", "pattern": "Host"}),
            )
        if body.get("tools"):
            return tool_calls(call("complete", {"findings": "- nothing"}))
        return responder(body)

    ccm.server.responder = probe
    rc, _, err = restore(ccm, transcript)

    assert rc == 0, err
    assert "evidence search: no file access" in err and "/etc/ssh" in err and "--root" in err
    evidence = [b for b in ccm.server.chat_requests() if b.get("tools")]
    answers = [json.loads(m["content"]) for m in evidence[1]["messages"] if m["role"] == "tool"]
    assert len(answers) == 3 and all("error" in answer and "content" not in answer for answer in answers)
    assert "Host" not in json.dumps(answers).replace('"pattern": "Host"', "")


# --------------------------------------------------------------------------- item 12
def test_a_malformed_record_is_skipped_and_counted(ccm: CCM, transcript: Path) -> None:
    lines = transcript.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["type"] = ["x"]
    lines.insert(3, json.dumps(bad))
    lines.insert(4, json.dumps({"type": "user", "uuid": "z", "message": ["not", "a", "message"]}))
    transcript.write_text("\n".join(lines) + "\n")

    rc, out, err = ccm.run("restore", str(transcript), "--parse-only", "--json")
    assert rc == 0, err
    parsed = json.loads(out)
    assert len(parsed["turns"]) == 3
    assert "line 4: record of an unexpected shape" in parsed["skipped"]

    rc, _, err = restore(ccm, transcript, "--skip-evidence-search")
    assert rc == 0, err
    assert ccm.status()["efforts"][0]["id"]


# --------------------------------------------------------------------------- issue 33, item 4
def test_a_provider_failing_every_other_request_cannot_pass_the_files_ceiling(ccm: CCM, tmp_path: Path) -> None:
    """Each call needs a retry: the calls would double; the file stops at its stated ceiling, the
    turns past it are noted, and what was summarized lands (the summary built without the model)."""
    transcript = tmp_path / "chat.md"
    transcript.write_text("".join(f"**User:** q{n}\n\n**Assistant:** a{n}\n\n" for n in range(1, 31)))
    seen = {"n": 0}

    def flaky(body):
        seen["n"] += 1
        if seen["n"] % 2:
            return fault(503)
        number = body["messages"][-1]["content"].split("this is turn ", 1)[-1].split(" ", 1)[0]
        return text(f"TURN SUMMARY\n\nTurn number: {number}\nUser request summary: q\nKey outcomes: a")

    ccm.server.responder = flaky
    rc, out, err = restore(ccm, transcript, "--skip-evidence-search")

    assert rc == 0, err
    (estimate,) = [line for line in err.splitlines() if "estimate:" in line]
    assert "up to 31 model call(s)" in estimate and "34 at most with retries" in estimate
    assert len(ccm.server.chat_requests()) == 34
    assert "this file's limit of 34 model calls is reached" in err
    assert "(13 could not be summarized)" in out  # 17 turns took 34 requests
    assert ccm.status()["efforts"][0]["source"]["summary_offline"] is True
