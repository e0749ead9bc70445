"""``ccm-tui forget`` end to end: a string planted in an effort's log, its summary, ambient chat, a note
and the prompt history is in no byte under the session directory afterwards (the index included, after
its WAL), everything else is still found, and the session keeps working."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ccm_tui.config import Settings
from ccm_tui.core.engine.forget import PENDING_FILE, ForgetRequest, forget
from ccm_tui.core.service.controller import SessionController
from ccm_tui.core.service.run_state import Remember
from ccm_tui.core.session.lock import Presence
from ccm_tui.core.session.prompt_history import DRAFT_FILE, PromptHistory
from tests.helpers.cli_session import conclude_auth_bug, open_auth_bug
from tests.helpers.openai_server import text

SECRET = 'Kx9-plant "é"\tZoltan4412'  # quotes, a tab and an accent: escaped differently in JSON and YAML
KEPT = "cardamom"


def layouts(value: str) -> list[bytes]:
    """Every way the session's files may hold ``value``."""
    return sorted(
        {
            value.encode("utf-8"),
            json.dumps(value, ensure_ascii=False)[1:-1].encode("utf-8"),
            json.dumps(value)[1:-1].encode("ascii"),
        }
    )


def files_holding(directory: Path, value: str, word: bytes = b"zoltan4412") -> list[str]:
    """The files that hold ``value`` in any layout (or ``word``, lowercased: the index's tokens)."""
    hits = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if any(v in data for v in layouts(value)) or word in data.lower():
            hits.append(str(path.relative_to(directory)))
    return hits


def plant(ccm) -> None:
    open_auth_bug(ccm)
    ccm.server.push(text(f"Noted: the key is {SECRET} and we grind {KEPT} first."))
    ccm.send(f"The staging key is {SECRET}; also remember {KEPT} pods.")
    conclude_auth_bug(ccm, summary=f"Auth bug fixed. The key {SECRET} was rotated. Tokens refresh in an interceptor.")
    ccm.server.push(text(f"Ambient reply about {SECRET}."))
    ccm.send(f"ambient question about {SECRET} and saffron")

    async def note() -> None:
        controller = SessionController(ccm.dir, Settings())
        await controller.open()
        try:
            assert (await controller.run(Remember(f"A note: {SECRET} is the staging key."))).ok
        finally:
            await controller.close()

    asyncio.run(note())
    PromptHistory(ccm.dir).add(f"typed {SECRET}")
    (ccm.dir / DRAFT_FILE).write_text(f"draft with {SECRET}")


def test_forget_text_leaves_no_byte_and_keeps_everything_else(ccm):
    plant(ccm)
    assert ccm.search("Zoltan4412")["results"]  # (the index holds it before)
    assert len(files_holding(ccm.dir, SECRET)) >= 6

    rc, out, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--text", SECRET, "--yes")

    assert rc == 0, err
    assert "forgot the text" in out and SECRET not in out + err
    assert (ccm.dir / "derived.sqlite").exists()  # scrubbed in place, not left to a rebuild
    assert files_holding(ccm.dir, SECRET) == []
    assert ccm.search("Zoltan4412")["results"] == []
    found = ccm.search(KEPT)["results"]
    assert [r["id"] for r in found] == ["auth-bug"]  # the line lost the string, not its other words
    assert ccm.search("saffron")["results"]  # the ambient line too
    assert ccm.search("interceptor")["results"]  # the summary kept its other sentences
    assert files_holding(ccm.dir, SECRET) == []  # the index rebuilt by those searches, its WAL included
    summary = ccm.effort("auth-bug")["summary"]
    assert summary == "Auth bug fixed. Tokens refresh in an interceptor."
    forgotten = ccm.events("forgotten")
    assert len(forgotten) == 1 and forgotten[0]["kind"] == "text" and forgotten[0]["occurrences"] >= 8
    assert not (ccm.dir / PENDING_FILE).exists()

    ccm.server.push(text("Still here."))
    reply = ccm.send(f"Are you still working? {KEPT}")
    assert reply["reply"] == "Still here."
    assert SECRET not in json.dumps(ccm.server.chat_requests()[-1])


def test_forget_asks_and_refuses_without_a_terminal(ccm):
    plant(ccm)
    rc, out, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--text", SECRET)
    assert rc == 1 and "--yes" in err and len(err.strip().splitlines()) == 1
    assert files_holding(ccm.dir, SECRET)  # nothing was changed


def test_forget_refuses_a_session_open_in_the_tui(ccm):
    plant(ccm)
    presence = Presence(ccm.dir)
    presence.hold()
    try:
        rc, _, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--text", SECRET, "--yes")
    finally:
        presence.release()
    assert rc == 1 and "open in ccm-tui" in err


def test_forget_an_effort_keeps_its_neighbours(ccm):
    plant(ccm)
    ccm.server.push(text("Other effort."))
    assert ccm.run("send", *ccm.send_argv("/open pepper grinder")[1:])[0] == 0
    ccm.send(f"The pepper grinder needs {KEPT} too")
    before = {e["id"] for e in ccm.status()["efforts"]}
    assert "auth-bug" in before

    rc, out, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--effort", "auth-bug", "--yes")

    assert rc == 0, err
    ids = {e["id"] for e in ccm.status()["efforts"]}
    assert ids == before - {"auth-bug"}
    assert not (ccm.dir / "efforts" / "auth-bug.jsonl").exists()
    assert files_holding(ccm.dir, "Tokens refresh in an interceptor", b"tokens refresh in") == []
    assert files_holding(ccm.dir, "auth-bug", b"auth-bug") == []
    assert [r["id"] for r in ccm.search(KEPT)["results"]] == ["pepper-grinder"]
    ccm.server.push(text("Fine."))
    assert ccm.send("And now?")["reply"] == "Fine."


def test_forget_lines_keeps_the_other_lines_and_their_numbers(ccm):
    open_auth_bug(ccm)
    ccm.server.push(text(f"Grind {KEPT} first."))
    ccm.send(f"The staging key is {SECRET}, and what spice?")
    log = ccm.dir / "efforts" / "auth-bug.jsonl"
    before = log.read_text().splitlines()
    assert len(before) == 4

    rc, _, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--effort", "auth-bug", "--lines", "3", "--yes")

    assert rc == 0, err
    after = log.read_text().splitlines()
    assert len(after) == 4 and after[:2] == before[:2] and after[3] == before[3]
    assert json.loads(after[2])["content"] == "[forgotten]"
    assert files_holding(ccm.dir, SECRET) == []
    assert [r["id"] for r in ccm.search(KEPT)["results"]] == ["auth-bug"]
    rc, _, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--effort", "auth-bug", "--lines", "9-12", "--yes")
    assert rc == 1 and "line" in err and len(err.strip().splitlines()) == 1
    rc, _, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--effort", "nope", "--yes")
    assert rc == 1 and "nope" in err


def test_an_interrupted_forget_blocks_others_until_run_again(ccm):
    plant(ccm)
    directory = ccm.dir
    request = ForgetRequest.of_text(SECRET)
    from ccm_tui.core.engine import forget as module

    module._write_pending(directory, request)  # as a kill -9 right after the pending record
    pending = (directory / PENDING_FILE).read_bytes()
    assert not any(v in pending for v in layouts(SECRET))
    rc, _, err = ccm.run("forget", "--session-dir", str(directory), "--text", "saffron", "--yes")
    assert rc == 1 and "did not finish" in err
    report = forget(directory, request)
    assert report.resumed and files_holding(directory, SECRET) == []
    assert not (directory / PENDING_FILE).exists()


def test_efforts_journaled_after_the_manifest_survive_a_forget(ccm):
    """A manifest that lags the journal (killed before its flush) is brought up to date, never cut back."""
    plant(ccm)
    manifest = ccm.dir / "manifest.yaml"
    body = manifest.read_text().split("\n", 1)[1] if manifest.read_text().startswith("#") else manifest.read_text()
    mark = (ccm.dir / "events.jsonl").stat().st_size
    manifest.write_text(f"# ccm-tui journal: events.jsonl@{mark}\n{body}")
    entry = {"id": "late-one", "status": "concluded", "summary": f"Late: {SECRET} and {KEPT}.", "name": "late one"}
    entry |= {"raw_file": "efforts/late-one.jsonl", "created": "2026-01-01T00:00:00Z", "messages": 1}
    (ccm.dir / "efforts" / "late-one.jsonl").write_text(json.dumps({"role": "user", "content": f"late {KEPT}"}) + "\n")
    with (ccm.dir / "events.jsonl").open("a") as fh:
        saved = {"event": "efforts_saved", "turn": 9, "ts": "2026-01-01T00:00:00Z", "entries": [entry]}
        fh.write(json.dumps(saved, separators=(",", ":")) + "\n")
    assert "late-one" in {e["id"] for e in ccm.status()["efforts"]}

    rc, _, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--text", SECRET, "--yes")

    assert rc == 0, err
    assert files_holding(ccm.dir, SECRET) == []
    late = next(e for e in ccm.status()["efforts"] if e["id"] == "late-one")
    assert late["summary"] == f"Late: [forgotten] and {KEPT}."
    assert not manifest.read_text().startswith("# ccm-tui journal")
    assert "late-one" in {r["id"] for r in ccm.search(KEPT)["results"]}


def test_slash_forget_asks_then_forgets_and_the_next_turn_is_clean(ccm):
    plant(ccm)
    asked = ccm.send(f"/forget {SECRET}")
    assert "occurrence(s)" in asked["reply"] and "--yes" in asked["reply"] and SECRET not in asked["reply"]
    assert files_holding(ccm.dir, SECRET)  # nothing gone yet
    done = ccm.send(f"/forget --yes {SECRET}")
    assert "forgot the text" in done["reply"]
    assert files_holding(ccm.dir, SECRET) == []
    PromptHistory(ccm.dir).add(f"/forget --yes {SECRET}")  # (the TUI's input: the command is not remembered)
    assert files_holding(ccm.dir, SECRET) == []
    ccm.server.push(text("Clean."))
    assert ccm.send(f"And the {KEPT}?")["reply"] == "Clean."
    assert "Zoltan4412" not in json.dumps(ccm.server.chat_requests()[-1])
    rc, _, err = ccm.run(*ccm.send_argv("/forget --effort auth-bug --lines 3-1"))
    assert rc == 2 and "A-B" in err  # a usage error, like any slash command typed wrong


def test_a_line_written_behind_the_apps_back_is_found_too(ccm):
    """The index is checked against every log's stat, not only the session's marker: a line appended
    by hand after the last search is still a candidate."""
    open_auth_bug(ccm)
    assert ccm.search("401")["results"]
    with (ccm.dir / "efforts" / "auth-bug.jsonl").open("a") as fh:
        fh.write(json.dumps({"role": "user", "content": f"pasted {SECRET} by hand", "ts": "x"}) + "\n")

    rc, out, err = ccm.run("forget", "--session-dir", str(ccm.dir), "--text", SECRET, "--yes")

    assert rc == 0 and "1 occurrence(s) in 1 file" in out, out + err
    assert files_holding(ccm.dir, SECRET) == [] and (ccm.dir / "derived.sqlite").exists()
