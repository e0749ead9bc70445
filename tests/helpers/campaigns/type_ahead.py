"""Type-ahead-after-crash campaign: the real TUI in tmux, typed into at once after a ``send`` was
killed mid-reply (issue 25, item 2).

Each run, on a fresh session: ``ccm-tui send`` streams a long reply from a slow fake server and is
killed with SIGKILL once the reply is on its way (its message is left unanswered); ``ccm-tui`` is
started in tmux (150x45) on that session and, 0–2 s after the launch or its first frame (or, with
``after_terminal_taken``, after it has taken the terminal and before it has drawn anything), a
sentence holding r, e and d (the old recovery dialog's hotkeys) is typed — at once or one key at a
time — then Enter. The run waits (on conditions, never on a fixed sleep) for the typed message's
reply in the logs, quits with Ctrl+Q and counts:

* *delivered intact* — the typed text is one user message in the logs, exactly as typed, and the
  model got it once;
* *swallowed* — no new message at all (what was typed may still sit in the input: *left in the
  input* counts those among the swallowed);
* *mangled* — another message arrived instead (part of it, or with keys lost or added);
* *crashes* — the app ended before Ctrl+Q, or the pane shows a traceback (``ScreenStackError`` …);
* *unwanted resends* — the old, unanswered message was sent to the model again without Ctrl+Y.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.openai_server import FakeLLMServer, text

ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from ccm_tui.cli import main; sys.exit(main(sys.argv[1:]))"
SENTENCES = (
    "see the new plan please, read every detail",
    "red or green, decide and tell me",
    "please review the draft and edit the order",
    "remember the deadline for the garden shed",
    "read it, edit it, then send the reader a note",
)
CRASH_WORDS = ("Traceback", "ScreenStackError", "Error:", "Exception")
WAIT = 90.0  # generous: two cores shared by several people


class TmuxUnavailable(RuntimeError):
    """tmux is not installed."""


@dataclass
class TypeAheadReport:
    runs: int = 0
    typed: int = 0
    delivered_intact: int = 0
    swallowed: list[str] = field(default_factory=list)  # nothing sent, and the input is not holding it
    left_in_input: list[str] = field(default_factory=list)  # not sent: the text stayed in the input
    typed_early: int = 0  # typing began while the terminal was still in line mode (the app had not taken it)
    intact_early: int = 0  # of those, delivered intact
    typed_before_frame: int = 0  # typing began before the app's first frame (its chat input not ready yet)
    intact_before_frame: int = 0  # of those, delivered intact
    mangled: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    unwanted_resends: int = 0
    orphans_left: int = 0  # runs whose kill left an unanswered message (want: runs)
    violations: list[str] = field(default_factory=list)  # the campaign's own trouble (a send not killed mid-reply …)


def ccm_program() -> list[str]:
    beside = Path(sys.executable).with_name("ccm-tui")
    return [str(beside)] if beside.exists() else [sys.executable, "-c", CLI]


class Tmux:
    """One tmux server (its own socket) whose panes stay after their program ends."""

    def __init__(self, name: str) -> None:
        if shutil.which("tmux") is None:
            raise TmuxUnavailable("tmux is not installed")
        self.socket = name
        self("new-session", "-d", "-s", "keep", "-x", "80", "-y", "24", "sleep 100000")
        self("set-option", "-g", "remain-on-exit", "on")

    def __call__(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30)
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {args[0]}: {done.stderr.strip()}")
        return done.stdout

    def screen(self, target: str) -> str:
        return self("capture-pane", "-p", "-J", "-S", "-200", "-t", target, check=False)

    def line_mode(self, target: str) -> bool:
        """The pane's terminal is still in line (canonical) mode: the app has not switched it to raw."""
        tty = self("display-message", "-p", "-t", target, "#{pane_tty}", check=False).strip()
        done = subprocess.run(["stty", "-a", "-F", tty], capture_output=True, text=True, check=False)
        return done.returncode == 0 and " icanon" in f" {done.stdout}"

    def dead(self, target: str) -> bool:
        return self("display-message", "-p", "-t", target, "#{pane_dead}", check=False).strip() != "0"

    def close(self) -> None:
        self("kill-server", check=False)


def wait_for(condition, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def user_messages(session: Path) -> list[str]:
    """User messages in ``raw.jsonl`` and the effort logs, in file order."""
    found = []
    for path in [session / "raw.jsonl", *sorted((session / "efforts").glob("*.jsonl"))]:
        if path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("role") == "user":
                    found.append(str(record.get("content")))
    return found


def replied(session: Path, message: str) -> bool:
    """``message`` is logged with an assistant line after it (its turn ended)."""
    path = session / "raw.jsonl"
    if not path.is_file():
        return False
    seen = False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("role") == "user":
            seen = record.get("content") == message
        elif seen and record.get("role") == "assistant":
            return True
    return False


def left_unanswered(session: Path) -> str | None:
    """The last turn's message when that turn never ended (no ``turn_done``, ``turn_failed`` …)."""
    path = session / "events.jsonl"
    message = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == "turn_start":
            message = record.get("user")
        elif record.get("event") in ("turn_done", "turn_failed", "turn_cancelled", "message_logged"):
            message = None
    return message


def last_user(body: dict) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1].get("content")) if users else ""


class TypeAheadCampaign:
    def __init__(self, workdir: Path, slow: FakeLLMServer, fast: FakeLLMServer, tmux: Tmux, report) -> None:
        self.after_frame: bool | None = None  # type 0–2 s after the app's first frame (True), the launch
        # (False), or either at random (None)
        self.after_terminal_taken = False  # instead: the delay counted from the app taking the terminal
        # (out of line mode), before it has drawn anything — the moment its keys once went nowhere
        self.delay: float | None = None  # how long after that (None: at random, 0–2 s)
        self.slowly: bool | None = None  # one key at a time (None: at random)
        self.workdir = workdir
        self.slow = slow
        self.fast = fast
        self.tmux = tmux
        self.report = report
        self.env = dict(
            os.environ,
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            PYTHONPATH=str(ROOT),
            OPENAI_API_KEY="sk-test-fake",
            XDG_CONFIG_HOME=str(workdir / "config"),
            XDG_DATA_HOME=str(workdir / "data"),
        )

    def crash_a_send(self, session: Path, orphan: str, rng: random.Random) -> bool:
        """``send`` killed with SIGKILL once its reply streams; True when it died mid-reply."""
        model = ["--model", "openai/fake-model", "--api-base", self.slow.base_url]
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, "send", "--session-dir", str(session), *model, orphan],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
            cwd=ROOT,
        )
        out = bytearray()

        def read() -> None:
            while piece := proc.stdout.read1(64):
                out.extend(piece)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        streaming = wait_for(lambda: len(out) >= 24 or proc.poll() is not None, WAIT)
        time.sleep(rng.uniform(0.0, 0.5))  # the kill's moment within the reply (fault injection, not a wait)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        reader.join(timeout=5)
        return streaming and proc.returncode == -signal.SIGKILL

    def launch(self, target: str, session: Path) -> None:
        keep = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "OPENAI_API_KEY", "LITELLM_LOCAL_MODEL_COST_MAP", "PYTHONPATH")
        exports = " ".join(f"{k}={shlex.quote(self.env[k])}" for k in keep)
        model = f"--model openai/fake-model --api-base {self.fast.base_url}"
        program = " ".join(shlex.quote(part) for part in ccm_program())
        command = f"env -u COLUMNS -u LINES {exports} {program} --session-dir {shlex.quote(str(session))} {model}"
        self.tmux("new-session", "-d", "-s", target, "-x", "150", "-y", "45", command)

    def type(self, target: str, sentence: str, slowly: bool, rng: random.Random) -> None:
        if slowly:
            for char in sentence:
                self.tmux("send-keys", "-t", target, "-l", char)
                time.sleep(rng.uniform(0.01, 0.2))  # a person typing (fault injection, not a wait)
        else:
            self.tmux("send-keys", "-t", target, "-l", sentence)
        self.tmux("send-keys", "-t", target, "Enter")

    def one_run(self, k: int, rng: random.Random) -> str:
        session = self.workdir / f"session-{k}"
        orphan = f"orphan {k}: what was the old plan for the garden"
        sentence = f"{rng.choice(SENTENCES)} {k}"
        delay, slowly, after_frame = rng.uniform(0.0, 2.0), rng.random() < 0.4, rng.random() < 0.5
        delay = delay if self.delay is None else self.delay
        slowly = slowly if self.slowly is None else self.slowly
        after_frame = after_frame if self.after_frame is None else self.after_frame
        if not self.crash_a_send(session, orphan, rng):
            self.report.violations.append(f"run {k}: the send was not killed mid-reply")
        self.report.orphans_left += int(left_unanswered(session) == orphan)
        target = f"run{k}"
        before = len(self.fast.chat_requests())
        self.launch(target, session)
        if self.after_terminal_taken:
            wait_for(lambda: not self.tmux.line_mode(target) or self.tmux.dead(target), WAIT, step=0.002)
            since = "the terminal was taken"
        elif after_frame:  # else counted from the launch
            wait_for(lambda: app_drawn(self.tmux.screen(target)) or self.tmux.dead(target), WAIT)
            since = "its first frame"
        else:
            since = "launch"
        time.sleep(delay)  # how soon the user types (fault injection, not a wait)
        early = self.tmux.line_mode(target)  # the app has not taken the terminal yet
        before_frame = not app_drawn(self.tmux.screen(target))
        moment = ", early" if early else ", before its first frame" if before_frame else ""
        what = f"run {k} (typed {'slowly ' if slowly else ''}{delay:.1f} s after {since}{moment})"
        self.type(target, sentence, slowly, rng)
        self.report.runs += 1
        self.report.typed += 1
        self.report.typed_early += int(early)
        self.report.typed_before_frame += int(before_frame)
        stuck = Stable(
            lambda: input_text(self.tmux.screen(target)) == sentence and len(self.fast.chat_requests()) == before
        )
        wait_for(
            lambda: (
                replied(session, sentence)
                or self.something_else(session, orphan, sentence)
                or self.tmux.dead(target)
                or stuck()
            ),
            WAIT,
        )
        screen = self.tmux.screen(target)
        died = self.tmux.dead(target)
        if not died:
            self.tmux("send-keys", "-t", target, "C-q")
            wait_for(lambda: self.tmux.dead(target), 30)
            if not self.tmux.dead(target):  # it asks before dropping an unsent message: say yes
                self.tmux("send-keys", "-t", target, "y")
                wait_for(lambda: self.tmux.dead(target), 30)
        self.judge(what, session, (orphan, sentence), before, died, screen, (early, before_frame))
        self.tmux("kill-session", "-t", target, check=False)
        return what

    @staticmethod
    def something_else(session: Path, orphan: str, sentence: str) -> bool:
        """A user message other than the typed one and the orphan was logged and answered."""
        others = [m for m in user_messages(session) if m not in (orphan, sentence)]
        return any(replied(session, m) for m in others)

    def judge(self, what: str, session: Path, texts: tuple[str, str], before: int, died: bool, screen: str, when):
        report, (orphan, sentence), (early, before_frame) = self.report, texts, when
        if died or any(word in screen for word in CRASH_WORDS):
            report.crashes.append(f"{what}: {'ended by itself; ' if died else ''}{screen.strip()[-600:]}")
        sent = [last_user(body) for body in self.fast.chat_requests()[before:]]
        report.unwanted_resends += sent.count(orphan)
        logged = [m for m in user_messages(session) if m != orphan]
        if logged.count(sentence) == 1 and sent.count(sentence) == 1 and len(logged) == 1:
            report.delivered_intact += 1
            report.intact_early += int(early)
            report.intact_before_frame += int(before_frame)
        elif logged or [s for s in sent if s != orphan]:
            report.mangled.append(f"{what}: typed {sentence!r}, logged {logged!r}, sent {sent!r}")
        elif input_text(screen) == sentence:
            report.left_in_input.append(what)
        else:
            report.swallowed.append(f"{what}: typed {sentence!r}; the input holds {input_text(screen)!r}")


class Stable:
    """True once ``condition`` has held on every call for ``seconds`` (the input kept the text, unsent)."""

    def __init__(self, condition, seconds: float = 8.0) -> None:
        self.condition = condition
        self.seconds = seconds
        self.since: float | None = None

    def __call__(self) -> bool:
        if not self.condition():
            self.since = None
            return False
        self.since = self.since if self.since is not None else time.monotonic()
        return time.monotonic() - self.since >= self.seconds


def app_drawn(screen: str) -> bool:
    """The app has drawn its first screen (so it holds the terminal in raw mode)."""
    return "◆ ccm-tui" in screen


def input_text(screen: str) -> str:
    """What the input box shows (its lines joined by spaces; the placeholder counts as empty)."""
    inner = [
        line.split("▎")[0].strip().lstrip("▊").strip() for line in screen.splitlines() if line.lstrip().startswith("▊")
    ]
    value = " ".join(part for part in inner if part and not set(part) <= {"▔", "▁"})
    return "" if value.startswith("Message the model") else value


def responder(body: dict):
    message = last_user(body)
    if message.startswith("orphan"):
        return text("Let me think about the old plan at length. " + "slowly streaming words " * 200)
    return text(f"Answer to: {message[:60]}")


def run_type_ahead_campaign(
    workdir: Path,
    runs: int,
    seed: int = 1,
    *,
    after_frame: bool | None = None,
    after_terminal_taken: bool = False,
    delay: float | None = None,
    slowly: bool | None = None,
    log=print,
) -> TypeAheadReport:
    """``runs`` crashes, each followed by a TUI typed into at once (raises :class:`TmuxUnavailable`)."""
    rng = random.Random(seed)
    report = TypeAheadReport()
    tmux = Tmux(f"ccm-typeahead-{os.getpid()}")
    try:
        with FakeLLMServer(chunk_chars=4, stream_delay=0.03) as slow, FakeLLMServer(chunk_chars=16) as fast:
            slow.responder = fast.responder = responder
            campaign = TypeAheadCampaign(workdir, slow, fast, tmux, report)
            campaign.after_frame, campaign.delay, campaign.slowly = after_frame, delay, slowly
            campaign.after_terminal_taken = after_terminal_taken
            for k in range(runs):
                what = campaign.one_run(k, rng)
                log(
                    f"type-ahead {what}: intact {report.delivered_intact}, left in the input "
                    f"{len(report.left_in_input)}, swallowed {len(report.swallowed)}, "
                    f"mangled {len(report.mangled)}, crashes {len(report.crashes)}, "
                    f"unwanted resends {report.unwanted_resends}"
                )
    finally:
        tmux.close()
    return report


if __name__ == "__main__":  # a quick look: python -m tests.helpers.campaigns.type_ahead 3
    with tempfile.TemporaryDirectory() as tmp:
        print(run_type_ahead_campaign(Path(tmp), int(sys.argv[1]) if len(sys.argv) > 1 else 3))
