"""kill -9 campaign against ``ccm-tui watch``: during the backfill and during appends.

A root of agent session files (real transcripts of the fixtures, and a Claude Code session that
grows a turn between some kills) is captured by ``watch`` processes killed at random moments
(0–1.1 × an unkilled run); a last run ends unkilled. Then every file's captured effort must hold
exactly the turns ``restore --parse-only`` finds, in order: a request missing is *lost*, one
logged twice *duplicated*; a line of a capture session's files that does not parse (but a torn
last line, which the next open sets aside) is *corrupt*.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
CLI = "import sys; from ccm_tui.cli import main; sys.exit(main(sys.argv[1:]))"
FILES = [
    "claude-code-session.jsonl",
    "claude-code-thinking-task.jsonl",
    "codex-rollout.jsonl",
    "codex-gildore.jsonl",
    "aider.chat.history.md",
    "cline-api-conversation-history.json",
    "bob-task-history.md",
]
GROWING = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.jsonl"


@dataclass
class WatchCampaign:
    kills: int = 0
    finished_first: int = 0
    appended_turns: int = 0
    files: int = 0
    turns: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)
    reference_seconds: float = 0.0

    @property
    def violations(self) -> list[str]:
        return self.lost + self.duplicated + self.corrupt


def _record(uuid: str, parent: str | None, kind: str, content: object) -> dict:
    return {
        "parentUuid": parent, "uuid": uuid, "type": kind, "sessionId": "grow", "cwd": "/home/me/grow",
        "isSidechain": False, "message": {"role": kind, "content": content, "id": f"m-{uuid}"},
    }  # fmt: skip


def append_turn(path: Path, n: int) -> None:
    parent = f"a{n - 1}" if n > 1 else None
    records = [
        _record(f"u{n}", parent, "user", f"growing request {n} about the walrus{n} module"),
        _record(f"a{n}", f"u{n}", "assistant", [{"type": "text", "text": f"answer {n}"}]),
    ]
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in records))


def run_watch_campaign(tmp: Path, kills: int, seed: int, log: Callable[[str], None] = print) -> WatchCampaign:
    rng = random.Random(seed)
    root = tmp / "agents"
    root.mkdir()
    for name in FILES:
        shutil.copy(FIXTURES / name, root / name)
    growing = root / "claude" / GROWING
    growing.parent.mkdir()
    turns = 1
    append_turn(growing, turns)
    env = dict(os.environ, CCM_HOME=str(tmp / "data"), HOME=str(tmp / "home"), PYTHONPATH=str(ROOT),
               LITELLM_LOCAL_MODEL_COST_MAP="True")  # fmt: skip
    command = [sys.executable, "-c", CLI, "watch", "--once", "--no-home", "--quiet", "--root", str(root)]

    reference = tmp / "reference"  # one unkilled run into a data directory of its own
    started = time.monotonic()
    subprocess.run(command, env={**env, "CCM_HOME": str(reference)}, capture_output=True, timeout=600, check=True)
    report = WatchCampaign(reference_seconds=time.monotonic() - started)
    for index in range(kills):
        if rng.random() < 0.5:  # an agent writes between runs: the next one captures while it grows
            turns += 1
            append_turn(growing, turns)
            report.appended_turns += 1
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        moment = rng.uniform(0, 1.1 * report.reference_seconds)
        try:
            process.wait(timeout=moment)
            report.finished_first += 1
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        report.kills += 1
        if (index + 1) % 10 == 0:
            log(f"watch kill {index + 1}/{kills}")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        report.corrupt.append(f"the last run failed: {done.stderr.strip()[-300:]}")
    _check(tmp / "data" / "sessions", [*(root / n for n in FILES), growing], report)
    return report


def _check(sessions: Path, files: list[Path], report: WatchCampaign) -> None:
    from ccm_tui.core.storage.durable import read_jsonl
    from ccm_tui.restore.parse import parse_transcript
    from ccm_tui.restore.redaction import redact_text

    logged: dict[str, list[str]] = {}
    for log in sessions.glob("capture-*/efforts/*.jsonl"):
        read = read_jsonl(log)
        bad = [n for n in read.bad_lines if not (read.torn_tail and n == read.lines)]
        if bad:
            report.corrupt.append(f"{log.name}: unreadable line(s) {bad[:5]}")
        logged[log.stem] = [r["content"] for r in read.records if r.get("role") == "user" and not r.get("note")]
    for events in sessions.glob("capture-*/events.jsonl"):
        read = read_jsonl(events)
        bad = [n for n in read.bad_lines if not (read.torn_tail and n == read.lines)]
        if bad:
            report.corrupt.append(f"{events.parent.name}/events.jsonl: unreadable line(s) {bad[:5]}")
    pool = Counter(tuple(requests) for requests in logged.values())
    for path in files:
        expected = [redact_text(t.user) for t in parse_transcript(path).turns]
        report.files += 1
        report.turns += len(expected)
        if pool[tuple(expected)] > 0:
            pool[tuple(expected)] -= 1
            continue
        near = [r for r in logged.values() if r and expected and r[0] == expected[0]]
        if not near:
            report.lost.append(f"{path.name}: no effort holds its {len(expected)} turn(s)")
            continue
        got = near[0]
        missing = sum((Counter(expected) - Counter(got)).values())
        twice = sum((Counter(got) - Counter(expected)).values())
        if missing:
            report.lost.append(f"{path.name}: {missing} turn(s) missing")
        if twice:
            report.duplicated.append(f"{path.name}: {twice} turn(s) logged twice")
        if not missing and not twice:
            report.duplicated.append(f"{path.name}: its turns are out of order")
    extra = sum(pool.values())
    if extra:
        report.duplicated.append(f"{extra} effort(s) captured twice or from no file")
