"""kill -9 fault injection: run turns against a slow-streaming loopback server, kill the
process at random points, and check the session after every kill.

Invariants checked after each kill (with ``ccm-tui status --json`` and the files):
at most one active effort; concluded ⇒ summary; every manifest effort has its log;
no broken line in any JSONL except a torn last one; every acknowledged turn is on disk.
With ``fold`` (a model without tools, chat about one topic after another: the app folds ambient
chat into efforts after turns) also: no ambient line is folded into two efforts (issue 32, B).

With a slow summary model (``summary_delay``, issue 42 item 9) each kill waits for a summary call of
its process (a conclusion, by ``/conclude`` or ``close_effort``; a fold's summary step) and lands at a
random moment inside it; a kill is a *hit* only when the server had received that request and not
answered it when the process died (:meth:`.slow_summary.SlowSummaries.kill_inside`). The turns then
cycle open, chat, conclude, and each check also asks: every acknowledged ``/conclude`` left its effort
concluded once (one ``effort_concluded`` event); the derived index rebuilds the same
(:mod:`.rebuild_check`); and after a last unkilled run, every interrupted conclusion was done again
and every interrupted fold's lines are folded.
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

from tests.helpers.campaigns.rebuild_check import rebuilt_differs
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
    hits_by_kind: dict[str, int] = field(default_factory=dict)  # /conclude, close_effort, fold: hits of each
    concluded: int = 0  # acknowledged /conclude actions
    duplicated_conclusions: list[str] = field(default_factory=list)  # an effort concluded twice
    interrupted: int = 0  # /conclude actions or folds a kill interrupted
    not_redone: list[str] = field(default_factory=list)  # interrupted, still not done after the last run
    rebuilt_differently: list[str] = field(default_factory=list)  # derived.sqlite rebuilt gives other answers


def run_status(session: Path) -> tuple[int, str, str]:
    """``ccm-tui status --json`` in-process (it imports neither litellm nor textual)."""
    from ccm_tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["status", "--session-dir", str(session), "--json"])
    return rc, out.getvalue(), err.getvalue()


def _check_folds(efforts: list[dict], result: CampaignResult) -> set[str]:
    """The folded efforts (their ids); an ambient line in two of them is *folded twice*."""
    spans = sorted(
        (tuple(e["source"]["lines"]), e["id"])
        for e in efforts
        if (e.get("source") or {}).get("folded_from") == "ambient"
    )
    result.folds = len(spans)
    folded = {effort_id for _, effort_id in spans}
    for (a, first), (b, second) in zip(spans, spans[1:]):
        twice = f"{first} {list(a)} and {second} {list(b)}"
        if b[0] <= a[1] and twice not in result.folded_twice:
            result.folded_twice.append(twice)
    return folded


def _check_conclusions(session: Path, rows: dict[str, dict], concluded: set[str], result: CampaignResult) -> None:
    """Every acknowledged ``/conclude`` left its effort concluded, and no effort was concluded twice
    (more ``effort_concluded`` events than its reopenings + 1)."""
    for effort_id in sorted(concluded):
        if rows.get(effort_id, {}).get("status") != "concluded":
            result.violations.append(f"{effort_id}: acknowledged /conclude, yet not concluded")
    conclusions: dict[str, int] = {}
    events = session / "events.jsonl"
    for line in events.read_bytes().split(b"\n") if events.exists() else []:
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and record.get("event") == "effort_concluded":
                conclusions[record.get("effort_id")] = conclusions.get(record.get("effort_id"), 0) + 1
    for effort_id, times in conclusions.items():
        reopened = rows.get(effort_id, {}).get("reopen_count") or 0
        if times > reopened + 1 and effort_id not in result.duplicated_conclusions:
            result.duplicated_conclusions.append(effort_id)


def check_session(
    session: Path, acked: list[str], result: CampaignResult, concluded: set[str] | None = None, rebuild: bool = False
) -> None:
    """``concluded``: efforts an acknowledged ``/conclude`` concluded; ``rebuild``: also compare the answers
    with a derived index rebuilt from the record."""
    if rebuild:
        differs = rebuilt_differs(session, ("reply", "summary", "Kyoto"))
        if differs and differs not in result.rebuilt_differently:
            result.rebuilt_differently.append(differs)
    rc, out, err = run_status(session)
    if rc != 0:
        result.violations.append(f"status failed: {err.strip()}")
        return
    status = json.loads(out)
    efforts = status["efforts"]
    folded = _check_folds(efforts, result)
    named = {e["id"] for e in efforts}
    if sum(1 for e in efforts if e["active"]) > 1:
        result.violations.append("more than one active effort")
    for e in efforts:
        if e["status"] == "concluded" and not e["summary"]:
            result.violations.append(f"{e['id']}: concluded without summary")
        if not (session / e["raw_file"]).exists():
            result.violations.append(f"{e['id']}: log file missing")
    _check_conclusions(session, {e["id"]: e for e in efforts}, concluded or set(), result)
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


def _driver(session: Path, base_url: str, seed: int, flags: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.campaigns.turn_driver", str(session), base_url, str(seed), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def _interrupted(lines: list[str], begun: str, done: str) -> list[str]:
    """What a run began (``begun`` lines) and did not report done (``done`` lines)."""
    finished = {x.split(" ", 1)[1].strip() for x in lines if x.startswith(done + " ")}
    started = [x.split(" ", 1)[1].strip() for x in lines if x.startswith(begun + " ")]
    return [x for x in dict.fromkeys(started) if x not in finished]


def _folded(session: Path, first: int, last: int) -> bool:
    """Whether every ambient line ``first``..``last`` is in a folded effort's span."""
    rc, out, _ = run_status(session)
    spans = [
        e["source"]["lines"]
        for e in (json.loads(out)["efforts"] if rc == 0 else [])
        if (e.get("source") or {}).get("folded_from") == "ambient"
    ]
    return all(any(a <= line <= b for a, b in spans) for line in range(first, last + 1))


def run_campaign(
    workdir: Path, kills: int, seed: int = 1, log=print, *, fold: bool = False, summary_delay: float = 0.0
) -> CampaignResult:
    """``summary_delay``: a slow summary model (each summary call waits that long); each kill then waits
    for a summary call of its process to be in flight (up to 30 s) and lands inside it, at a random
    moment of the wait (see the module's docstring for what is checked besides)."""
    rng = random.Random(seed)
    result = CampaignResult()
    session = workdir / "session"
    acked: list[str] = []
    concluded: set[str] = set()
    pending: list[str] = []  # /conclude actions a kill interrupted: the next run does them again
    folds_cut: list[str] = []  # "a-b": folds a kill interrupted
    aimed = summary_delay > 0
    flags = (["fold", "fold-request"] if fold else ["conclude"]) if aimed else (["fold"] if fold else [])
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT))
    home = workdir / "home"  # what the app learns of the model (no tools) stays in the campaign
    env.update(HOME=str(home), CCM_HOME=str(home / "ccm"), XDG_CONFIG_HOME=str(home / ".config"))
    with FakeLLMServer(chunk_chars=4, stream_delay=0.004) as server:
        slow = SlowSummaries(responder, summary_delay, log=workdir / "summary_calls.jsonl")
        server.responder = slow
        server.refuse_tools = fold  # a model without tools: the app folds by itself
        for k in range(kills):
            redo = [f"redo={','.join(pending)}"] if pending else []
            proc = _driver(session, server.base_url, seed * 1000 + k, flags + redo, env)
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
            # (aimed: at the first, second or third summary call begun after that ACK, so that runs get
            # further; one in four at any call of the run in flight, which may be an interrupted one done again)
            since, nth = (started, None) if rng.random() < 0.25 else (time.monotonic(), rng.randint(1, 3))
            call = slow.wait_for_one(since, 30, proc=proc, nth=nth) if aimed else None
            if call is not None:
                time.sleep(max(0.0, call.start + rng.uniform(0.0, summary_delay * 0.5) - time.monotonic()))
                hit = slow.kill_inside(proc, since)
                if hit == "conclusion":  # whose: the user's /conclude under way, else the model's close_effort
                    reader.join(timeout=5)
                    hit = "/conclude" if _interrupted(lines, "CONCLUDING", "CONCLUDED") else "close_effort"
                if hit:
                    result.summary_hits += 1
                    result.hits_by_kind[hit] = result.hits_by_kind.get(hit, 0) + 1
            else:
                time.sleep(rng.uniform(0.0, 1.5))
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
            reader.join(timeout=5)
            result.kills += 1
            result.recoveries += sum(1 for x in lines if x.startswith("RECOVERY"))
            acked.extend(x.split(" ", 1)[1].strip() for x in lines if x.startswith("ACK "))
            concluded.update(x.split(" ", 1)[1].strip() for x in lines if x.startswith("CONCLUDED "))
            result.violations += [f"/conclude {x}" for x in lines if x.startswith("FAILED ")]
            cut = _interrupted(lines, "CONCLUDING", "CONCLUDED")
            result.interrupted += len(set(cut) - set(pending))
            pending = [x for x in dict.fromkeys(pending + cut) if x not in concluded]
            folds_cut += _interrupted(lines, "FOLDING", "FOLDED")
            check_session(session, acked, result, concluded, rebuild=aimed)
            log(
                f"kill {k + 1}/{kills}: acked so far {len(acked)}, corrupt {len(result.corrupt_files)}, "
                f"lost {len(result.lost_turns)}, duplicated {len(result.duplicated_turns)}, "
                f"violations {len(result.violations)}"
                + (f", folds {result.folds}" if fold else "")
                + (f", kills in a summary call {result.summary_hits} {result.hits_by_kind}" if aimed else "")
            )
        if aimed:  # a last run, not killed: the interrupted conclusions are done again, and a fold step
            slow.delay = 0.0
            redo = [f"redo={','.join(pending)}"] if pending else []
            done = _driver(session, server.base_url, seed * 1000 + kills, flags + redo + ["finish"], env)
            out, err = done.communicate(timeout=120)
            if done.returncode != 0:
                result.violations.append(f"the last run failed: {err.strip()[-300:]}")
            lines = out.splitlines()
            acked.extend(x.split(" ", 1)[1].strip() for x in lines if x.startswith("ACK "))
            concluded.update(x.split(" ", 1)[1].strip() for x in lines if x.startswith("CONCLUDED "))
            result.interrupted += len(folds_cut)
            rc, status_out, _ = run_status(session)
            rows = {e["id"]: e for e in json.loads(status_out)["efforts"]} if rc == 0 else {}
            result.not_redone += [f"/conclude {x}" for x in pending if rows.get(x, {}).get("status") != "concluded"]
            for span in dict.fromkeys(folds_cut):
                first, last = (int(n) for n in span.split("-"))
                if not _folded(session, first, last):
                    result.not_redone.append(f"fold of ambient lines {span}")
            check_session(session, acked, result, concluded, rebuild=True)
    result.acked = len(acked)
    result.concluded = len(concluded)
    return result
