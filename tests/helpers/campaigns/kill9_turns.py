"""kill -9 fault injection: run turns against a slow-streaming loopback server, kill the
process at random points, and check the session after every kill.

Invariants checked after each kill (with ``ccm-tui status --json`` and the files):
at most one active effort; concluded ⇒ summary; every manifest effort has its log;
no broken line in any JSONL except a torn last one; every acknowledged turn is on disk.
With ``fold`` (a model without tools, chat about one topic after another: the app folds ambient
chat into efforts after turns) also: no ambient line is folded into two efforts (issue 32, B).
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
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.campaigns.slow_summary import SlowSummaries
from tests.helpers.openai_server import FakeLLMServer, call, text, tool_calls

ROOT = Path(__file__).resolve().parents[3]


def responder(body: dict):
    """A model that opens, concludes, expands and answers depending on the message."""
    messages = body["messages"]
    if not body.get("tools"):
        system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
        if "You write the summary" in system or messages[-1]["role"] != "user":
            return text("Summary: the effort covered some work and reached an outcome.")
        # a model without tools (the fold campaign): a reply about what was asked
        return text("About that: " + str(messages[-1].get("content", "")).split(" ", 1)[-1] + ", slowly " * 10)
    last = messages[-1]
    if last["role"] == "tool":
        return text("Done with that. " + "streaming words " * 20)
    content = str(last.get("content", ""))
    if content.endswith("OPEN"):
        return tool_calls(call("open_effort", {"name": content.split()[0]}))
    if content.endswith("CLOSE"):
        return tool_calls(call("close_effort", {}))
    if content.endswith("ASIDE"):
        return tool_calls(call("route_to_ambient", {}))
    if content.endswith("EXPAND"):
        ids = [
            line.split(":")[0].strip("- ").strip()
            for line in messages[0]["content"].splitlines()
            if line.startswith("- m")
        ]
        if ids:
            return tool_calls(call("expand_effort", {"id": ids[0]}))
    return text("A reply that streams slowly, " + "word " * 40)


@dataclass
class CampaignResult:
    kills: int = 0
    acked: int = 0
    corrupt_files: list[str] = field(default_factory=list)
    lost_turns: list[str] = field(default_factory=list)
    duplicated_turns: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    recoveries: int = 0
    folds: int = 0  # efforts folded from the ambient chat, at the end
    folded_twice: list[str] = field(default_factory=list)  # ambient lines in two folds
    summary_hits: int = 0  # kills that landed while a summary call (a conclusion, a fold) was waiting


def run_status(session: Path) -> tuple[int, str, str]:
    """``ccm-tui status --json`` in-process (it imports neither litellm nor textual)."""
    from ccm_tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["status", "--session-dir", str(session), "--json"])
    return rc, out.getvalue(), err.getvalue()


def check_session(session: Path, acked: list[str], result: CampaignResult) -> None:
    rc, out, err = run_status(session)
    if rc != 0:
        result.violations.append(f"status failed: {err.strip()}")
        return
    status = json.loads(out)
    efforts = status["efforts"]
    spans = sorted(
        (tuple(e["source"]["lines"]), e["id"])
        for e in efforts
        if (e.get("source") or {}).get("folded_from") == "ambient"
    )
    result.folds = len(spans)
    folded = {effort_id for _, effort_id in spans}
    named = {e["id"] for e in efforts}
    for (a, first), (b, second) in zip(spans, spans[1:]):
        twice = f"{first} {list(a)} and {second} {list(b)}"
        if b[0] <= a[1] and twice not in result.folded_twice:
            result.folded_twice.append(twice)
    if sum(1 for e in efforts if e["active"]) > 1:
        result.violations.append("more than one active effort")
    for e in efforts:
        if e["status"] == "concluded" and not e["summary"]:
            result.violations.append(f"{e['id']}: concluded without summary")
        if not (session / e["raw_file"]).exists():
            result.violations.append(f"{e['id']}: log file missing")
    logged = []
    for path in [session / "raw.jsonl", session / "events.jsonl", *sorted((session / "efforts").glob("*.jsonl"))]:
        if not path.exists():
            continue
        lines = path.read_bytes().split(b"\n")
        torn = lines[-1]  # "" when the file ends with a newline
        for i, line in enumerate(lines[:-1]):
            try:
                record = json.loads(line)
            except ValueError:
                result.corrupt_files.append(f"{path.name}:{i + 1}")
                continue
            # a fold's log copies ambient lines (and one a kill left before its effort was saved is
            # adopted by the next fold of the same lines): a copy, not a second logging
            copy = path.parent.name == "efforts" and (path.stem in folded or path.stem not in named)
            if path.name != "events.jsonl" and record.get("role") == "user" and not copy:
                logged.append(record.get("content"))
        del torn
    missing = [m for m in acked if m not in logged]
    result.lost_turns.extend(m for m in missing if m not in result.lost_turns)
    # every driver message is unique: one logged twice was re-sent after it had been logged
    seen: set[str] = set()
    for m in logged:
        if m in seen and m not in result.duplicated_turns:
            result.duplicated_turns.append(m)
        seen.add(m)


def run_campaign(
    workdir: Path, kills: int, seed: int = 1, log=print, *, fold: bool = False, summary_delay: float = 0.0
) -> CampaignResult:
    """``summary_delay``: a slow summary model (each summary call waits that long); each kill then waits
    for a summary call of its process to be in flight (up to 30 s) and lands inside it."""
    rng = random.Random(seed)
    result = CampaignResult()
    session = workdir / "session"
    acked: list[str] = []
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT))
    home = workdir / "home"  # what the app learns of the model (no tools) stays in the campaign
    env.update(HOME=str(home), CCM_HOME=str(home / "ccm"), XDG_CONFIG_HOME=str(home / ".config"))
    with FakeLLMServer(chunk_chars=4, stream_delay=0.004) as server:
        slow = SlowSummaries(responder, summary_delay)
        server.responder = slow
        server.refuse_tools = fold  # a model without tools: the app folds by itself
        for k in range(kills):
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.helpers.campaigns.turn_driver",
                    str(session),
                    server.base_url,
                    str(seed * 1000 + k),
                    *(["fold"] if fold else []),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
            started = time.monotonic()
            lines: list[str] = []
            reader = threading.Thread(target=lines.extend, args=(proc.stdout,), daemon=True)
            reader.start()
            # wait for the first ACK (import done, a turn ran), then kill at a random point after it
            deadline = time.monotonic() + 60
            while not any(x.startswith("ACK") for x in lines) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            if proc.poll() is not None:
                result.violations.append(f"driver died by itself: {proc.stderr.read()[-500:]}")
                break
            if summary_delay > 0 and slow.wait_for_one(started, 30):
                time.sleep(rng.uniform(0.0, summary_delay * 0.9))
                result.summary_hits += slow.in_flight(started)
            else:
                time.sleep(rng.uniform(0.0, 1.5))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            reader.join(timeout=5)
            result.kills += 1
            result.recoveries += sum(1 for x in lines if x.startswith("RECOVERY"))
            acked.extend(x.split(" ", 1)[1].strip() for x in lines if x.startswith("ACK "))
            check_session(session, acked, result)
            log(
                f"kill {k + 1}/{kills}: acked so far {len(acked)}, corrupt {len(result.corrupt_files)}, "
                f"lost {len(result.lost_turns)}, duplicated {len(result.duplicated_turns)}, "
                f"violations {len(result.violations)}"
                + (f", folds {result.folds}" if fold else "")
                + (f", kills in a summary call {result.summary_hits}" if summary_delay > 0 else "")
            )
    result.acked = len(acked)
    return result
