"""kill -9 campaigns against ``repair`` and ``restore`` (the turn campaign is in :mod:`.kill9`).

Each kill lands at a random moment of a real ``ccm-tui`` process; the session is then checked:

* repair — a broken ``manifest.yaml`` on a large event log; after each kill a ``manifest.yaml``
  must exist, and a repair run to the end must give every effort back (none lost, the active one
  still active);
* restore — a transcript imported into a fresh session, killed, then imported again; the
  transcript must be in the session exactly once (a second effort, or an effort log holding
  the transcript's messages twice, is a *duplicated* import; a temporary log left behind or a
  log no manifest entry names is a violation).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from ccm_tui.cli import main; sys.exit(main(sys.argv[1:]))"
TRANSCRIPT = ROOT / "tests" / "fixtures" / "transcripts" / "claude-code-session.jsonl"


@dataclass
class CampaignReport:
    kills: int = 0
    corrupt_files: list[str] = field(default_factory=list)
    missing_manifest: int = 0  # kills after which no manifest.yaml existed
    lost: list[str] = field(default_factory=list)  # efforts (repair) no longer in the manifest
    duplicated: int = 0  # transcripts imported twice (restore)
    violations: list[str] = field(default_factory=list)
    reference_seconds: float = 0.0  # one unkilled run, measured in the same campaign
    finished_first: int = 0  # runs that ended before their kill moment (counted in kills)
    summary_hits: int = 0  # kills that landed while a summary call was waiting (a slow summary model)


def _env() -> dict[str, str]:
    return dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT), OPENAI_API_KEY="sk-test-fake")


def _cli(*argv: str) -> list[str]:
    return [sys.executable, "-c", CLI, *argv]


def status(session: Path) -> tuple[int, dict, str]:
    from ccm_tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["status", "--session-dir", str(session), "--json"])
    return rc, (json.loads(out.getvalue()) if rc == 0 else {}), err.getvalue()


def corrupt_lines(session: Path) -> list[str]:
    """Broken JSONL lines other than a torn last one, in every log of the session."""
    bad = []
    for path in [session / "raw.jsonl", session / "events.jsonl", *sorted((session / "efforts").glob("*.jsonl"))]:
        if not path.exists():
            continue
        lines = path.read_bytes().split(b"\n")
        for i, line in enumerate(lines[:-1]):
            try:
                json.loads(line)
            except ValueError:
                bad.append(f"{path.name}:{i + 1}")
    return bad


def _kill_at(cmd: list[str], delay: float) -> int | None:
    """Run ``cmd``, kill -9 it after ``delay`` seconds; None when it was killed, else its exit code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(), cwd=ROOT)
    try:
        proc.wait(timeout=delay)
        return proc.returncode
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def _kill_in_summary(cmd: list[str], slow: Any, nth: int, within: float, rng: random.Random) -> str | None | bool:
    """Run ``cmd``; once the server holds its ``nth`` summary call, kill -9 it at a random moment of the
    call's first ``within`` seconds. The kind of call the kill landed in (:meth:`.SlowSummaries.kill_inside`:
    the server had it and had not answered), None when the kill missed, False when the run ended first
    (or the call was answered before it was seen: then the run is killed at once, and it is a miss)."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(), cwd=ROOT)
    try:
        call = slow.wait_for_one(started, 120, proc=proc, nth=nth)
        if call is None:
            if proc.poll() is not None:
                return False
            return slow.kill_inside(proc, started)
        time.sleep(max(0.0, call.start + rng.uniform(0.0, within) - time.monotonic()))
        return slow.kill_inside(proc, started)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _timed(cmd: list[str]) -> tuple[int, float, str]:
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT)
    return done.returncode, time.monotonic() - start, done.stderr


# --------------------------------------------------------------------------- repair
def build_repair_session(session: Path, efforts: int, events_mb: float) -> tuple[bytes, set[str], str]:
    """A session whose event log holds ``efforts`` efforts (all concluded but the last, which is
    open and active) padded with turn events to ``events_mb`` MB, and a manifest broken on one
    line. Returns the broken manifest's bytes, every effort id, and the active id."""
    from ccm_tui.core.manifest.effort import CONCLUDED, OPEN, Effort
    from ccm_tui.core.manifest.yaml_file import dump_block, head_bytes

    (session / "efforts").mkdir(parents=True, exist_ok=True)
    ids = [f"effort-{i:04d}" for i in range(efforts)]
    lines: list[str] = []
    rows = []
    for i, eid in enumerate(ids):
        ts = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        lines.append(json.dumps({"event": "effort_opened", "turn": i, "ts": ts, "effort_id": eid, "name": eid}))
        (session / "efforts" / f"{eid}.jsonl").write_text(
            json.dumps({"role": "user", "content": f"work on {eid}", "ts": ts}) + "\n"
        )
        last = i == efforts - 1
        if not last:
            lines.append(
                json.dumps(
                    {"event": "effort_concluded", "turn": i, "ts": ts, "effort_id": eid, "summary": f"{eid} done."}
                )
            )
        rows.append(
            Effort(
                id=eid,
                name=eid,
                status=OPEN if last else CONCLUDED,
                active=last,
                summary=None if last else f"{eid} done.",
                created=ts,
            ).to_dict()
        )
    pad = "padding words " * 40
    n = 0
    size = sum(len(x) + 1 for x in lines)
    while size < events_mb * 1_000_000:
        n += 1
        line = json.dumps({"event": "turn_done", "turn": n, "ts": "2026-01-02T00:00:00.000Z", "note": pad})
        lines.append(line)
        size += len(line) + 1
    (session / "events.jsonl").write_text("\n".join(lines) + "\n")
    text = (head_bytes(None, not rows) + b"".join(dump_block(r) for r in rows)).decode()
    broken = text.replace("status:", "status: [broken", 1).encode()
    return broken, set(ids), ids[-1]


def run_repair_campaign(
    workdir: Path, kills: int, seed: int = 1, *, efforts: int = 300, events_mb: float = 28.0, log=print
):
    rng = random.Random(seed)
    report = CampaignReport()
    session = workdir / "repair-session"
    broken, ids, active = build_repair_session(session, efforts, events_mb)
    manifest = session / "manifest.yaml"

    def reset() -> None:
        manifest.write_bytes(broken)
        for extra in session.glob("manifest.yaml.*"):
            extra.unlink()
        for extra in session.glob(".manifest.yaml*"):
            extra.unlink()

    reset()
    rc, report.reference_seconds, err = _timed(_cli("repair", "--session-dir", str(session)))
    if rc != 0:
        report.violations.append(f"reference repair failed: {err.strip()[-300:]}")
        return report
    for k in range(kills):
        reset()
        delay = rng.uniform(0.0, report.reference_seconds * 1.1)
        if _kill_at(_cli("repair", "--session-dir", str(session)), delay) is not None:
            report.finished_first += 1
        report.kills += 1
        if not manifest.exists():
            report.missing_manifest += 1
        rc, _, err = _timed(_cli("repair", "--session-dir", str(session)))
        if rc != 0 and "nothing to repair" not in err:
            report.violations.append(f"repair after kill {k + 1} failed: {err.strip()[-300:]}")
            continue
        rc, data, err = status(session)
        if rc != 0:
            report.violations.append(f"status after kill {k + 1}: {err.strip()}")
            continue
        rows = {e["id"]: e for e in data["efforts"]}
        report.lost.extend(sorted(ids - set(rows)))
        if not rows.get(active, {}).get("active"):
            report.violations.append(f"kill {k + 1}: {active} is no longer the active effort")
        report.corrupt_files.extend(corrupt_lines(session))
        log(f"repair kill {k + 1}/{kills}: missing manifest {report.missing_manifest}, lost {len(report.lost)}")
    return report


# --------------------------------------------------------------------------- restore
def _effort_log_lengths(session: Path) -> dict[str, int]:
    """Messages in each effort log of a session, by effort id."""
    directory = session / "efforts"
    if not directory.is_dir():
        return {}
    return {
        log.stem: sum(1 for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip())
        for log in directory.glob("*.jsonl")
    }


TURN_ANSWER = """TURN SUMMARY
Turn number: {turn}
User request summary: the user asked for the next step of the upgrade.
Agent response summary: the agent made the change and ran the checks.
Key outcomes: the step is done; the checks pass.
State changes: none
Artifacts modified: none
Constraints/assumptions added: none
Open questions after this turn: none"""
SESSION_ANSWER = """SESSION SUMMARY
Summary: the upgrade was carried out step by step, each step checked (restored by the model).
Goal: upgrade the project.
Outcome: done, the checks pass."""


def _restore_responder(body: dict) -> Any:
    """Turn summaries and the SESSION SUMMARY, as a model following the prompts would write them."""
    from tests.helpers.campaigns.slow_summary import summary_kind
    from tests.helpers.openai_server import text

    if summary_kind(body) == "restore-session":
        return text(SESSION_ANSWER)
    current = [m for m in str(body["messages"][-1].get("content") or "").split("CURRENT TURN ")[1:]]
    return text("\n\n".join(TURN_ANSWER.format(turn=part.split(":", 1)[0]) for part in current) or "?")


def _restored_whole(data: dict, reference: dict) -> str | None:
    """Why the session's import is not the reference's (None: the same turns, every one summarized, the
    model's SESSION SUMMARY): a restart must do the interrupted turn summaries again, not skip them."""
    efforts = data.get("efforts") or []
    if len(efforts) != 1:
        return None  # (counted as lost or duplicated)
    got, want = efforts[0], reference["efforts"][0]
    source, wanted = got.get("source") or {}, want.get("source") or {}
    if source.get("skipped_turns"):
        return f"turns {source['skipped_turns']} left unsummarized"
    if (source.get("turns"), got.get("messages")) != (wanted.get("turns"), want.get("messages")):
        return f"{source.get('turns')} turns, {got.get('messages')} messages (want {wanted.get('turns')}, {want.get('messages')})"
    if got.get("summary") != want.get("summary"):
        return f"summary {str(got.get('summary'))[:60]!r} is not the model's"
    return None


def run_restore_campaign(
    workdir: Path, kills: int, seed: int = 1, *, log=print, summary_delay: float = 0.0
) -> CampaignReport:
    """``summary_delay``: a slow summary model (each of the restore's turn-by-turn summary calls waits that
    long); each kill then lands inside one of them, the first, second … last at random
    (``report.summary_hits`` counts the kills the server saw land in one), and the run again must give
    the whole import (:func:`_restored_whole`) and a derived index that rebuilds the same."""
    from tests.helpers.campaigns.rebuild_check import rebuilt_differs
    from tests.helpers.campaigns.slow_summary import SlowSummaries
    from tests.helpers.openai_server import FakeLLMServer

    rng = random.Random(seed)
    report = CampaignReport()
    with FakeLLMServer(chunk_chars=16, stream_delay=0.002) as server:
        slow = SlowSummaries(_restore_responder, 0.0, ("restore-turn",), log=workdir / "summary_calls.jsonl")
        server.responder = slow

        def restore(session: Path) -> list[str]:
            return _cli(
                "restore",
                "--session-dir",
                str(session),
                "--model",
                "openai/fake-model",
                "--api-base",
                server.base_url,
                "--skip-evidence-search",
                str(TRANSCRIPT),
            )

        begun = time.monotonic()  # (the reference run: at full speed)
        rc, report.reference_seconds, err = _timed(restore(workdir / "reference"))
        turn_calls = len(slow.calls(begun))
        if rc != 0 or not turn_calls:
            report.violations.append(f"reference restore failed ({turn_calls} turn calls): {err.strip()[-300:]}")
            return report
        reference = status(workdir / "reference")[1]
        reference_messages = _effort_log_lengths(workdir / "reference")
        for k in range(kills):
            session = workdir / f"restore-{k}"
            slow.delay = summary_delay
            if summary_delay > 0:
                killed = _kill_in_summary(restore(session), slow, rng.randint(1, turn_calls), summary_delay * 0.5, rng)
                if killed:
                    report.summary_hits += 1
                elif killed is False:
                    report.finished_first += 1
            elif _kill_at(restore(session), rng.uniform(0.0, report.reference_seconds * 1.1)) is not None:
                report.finished_first += 1
            report.kills += 1
            slow.delay = 0.0  # (the run again: at full speed)
            rc, _, err = _timed(restore(session))  # the user runs it again
            if rc != 0 and "already imported" not in err:
                report.violations.append(f"restore after kill {k + 1} failed: {err.strip()[-300:]}")
            rc, data, err = status(session)
            if rc != 0:
                report.violations.append(f"status after kill {k + 1}: {err.strip()}")
                continue
            logs = _effort_log_lengths(session)
            named = {e["id"] for e in data["efforts"]}
            if len(data["efforts"]) > 1 or any(n > max(reference_messages.values()) for n in logs.values()):
                report.duplicated += 1
            elif not data["efforts"]:
                report.lost.append(f"restore-{k}")
            partial = _restored_whole(data, reference)
            if partial:
                report.violations.append(f"kill {k + 1}: the run again gave a partial import: {partial}")
            leftovers = (
                sorted(p.name for p in (session / "efforts").glob(".*")) if (session / "efforts").is_dir() else []
            )
            unnamed = sorted(set(logs) - named)
            if leftovers or unnamed:
                report.violations.append(f"kill {k + 1}: files left behind {leftovers + unnamed}")
            differs = rebuilt_differs(session, ("upgrade", "checks"))
            if differs:
                report.violations.append(f"kill {k + 1}: {differs}")
            report.corrupt_files.extend(corrupt_lines(session))
            hits = f", kills in a turn summary call {report.summary_hits}" if summary_delay > 0 else ""
            log(
                f"restore kill {k + 1}/{kills}: duplicated {report.duplicated}, lost {len(report.lost)}, "
                f"violations {len(report.violations)}{hits}"
            )
    return report
