"""Disk-full campaign: ``send``, ``restore`` and ``search`` on a small file system filled to
random levels, one session throughout; after each run the space is freed and the session checked.

Each run fills the disk leaving a few KB free, runs one command (a real ``ccm-tui`` process
against the fake OpenAI server), frees the space and checks:

* the command was *acknowledged* (exit 0) or *failed cleanly*: exit 1 with the one line
  ``ccm-tui: the disk is full…``; anything else — another message, a bare ``[Errno 28]``,
  a traceback — is a *bad message*;
* every acknowledged message is in the logs exactly once (else *lost* or *duplicated*);
* a failed send or restore is done again with the space back, as a user would: it must succeed
  and leave its message (or transcript) once — a failure that had in fact stored its exchange
  shows up here as *duplicated*; a send that says "do not send it again" (its tools had changed an
  effort) is not resent: the next start must log it, and ``send --retry-orphan`` must refuse it;
* no broken line in any JSONL file but a torn last one, every JSON file and the manifest parse
  (else *corrupt*); ``status`` and ``search`` answer;
* at the end, ``search`` finds every acknowledged message (the index caught up).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.helpers.openai_server import FakeLLMServer, call, text, tool_calls

ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from ccm_tui.cli import main; sys.exit(main(sys.argv[1:]))"
DISK_FULL = "ccm-tui: the disk is full"
LEVELS_KIB = (0, 1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 384, 512, 768, 1024)  # left free before the command
TIMEOUT = 180.0


class SmallDiskUnavailable(RuntimeError):
    """Neither a tmpfs nor a loop-mounted file system could be mounted (not root?)."""


@dataclass
class DiskFullReport:
    runs: int = 0
    acknowledged: int = 0
    failed_cleanly: int = 0
    kinds: Counter = field(default_factory=Counter)  # "send acknowledged", "restore failed", …
    outcomes: list[tuple[str, int, str]] = field(default_factory=list)  # (command, KiB free, "ok"/"full"/"bad")
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)
    bad_messages: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)  # status/search failing, a retry failing
    stored_though_failed: list[str] = field(default_factory=list)  # failed, yet the message was stored
    resent: list[str] = field(default_factory=list)  # messages sent again after their send failed
    logged_at_next_start: list[str] = field(default_factory=list)  # failed sends told not to be resent
    not_found: list[str] = field(default_factory=list)  # acknowledged messages search did not find
    disk: str = ""  # "tmpfs 4m" or "ext4 loop file 4m"

    def threshold_lines(self) -> list[str]:
        """Per command: the most free space at which it failed, the least at which it went through."""
        lines = []
        for kind in ("send", "restore", "search"):
            failed = [kib for k, kib, outcome in self.outcomes if k == kind and outcome != "ok"]
            passed = [kib for k, kib, outcome in self.outcomes if k == kind and outcome == "ok"]
            if failed or passed:
                most = f"{max(failed)} KiB" if failed else "-"
                least = f"{min(passed)} KiB" if passed else "-"
                lines.append(f"{kind:<8} failed with at most {most} free, went through with as little as {least}")
        return lines


# --------------------------------------------------------------------------- the small disk
def _run_quiet(*argv: str) -> bool:
    return subprocess.run(list(argv), capture_output=True).returncode == 0


@contextlib.contextmanager
def small_disk(directory: Path, size: str = "4m") -> Iterator[tuple[Path, str]]:
    """A small file system mounted at ``directory``: a tmpfs, else an ext4 loop file."""
    directory.mkdir(parents=True, exist_ok=True)
    image = directory.with_name(directory.name + ".img")
    if _run_quiet("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)):
        kind = f"tmpfs {size}"
    elif (
        shutil.which("mkfs.ext4")
        and _run_quiet("truncate", "-s", size.upper(), str(image))
        and _run_quiet("mkfs.ext4", "-q", "-F", str(image))
        and _run_quiet("mount", "-o", "loop", str(image), str(directory))
    ):
        kind = f"ext4 loop file {size}"
    else:
        raise SmallDiskUnavailable("cannot mount a small tmpfs or loop file system here (needs root)")
    try:
        yield directory, kind
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True, check=False)
        image.unlink(missing_ok=True)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` leaving about ``leave`` bytes free; remove the returned file to free it."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 20, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


# --------------------------------------------------------------------------- the model and the inputs
def responder(body: dict):
    """Opens an effort on '… OPEN', concludes on '… CLOSE', answers long on '… LONG'."""
    if not body.get("tools"):
        # an effort's summary, and a restore's TURN SUMMARY and SESSION SUMMARY at once
        return text("User request: sort the cellar.\nAgent response: listed the racks.\nKey outcomes: racks sorted.")
    last = body["messages"][-1]
    if last["role"] == "tool":
        return text("Done with that. " + "shelf label " * 30)
    content = str(last.get("content", ""))
    tag = content.split()[0] if content else "note"
    if content.endswith("OPEN"):
        return tool_calls(call("open_effort", {"name": f"pantry {tag}"}))
    if content.endswith("CLOSE"):
        return tool_calls(call("close_effort", {}))
    if content.endswith("LONG"):
        return text(f"About {tag}: " + " ".join(f"item{i} goes on shelf {i % 7}" for i in range(300)))
    return text(f"Noted {tag}: the jars go on the second shelf.")


def transcript(tag: str) -> str:
    """A small Claude Code transcript whose requests carry ``tag`` (each one imports as new)."""
    lines = []
    for i in range(5):
        ts = f"2026-01-17T03:4{i}:22.000Z"
        lines.append(
            {
                "type": "user",
                "uuid": f"{tag}-u{i}",
                "parentUuid": f"{tag}-a{i - 1}" if i else None,
                "timestamp": ts,
                "sessionId": tag,
                "message": {"role": "user", "content": f"{tag} question {i} about the cellar racks"},
            }
        )
        lines.append(
            {
                "type": "assistant",
                "uuid": f"{tag}-a{i}",
                "parentUuid": f"{tag}-u{i}",
                "timestamp": ts,
                "sessionId": tag,
                "message": {"role": "assistant", "model": "m", "content": [{"type": "text", "text": "rack " * 80}]},
            }
        )
    return "".join(json.dumps(line) + "\n" for line in lines)


# --------------------------------------------------------------------------- the session's files
def logged_user_messages(session: Path) -> list[str]:
    """Every user message in ``raw.jsonl`` and the effort logs (a torn or broken line skipped)."""
    found = []
    for path in [session / "raw.jsonl", *sorted((session / "efforts").glob("*.jsonl"))]:
        if not path.is_file():
            continue
        for line in path.read_bytes().split(b"\n"):
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("role") == "user":
                    found.append(str(record.get("content")))
    return found


def corrupt_files(session: Path) -> list[str]:
    """A broken JSONL line (but a torn last one), a JSON file or a manifest that does not parse."""
    bad = []
    for path in sorted(session.rglob("*")):
        if not path.is_file() or path.name.startswith(".") and path.suffix not in (".jsonl", ".json"):
            continue
        name = str(path.relative_to(session))
        if path.suffix == ".jsonl":
            for i, line in enumerate(path.read_bytes().split(b"\n")[:-1]):
                try:
                    json.loads(line)
                except ValueError:
                    bad.append(f"{name}:{i + 1}")
        elif path.suffix == ".json":
            try:
                json.loads(path.read_bytes())
            except ValueError:
                bad.append(name)
        elif path.name == "manifest.yaml":
            try:
                yaml.safe_load(path.read_text(encoding="utf-8"))
            except (yaml.YAMLError, UnicodeDecodeError):
                bad.append(name)
    return bad


def in_process(*argv: str) -> tuple[int, str, str]:
    """A read-only command (``status``, ``search``) through the CLI's entry point, in this process."""
    from ccm_tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- the campaign
class DiskFullCampaign:
    def __init__(self, workdir: Path, disk: Path, server: FakeLLMServer, report: DiskFullReport) -> None:
        self.disk = disk
        self.session = disk / "session"
        self.server = server
        self.report = report
        self.transcripts = workdir / "transcripts"  # off the small disk: the user's files
        self.transcripts.mkdir(parents=True, exist_ok=True)
        self.env = dict(
            os.environ,
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            PYTHONPATH=str(ROOT),
            OPENAI_API_KEY="sk-test-fake",
            CCM_RETRY_BASE_SECONDS="0",
            XDG_CONFIG_HOME=str(workdir / "config"),
            XDG_DATA_HOME=str(workdir / "data"),
        )
        self.expected: list[str] = []  # acknowledged messages
        self.imported: list[str] = []  # tags of the transcripts imported

    def ccm(self, *argv: str) -> tuple[int, str]:
        done = subprocess.run(
            [sys.executable, "-c", CLI, *argv],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=ROOT,
            timeout=TIMEOUT,
        )
        return done.returncode, done.stderr

    def send(self, message: str) -> tuple[int, str]:
        model = ("--model", "openai/fake-model", "--api-base", self.server.base_url)
        return self.ccm("send", "--session-dir", str(self.session), *model, message)

    def restore(self, tag: str) -> tuple[int, str]:
        path = self.transcripts / f"{tag}.jsonl"
        path.write_text(transcript(tag))
        model = ("--model", "openai/fake-model", "--api-base", self.server.base_url)
        return self.ccm("restore", "--session-dir", str(self.session), *model, "--skip-evidence-search", str(path))

    def search(self, query: str) -> tuple[int, str]:
        return self.ccm("search", "--session-dir", str(self.session), query)

    def judge(self, what: str, rc: int, err: str) -> bool:
        """Counts the answer of a command run on the full disk; True when it was acknowledged."""
        lines = [line for line in err.strip().splitlines() if not line.startswith("restore: ")]  # progress
        if (
            "Traceback" in err
            or "[Errno" in err
            or (rc != 0 and (len(lines) != 1 or not lines[0].startswith(DISK_FULL)))
        ):
            self.report.bad_messages.append(f"{what}: exit {rc}: {err.strip()[-400:]}")
        kind, leave = what.split()[0], int(what.split()[-3])
        outcome = "ok" if rc == 0 else "full" if lines and lines[-1].startswith(DISK_FULL) else "bad"
        self.report.outcomes.append((kind, leave, outcome))
        if rc == 0:
            self.report.acknowledged += 1
            self.report.kinds[f"{what.split()[0]} acknowledged"] += 1
            return True
        if lines and lines[-1].startswith(DISK_FULL):
            self.report.failed_cleanly += 1
            self.report.kinds[f"{what.split()[0]} failed cleanly"] += 1
        return False

    def retry(self, what: str, again) -> None:
        """Done again with the space back: it must go through (an import may say it has it)."""
        rc, err = again()
        if rc != 0 and "already imported" not in err:
            self.report.violations.append(f"{what} again with space: exit {rc}: {err.strip()[-300:]}")

    def one_run(self, k: int, rng: random.Random) -> None:
        kind = rng.choices(["send", "restore", "search"], weights=[7, 2, 2])[0]
        leave = rng.choice(LEVELS_KIB)
        tag = f"zq{k:03d}x"
        message = f"{tag} note {k} about the pantry" + rng.choice(["", "", " LONG", " LONG", " OPEN", " CLOSE"])
        what = f"{kind} {tag} with {leave} KiB free"
        filler = fill(self.disk, leave * 1024)
        try:
            if kind == "send":
                rc, err = self.send(message)
            elif kind == "restore":
                rc, err = self.restore(tag)
            else:
                rc, err = self.search(self.expected[-1] if self.expected else "pantry")
        finally:
            filler.unlink()
        self.report.runs += 1
        acked = self.judge(what, rc, err)
        if kind != "search" and not acked:
            if self.stored(message if kind == "send" else f"{tag} question 0 about the cellar racks"):
                self.report.stored_though_failed.append(what)  # a manual retry would duplicate it
            if kind == "send" and "do not send it again" in err:
                self.report.logged_at_next_start.append(message)
                model = ("--model", "openai/fake-model", "--api-base", self.server.base_url)
                rc, err = self.ccm("send", "--session-dir", str(self.session), *model, "--retry-orphan")
                if rc == 0:  # the next start logged it; retrying would run its tools again
                    self.report.violations.append(f"{what}: --retry-orphan sent it again")
            else:
                self.retry(what, lambda: self.send(message) if kind == "send" else self.restore(tag))
                self.report.resent += [message] if kind == "send" else []
        if kind != "search":
            (self.expected if kind == "send" else self.imported).append(message if kind == "send" else tag)
        self.check(what)

    def stored(self, message: str) -> bool:
        return message in logged_user_messages(self.session)

    def check(self, what: str) -> None:
        rc, _, err = in_process("status", "--session-dir", str(self.session), "--json")
        if rc != 0:
            self.report.violations.append(f"status after {what}: {err.strip()[-300:]}")
        rc, _, err = in_process("search", "--session-dir", str(self.session), "--json", "pantry")
        if rc != 0:
            self.report.violations.append(f"search after {what}: {err.strip()[-300:]}")
        self.count_messages()
        for name in corrupt_files(self.session):
            if name not in self.report.corrupt:
                self.report.corrupt.append(name)

    def count_messages(self) -> None:
        messages = logged_user_messages(self.session)
        logged = Counter(messages)
        logged.update(m.split()[0] for m in messages if m.endswith(" question 0 about the cellar racks"))
        for item in self.expected + self.imported:
            n = logged[item]
            if n == 0 and item not in self.report.lost:
                self.report.lost.append(item)
            if n > 1 and item not in self.report.duplicated:
                self.report.duplicated.append(item)

    def final_search(self) -> None:
        for item in self.expected + self.imported:
            word = item.split()[0]
            rc, out, err = in_process("search", "--session-dir", str(self.session), "--json", word)
            if rc != 0 or word not in out:
                self.report.not_found.append(word)


def run_disk_full_campaign(workdir: Path, runs: int, seed: int = 1, *, size: str = "4m", log=print) -> DiskFullReport:
    """``runs`` commands on a ``size`` file system filled to random levels (raises
    :class:`SmallDiskUnavailable` when none can be mounted)."""
    rng = random.Random(seed)
    report = DiskFullReport()
    with small_disk(workdir / "disk", size) as (disk, kind), FakeLLMServer(chunk_chars=64) as server:
        report.disk = kind
        server.responder = responder
        campaign = DiskFullCampaign(workdir, disk, server, report)
        rc, err = campaign.send("zqbasex first note about the pantry")  # the session exists, space is free
        if rc != 0:
            report.violations.append(f"first send failed: {err.strip()[-300:]}")
            return report
        campaign.expected.append("zqbasex first note about the pantry")
        for k in range(runs):
            campaign.one_run(k, rng)
            log(
                f"disk-full run {k + 1}/{runs}: acknowledged {report.acknowledged}, failed cleanly "
                f"{report.failed_cleanly}, lost {len(report.lost)}, duplicated {len(report.duplicated)}, "
                f"corrupt {len(report.corrupt)}, bad messages {len(report.bad_messages)}"
            )
        campaign.final_search()
    return report


if __name__ == "__main__":  # a quick look: python -m tests.helpers.campaigns.disk_full 5
    with tempfile.TemporaryDirectory() as tmp:
        print(run_disk_full_campaign(Path(tmp), int(sys.argv[1]) if len(sys.argv) > 1 else 5))
