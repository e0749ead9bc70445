"""kill -9 during ``ccm-tui forget``: the session must open after every kill, running the same forget
again must complete it, and no line that did not hold the text may change.

:func:`build_session` writes a session without a model (efforts, a summary, ambient chat, the prompt
history, a journal that the manifest lags behind, the search index built); :func:`check_after` is
the verdict on one killed copy; :func:`run_forget_campaign` kills real ``ccm-tui forget`` processes
at random moments (``benchmarks/kill9.py --target forget``); ``tests/faults/test_kill9_forget.py``
also stops one in-process at each of its file writes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccm_tui.cli import main
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.manifest.yaml_file import write_manifest

ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from ccm_tui.cli import main; sys.exit(main(sys.argv[1:]))"
SECRET = 'hunter2-"Pässword"\\9931'
WORD = b"9931"  # the text's last plain run: in no file afterwards, whatever the escaping
TS = "2026-01-01T00:00:00.000Z"


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def build_session(directory: Path, efforts: int = 30) -> None:
    """A session holding :data:`SECRET` in two effort logs, a summary, ambient chat, the prompt
    history, a turn_start and a journaled entry the manifest does not have yet; indexed."""
    (directory / "efforts").mkdir(parents=True)
    entries = []
    for i in range(efforts):
        eid = f"e-{i:03d}"
        lines = []
        for j in range(6):
            content = f"effort {i} line {j}: about cumin and the {('north', 'south')[j % 2]} road"
            if (i, j) in ((7, 1), (7, 4), (12, 2)):
                content += f" — the password is {SECRET} remember"
            lines.append(_line({"role": ("user", "assistant")[j % 2], "content": content, "ts": TS}))
        (directory / "efforts" / f"{eid}.jsonl").write_text("".join(lines))
        summary = f"Effort {i} settled the cumin question. It used {SECRET} once." if i == 7 else f"Effort {i} done."
        entries.append(Effort(id=eid, status=CONCLUDED, summary=summary, name=f"effort {i}", messages=6, created=TS))
    ambient = [f"ambient {k} about saffron" + (f" and {SECRET}" if k in (3, 8) else "") for k in range(10)]
    (directory / "raw.jsonl").write_text(
        "".join(_line({"role": ("user", "assistant")[k % 2], "content": c, "ts": TS}) for k, c in enumerate(ambient))
    )
    (directory / "prompt_history.jsonl").write_text(_line({"text": f"typed {SECRET}", "ts": TS}))
    events = [
        {"event": "session_start", "turn": 0, "ts": TS, "pid": 1},
        {"event": "turn_start", "turn": 0, "ts": TS, "user": f"the password is {SECRET}", "next_turn": 1},
        {"event": "turn_done", "turn": 1, "ts": TS, "logged_to": "ambient"},
        {"event": "session_end", "turn": 1, "ts": TS, "pid": 1},
    ]
    (directory / "events.jsonl").write_text("".join(_line(e) for e in events))
    mark = (directory / "events.jsonl").stat().st_size
    write_manifest(directory / "manifest.yaml", [e.to_dict() for e in entries], mark=mark)
    late = entries[3].to_dict() | {"summary": f"Effort 3 changed after the flush: {SECRET} noted."}
    with (directory / "events.jsonl").open("a") as fh:
        fh.write(_line({"event": "efforts_saved", "turn": 1, "ts": TS, "entries": [late]}))
    assert cli("search", "--session-dir", str(directory), "--json", "cumin")[0] == 0


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def holds(data: bytes) -> bool:
    variants = {
        SECRET.encode(),
        json.dumps(SECRET, ensure_ascii=False)[1:-1].encode(),
        json.dumps(SECRET)[1:-1].encode(),
    }
    return WORD in data or any(v in data for v in variants)


def _lines(directory: Path) -> dict[str, list[bytes]]:
    found = {}
    for path in sorted(directory.rglob("*.jsonl")):
        found[str(path.relative_to(directory))] = path.read_bytes().splitlines()
    return found


@dataclass
class ForgetCampaign:
    kills: int = 0
    finished_first: int = 0  # runs that ended before their kill moment
    unopenable: list[str] = field(default_factory=list)
    half_done: list[str] = field(default_factory=list)  # the text still somewhere after the re-run
    unrelated_lost: list[str] = field(default_factory=list)  # a line without the text that changed
    corrupt: list[str] = field(default_factory=list)  # a JSONL line that does not parse
    violations: list[str] = field(default_factory=list)
    reference_seconds: float = 0.0


def check_after(base: Path, killed: Path, report: ForgetCampaign, label: str) -> None:
    """The verdict on one killed copy: it opens; the same forget again completes; nothing else moved."""
    _check_opens(killed, report, label)
    rc, _, err = cli("forget", "--session-dir", str(killed), "--text", SECRET, "--yes")
    if rc != 0:
        report.half_done.append(f"{label}: the forget run again failed: {err.strip()}")
        return
    cli("search", "--session-dir", str(killed), "--json", "cumin")  # (the index after a reader used it)
    for path in sorted(p for p in killed.rglob("*") if p.is_file()):
        if holds(path.read_bytes()):
            report.half_done.append(f"{label}: {path.relative_to(killed)} still holds the text")
    _check_unrelated(base, killed, report, label)


def _check_opens(killed: Path, report: ForgetCampaign, label: str) -> None:
    for name, lines in _lines(killed).items():
        for number, line in enumerate(lines, 1):
            try:
                json.loads(line)
            except ValueError:
                report.corrupt.append(f"{label}: {name}:{number}")
    for argv in (("status", "--json"), ("search", "--json", "cumin")):
        rc, _, err = cli(argv[0], "--session-dir", str(killed), *argv[1:])
        if rc != 0:
            report.unopenable.append(f"{label}: {argv[0]}: {err.strip()}")


def _same_line(name: str, old: bytes, new: bytes) -> bool:
    return old == new or (name == "events.jsonl" and json.loads(old) == json.loads(new))


def _check_unrelated(base: Path, killed: Path, report: ForgetCampaign, label: str) -> None:
    after = _lines(killed)
    for name, lines in _lines(base).items():
        now = after.get(name)
        if now is None or len(now) < len(lines):
            report.unrelated_lost.append(f"{label}: {name} lost lines")
            continue
        for number, (old, new) in enumerate(zip(lines, now), 1):
            if not holds(old) and not _same_line(name, old, new):
                report.unrelated_lost.append(f"{label}: {name}:{number} changed")
    rc, out, _ = cli("status", "--session-dir", str(killed), "--json")
    efforts = json.loads(out)["efforts"] if rc == 0 else []
    expected = len(list((base / "efforts").glob("*.jsonl")))
    if len(efforts) != expected:
        report.unrelated_lost.append(f"{label}: {len(efforts)} efforts after, not {expected}")
    late = next((e for e in efforts if e["id"] == "e-003"), None)
    if late is None or "changed after the flush" not in str(late.get("summary")):
        report.unrelated_lost.append(f"{label}: the journaled change of e-003 was lost")


def _env() -> dict[str, str]:
    return dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(ROOT))


def _forget_process(directory: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", CLI, "forget", "--session-dir", str(directory), "--text", SECRET, "--yes"]
    return subprocess.Popen(argv, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_forget_campaign(
    tmp: Path, kills: int, seed: int, *, efforts: int = 30, log: Callable[[str], None] = print
) -> ForgetCampaign:
    """``kills`` real forget processes killed at random moments over 0–1.1 × an unkilled run."""
    rng = random.Random(seed)
    base = tmp / "base"
    build_session(base, efforts)
    report = ForgetCampaign()
    reference = tmp / "reference"
    shutil.copytree(base, reference)
    start = time.monotonic()
    if _forget_process(reference).wait() != 0:
        report.violations.append("the unkilled forget failed")
        return report
    report.reference_seconds = time.monotonic() - start
    for k in range(kills):
        copy = tmp / f"kill-{k}"
        shutil.copytree(base, copy)
        proc = _forget_process(copy)
        moment = rng.uniform(0, 1.1 * report.reference_seconds)
        try:
            proc.wait(timeout=moment)
            report.finished_first += 1
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        report.kills += 1
        check_after(base, copy, report, f"kill {k} at {moment:.2f} s")
        shutil.rmtree(copy, ignore_errors=True)
        if (k + 1) % 10 == 0:
            log(f"forget: {k + 1}/{kills} kills")
    return report
