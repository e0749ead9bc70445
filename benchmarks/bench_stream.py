"""A streamed reply against a bare Textual app: ccm-tui and ``bare_stream_app.py`` (a ``Markdown``
fed by ``MarkdownStream`` from the same SSE) each in a detached tmux pane of 150x45, against the
scripted OpenAI-compatible server (``tests/helpers/openai_server.py`` run as a process) streaming a
Markdown reply (headings, lists, code, tables; ``_stream_reply.py``) at a steady rate (issue 38, item 1).

For each size (2.5, 10 and 40 KB by default) and run, the two apps alternately, each:

* **shown** — Enter → the reply's last line on screen, as a ratio to the stream's length (the chunks
  times the server's delay between them) and to the bare app's;
* **echo** — during the stream a key is typed every ``--key-every`` seconds (the next one once the
  previous one showed): key → the character in the input (median and worst);
* **CPU** — the app process's user+system time from Enter to the last line shown (``/proc/PID/stat``),
  and its main thread's (the event loop's: ccm-tui's other threads are the session's and litellm's).

``--profile DIR`` samples each app over that window with py-spy (``PY_SPY``: its path, e.g. installed in a
venv of its own; ``--gil``: only the thread holding the GIL, so the samples are CPU, not waits) into
collapsed stacks, one file per app, size and run.

Targets: shown ≤ 1.2× the stream and ≤ 1.1× the bare app; echo ≤ 1.5× the bare app's, none over 1 s;
CPU ≤ 1.5× the bare app's. The machine may be loaded: the ratios within one run are what count.

    python benchmarks/bench_stream.py [--sizes 2500,10000,40000] [--runs 2] [--rate 2000] [--chunk 10] [--profile DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._stream_reply import LAST_LINE, markdown_reply  # noqa: E402

SIZE = (150, 45)
TIMEOUT = 300.0
TICK = os.sysconf("SC_CLK_TCK")
MARK = "qzx"  # typed during the stream: never in the reply
WARM = "Warmed up, ready."  # ccm-tui's first reply (it loads litellm on the way): not measured


def tmux(socket: str, *args: str, check: bool = True) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=check).stdout


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """The process's user+system time (all threads), or one thread's (the main thread: ``thread=pid``)."""
    stat = Path(f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def python_pid(pid: int) -> int:
    """The Python process under the pane's (a shell or ``env`` may sit between)."""
    for _ in range(5):
        if "python" in Path(f"/proc/{pid}/comm").read_text() or "ccm-tui" in Path(f"/proc/{pid}/comm").read_text():
            return pid
        children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == pid]
        if not children:
            return pid
        pid = children[0]
    return pid


def _ppid(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Figures:
    shown: float
    cpu: float
    loop_cpu: float  # the main thread's (the event loop's): the rest is the session's and litellm's threads
    echoes: list[float] = field(default_factory=list)


class Pane:
    count = 0

    def __init__(self, command: str) -> None:
        Pane.count += 1
        self.socket = f"ccm-stream-{os.getpid()}-{Pane.count}"
        tmux(self.socket, "new-session", "-d", "-s", "b", "-x", str(SIZE[0]), "-y", str(SIZE[1]), command)
        self.pid = python_pid(int(tmux(self.socket, "display", "-p", "-t", "b", "#{pane_pid}").strip()))

    def screen(self) -> str:
        return tmux(self.socket, "capture-pane", "-p", "-t", "b", check=False)

    def wait(self, marker: str) -> None:
        start = time.perf_counter()
        while marker not in self.screen():
            if time.perf_counter() - start > TIMEOUT:
                raise RuntimeError(f"{marker!r} not seen after {TIMEOUT} s:\n{self.screen()}")
            time.sleep(0.05)

    def keys(self, text: str, *more: str) -> None:
        tmux(self.socket, "send-keys", "-t", "b", "-l", text)
        for key in more:
            tmux(self.socket, "send-keys", "-t", "b", key)

    def close(self) -> None:
        tmux(self.socket, "kill-server", check=False)


def measure(command: str, key_every: float, warm_up: bool, profile: Path | None = None) -> Figures:
    """Launch, wait until ready (``warm_up``: after a first short turn), send a message, then type a key every
    ``key_every`` s until the reply's last line shows (``profile``: py-spy samples the app's threads over
    that window into this file, as collapsed stacks)."""
    pane = Pane(command)
    try:
        pane.wait("of budget")
        if warm_up:  # a first short turn: the model client loaded, the first request made
            pane.keys("hello", "Enter")
            pane.wait(WARM)
        time.sleep(1.0)  # the start-up's own work settles
        cpu0, loop0 = cpu_seconds(pane.pid), cpu_seconds(pane.pid, pane.pid)
        spy = None
        if profile is not None:
            profile.parent.mkdir(parents=True, exist_ok=True)
            spy = subprocess.Popen([os.environ.get("PY_SPY", "py-spy"), "record", "--pid", str(pane.pid), "--rate", "250",
                                    "--format", "raw", "--threads", "--gil", "--output", str(profile)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        pane.keys("tune the pool", "Enter")
        start = time.perf_counter()
        typed, sent, echoes = "", None, []
        next_key = start + key_every
        while True:
            now = time.perf_counter()
            if now - start > TIMEOUT:
                raise RuntimeError(f"the reply was not shown after {TIMEOUT} s:\n{pane.screen()}")
            if sent is None and now >= next_key:
                piece = MARK if not typed else "abcdefghijklmnopqrstuvwxyz"[(len(typed) - len(MARK)) % 26]
                pane.keys(piece)
                typed += piece
                sent = time.perf_counter()
            screen = pane.screen()
            seen = time.perf_counter()
            if sent is not None and typed in screen:
                echoes.append(seen - sent)
                next_key = max(sent + key_every, seen)
                sent = None
            if LAST_LINE in screen:
                cpu, loop = cpu_seconds(pane.pid) - cpu0, cpu_seconds(pane.pid, pane.pid) - loop0
                if spy is not None:
                    spy.send_signal(signal.SIGINT)
                    spy.wait(timeout=30)
                return Figures(shown=seen - start, cpu=cpu, loop_cpu=loop, echoes=echoes)
            time.sleep(0.01)
    finally:
        pane.close()


def server(script: Path, delay: float, chunk: int, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.openai_server", "--port", "0", "--script", str(script),
         "--slow-stream", str(delay), "--chunk-chars", str(chunk)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2500,10000,40000")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--rate", type=float, default=2000.0, help="characters a second the server streams")
    parser.add_argument("--chunk", type=int, default=10, help="characters per streamed piece")
    parser.add_argument("--key-every", type=float, default=0.5)
    parser.add_argument("--only", choices=("ccm", "bare"), help="measure one app only")
    parser.add_argument(
        "--profile", type=Path, help="sample each app with py-spy (PY_SPY: its path) over the window measured, into DIR"
    )
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed")
    scratch = Path(tempfile.mkdtemp(prefix="ccm-stream-"))
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "OPENAI_API_KEY": "sk-bench-fake",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    }
    config = scratch / "config" / "ccm-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("reply_max_tokens = 60000\ntoken_budget = 100000\n")  # the 40 KB reply is never cut
    exports = " ".join(
        f"{k}={env[k]}" for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "OPENAI_API_KEY", "LITELLM_LOCAL_MODEL_COST_MAP",
                                  "PYTHONPATH")
    )  # fmt: skip
    program = Path(sys.executable).with_name("ccm-tui")
    delay = args.chunk / args.rate
    apps = ("bare", "ccm") if args.only is None else (args.only,)
    print(f"server: {args.rate:,.0f} chars/s in pieces of {args.chunk}; a key every {args.key_every} s; "
          f"{args.runs} run(s) per size, the apps alternately; medians")  # fmt: skip
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        reply = markdown_reply(size)
        stream = -(-len(reply) // args.chunk) * delay
        script = scratch / f"script-{size}.json"
        script.write_text(json.dumps({"replies": [], "fallback": {"type": "text", "content": reply}}))
        got: dict[str, list[Figures]] = {app: [] for app in apps}
        warm = scratch / f"warm-{size}.json"
        warm.write_text(json.dumps({"replies": [{"type": "text", "content": WARM}],
                                    "fallback": {"type": "text", "content": reply}}))  # fmt: skip
        for run in range(args.runs):
            for app in apps:
                proc, base = server(warm if app == "ccm" else script, delay, args.chunk, env)
                try:
                    if app == "bare":
                        command = (f"env -u COLUMNS -u LINES {exports} {sys.executable} "
                                   f"{ROOT / 'benchmarks' / 'bare_stream_app.py'} --api-base {base}")  # fmt: skip
                    else:
                        command = (f"env -u COLUMNS -u LINES {exports} {program} --session-dir "
                                   f"{scratch / f'session-{size}-{run}'} --model openai/fake-model --api-base {base}")  # fmt: skip
                    profile = args.profile / f"{app}-{size}-{run}.txt" if args.profile else None
                    got[app].append(measure(command, args.key_every, warm_up=app == "ccm", profile=profile))
                finally:
                    proc.terminate()
                    proc.wait(timeout=10)
        rows.append((size, len(reply), stream, got))
        report(rows[-1])
    return 0


def report(row: tuple[int, int, float, dict[str, list[Figures]]]) -> None:
    size, chars, stream, got = row
    med = statistics.median
    print(f"\n{chars:,} chars, streamed in {stream:.2f} s")
    for app, figures in got.items():
        echoes = [e for f in figures for e in f.echoes]
        print(
            f"  {app:5} shown {med(f.shown for f in figures):6.2f} s = {med(f.shown for f in figures) / stream:4.2f}x the stream"
            f" · echo median {med(echoes) if echoes else float('nan'):.3f} s, worst {max(echoes, default=float('nan')):.3f} s"
            f" ({len(echoes)} keys) · CPU {med(f.cpu for f in figures):6.2f} s"
            f" (event loop {med(f.loop_cpu for f in figures):.2f} s)"
        )
    if len(got) == 2:
        bare, ccm = got["bare"], got["ccm"]
        be = [e for f in bare for e in f.echoes] or [float("nan")]
        ce = [e for f in ccm for e in f.echoes] or [float("nan")]
        print(
            f"  ccm/bare: shown {med(f.shown for f in ccm) / med(f.shown for f in bare):.2f}x"
            f" · echo {med(ce) / med(be):.2f}x (worst {max(ce):.3f} s)"
            f" · CPU {med(f.cpu for f in ccm) / max(1e-9, med(f.cpu for f in bare)):.2f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
