"""The TUI on a big history: a session holding an imported 200 KB transcript and 40 turns of chat against
one of 3 turns, measured alternately in the same run (issue 30, item 3).

Prints, for each session, the median of ``--runs`` launches in a detached tmux pane of 150x45:

* **first paint** — launch → the sidebar's title on screen;
* **history shown** — launch → the newest reply of the history on screen;
* **key to echo** — a key sent to the pane → the character on screen (the median of ``--keys`` keys);

and the widgets alive in the chat pane (counted in-process with ``App.run_test``): after the start, and
after scrolling back to the first message. Targets: the big session's first paint and key-to-echo ≤ 1.5×
the small one's; the chat's widgets bounded by the screen, not by the history.

    python benchmarks/bench_chat_load.py [--runs 5] [--keys 15] [--transcript FILE]

The transcript defaults to the shared corpus's 200 KB aider history (``brejlator.aider.md``) when it is
beside the clone, else to a 200 KB aider history made from the repository's fixtures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccm_tui.config import Settings  # noqa: E402
from ccm_tui.core.engine.opening import open_engine  # noqa: E402
from ccm_tui.core.models.interface import Completion, InProcessChatModel  # noqa: E402

CORPUS_TRANSCRIPT = ROOT.parent / "shared" / "corpus" / "aider" / "brejlator.aider.md"
FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "aider.chat.history.md"
TIMEOUT = 120.0
SIZE = (150, 45)


def reply(n: int) -> str:
    """A reply as a real model writes one: paragraphs, a list, a code block (about 40 lines)."""
    code = "\n".join(f"    result_{i} = compute(data[{i}])  # step {i}" for i in range(14))
    return (
        f"Here is answer {n}, with the reasoning first.\n\n"
        + "The pool settings interact with the transaction mode, so the numbers below matter. " * 3
        + "\n\n- first, check `max_client_conn`\n- then the pool size\n- finally the timeouts\n\n"
        + f"```python\ndef handler_{n}(data):\n{code}\n    return result_0\n```\n\n"
        + f"That is the whole of answer {n}. Last line of reply {n}."
    )


class LongReplies(InProcessChatModel):
    model = "bench/long-replies"

    def __init__(self) -> None:
        self.n = 0

    async def stream_chat(self, messages, tools, on_delta=None):
        self.n += 1
        text = reply(self.n)
        if on_delta:
            on_delta(text)
        return Completion(content=text, finish_reason="stop")

    async def complete(self, messages, max_tokens=None, summary=True):
        return Completion(content="A summary.", finish_reason="stop")


async def chat_turns(directory: Path, turns: int) -> None:
    settings = Settings(model=LongReplies.model, recall="off")
    engine = open_engine(directory, settings, llm=LongReplies())
    try:
        for n in range(turns):
            outcome = await engine.run_turn(f"question number {n} about the pool settings")
            assert outcome.ok, outcome.reason
    finally:
        engine.close()


def transcript(scratch: Path, given: Path | None) -> Path:
    if given is not None:
        return given
    if CORPUS_TRANSCRIPT.is_file():
        return CORPUS_TRANSCRIPT
    text = FIXTURE.read_text(encoding="utf-8")
    made = scratch / "big.aider.chat.history.md"
    made.write_text(text * max(1, 200_000 // max(1, len(text))), encoding="utf-8")
    return made


def import_transcript(directory: Path, path: Path) -> None:
    """``ccm-tui restore``'s landing, with an offline summary (the summaries' model calls are not what
    is measured here)."""
    from ccm_tui.restore.landing import land
    from ccm_tui.restore.parse import parse_transcript

    parsed = parse_transcript(path)
    land(directory, parsed, path, "An imported aider session.", Settings())


def tmux(socket: str, *args: str, check: bool = True) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=check).stdout


class Pane:
    """ccm-tui in a fresh tmux server, polled until markers show."""

    count = 0

    def __init__(self, session: Path, env: dict[str, str]) -> None:
        Pane.count += 1
        self.socket = f"ccm-load-{os.getpid()}-{Pane.count}"
        program = Path(sys.executable).with_name("ccm-tui")
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        self.start = time.perf_counter()
        tmux(
            self.socket, "new-session", "-d", "-s", "b", "-x", str(SIZE[0]), "-y", str(SIZE[1]),
            f"env -u COLUMNS -u LINES {exports} {program} --session-dir {session} --model openai/gpt-4o-mini",
        )  # fmt: skip

    def screen(self) -> str:
        return tmux(self.socket, "capture-pane", "-p", "-t", "b", check=False)

    def wait(self, marker: str, since: float | None = None) -> float:
        since = self.start if since is None else since
        while True:
            screen = self.screen()
            if marker in screen:
                return time.perf_counter() - since
            if time.perf_counter() - since > TIMEOUT:
                raise RuntimeError(f"{marker!r} not seen after {TIMEOUT} s:\n{screen}")
            time.sleep(0.002)

    def key_to_echo(self, keys: int) -> list[float]:
        samples = []
        for i in range(keys):
            char = "abcdefghijklmnopqrstuvwxyz"[i % 26]
            typed = "echo" + "".join("abcdefghijklmnopqrstuvwxyz"[j % 26] for j in range(i + 1))
            sent = time.perf_counter()
            tmux(self.socket, "send-keys", "-t", "b", "-l", char if i else "echoa")
            samples.append(self.wait(typed, since=sent))
        return samples

    def close(self) -> None:
        tmux(self.socket, "kill-server", check=False)


def measure(session: Path, last_line: str, env: dict[str, str], keys: int) -> tuple[float, float, float]:
    pane = Pane(session, env)
    try:
        paint = pane.wait("EFFORTS")
        shown = pane.wait(last_line)
        pane.wait("of budget")
        echo = statistics.median(pane.key_to_echo(keys))
        return paint, shown, echo
    finally:
        pane.close()


async def widgets(session: Path) -> tuple[int, int, int]:
    """Widgets in the chat pane after the start and after scrolling back to the first message, and the
    messages shown then."""
    from ccm_tui.ui.app import CcmApp
    from ccm_tui.ui.widgets.chat_log import ChatLog
    from tests.helpers.tui import ready, wait_until

    app = CcmApp(Settings(model="openai/gpt-4o-mini"), session, watch=False, warm_up=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await pilot.pause()
        start = len(log.query("*"))
        for _ in range(200):  # scroll to the top until nothing older is left
            log.scroll_home(animate=False, immediate=True)
            log.want_older()
            await pilot.pause()
            await wait_until(pilot, lambda: not log.loading_older, what="the older page")
            if not log.more_before:
                break
        return start, len(log.query("*")), len(log.messages())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=15)
    parser.add_argument("--transcript", type=Path)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed")
    scratch = Path(tempfile.mkdtemp(prefix="ccm-load-"))
    env = {
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "HOME": str(scratch / "home"),
        "OPENAI_API_KEY": "sk-bench",
        "TERM": "xterm-256color",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"):
        Path(env[key]).mkdir(parents=True)
    os.environ.update({k: v for k, v in env.items() if k != "TERM"})
    small, big = scratch / "small", scratch / "big"
    asyncio.run(chat_turns(small, 3))
    asyncio.run(chat_turns(big, 40))
    source = transcript(scratch, args.transcript)
    import_transcript(big, source)
    print(f"small: 3 turns · big: 40 turns + {source.name} ({source.stat().st_size / 1000:.0f} KB) imported")

    names = {"small (3 turns)": (small, "Last line of reply 3."), "big": (big, "Last line of reply 40.")}
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
    for session, last in names.values():  # warm the file cache; not counted
        measure(session, last, env, 3)
    for _ in range(args.runs):
        for name, (session, last) in names.items():
            samples[name].append(measure(session, last, env, args.keys))
    medians = {name: [statistics.median(s[i] for s in runs) for i in range(3)] for name, runs in samples.items()}
    for name, (paint, shown, echo) in medians.items():
        print(
            f"{name:16} first paint {paint * 1000:6.0f} ms · history shown {shown * 1000:6.0f} ms · "
            f"key to echo {echo * 1000:5.1f} ms  (medians of {args.runs})"
        )
    (p0, s0, e0), (p1, s1, e1) = medians.values()
    print(
        f"big / small: first paint {p1 / p0:.2f}× · history shown {s1 / s0:.2f}× · key to echo {e1 / e0:.2f}× "
        "(targets: paint and echo ≤ 1.5×)"
    )
    for name, (session, _) in names.items():
        start, scrolled, messages = asyncio.run(widgets(session))
        print(f"{name:16} widgets in the chat: {start} after the start, {scrolled} scrolled back to the top "
              f"({messages} messages shown then)")  # fmt: skip
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
