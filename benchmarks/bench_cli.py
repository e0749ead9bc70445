"""Wall-clock time and peak memory of the command line as history grows.

Every figure is a median of N runs of a fresh process, printed as a ratio to a reference
measured in the same run, alternated with it (so a busy machine slows both):

* ``ccm-tui send`` (one turn against the in-process fake OpenAI server, which answers at
  once) on an empty session against ``python -c "import litellm"`` — the floor for any
  command that calls a model through litellm;
* for each size (default 10,000 and 100,000 concluded efforts of 10 messages): ``send``,
  ``status`` and ``search`` on that session against the same command on an empty session
  (targets 1.25×, 2× and 1.5×), and each process's peak resident memory (target 2×);
* the first command after a session's files were written by another tool (the catalog and
  the search index are built then), once.

    python benchmarks/bench_cli.py [--runs 7] [--sizes 10000,100000] [--messages 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
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

from benchmarks.bench_turn import build_session as build_effort_files  # noqa: E402
from tests.helpers.openai_server import FakeLLMServer, text  # noqa: E402


def ccm_command() -> list[str]:
    script = Path(sys.executable).with_name("ccm-tui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ccm_tui.cli"]


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Elapsed seconds and peak resident memory (KiB) of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.decode(errors='replace').strip()}")
    return elapsed, usage.ru_maxrss


class Runs:
    """Times and peak memory of the runs of one command."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.rss: list[int] = []

    def add(self, measured: tuple[float, int]) -> None:
        self.times.append(measured[0])
        self.rss.append(measured[1])


def alternate(a: list[str], b: list[str], runs: int, env: dict[str, str]) -> tuple[Runs, Runs]:
    """Run ``a`` and ``b`` in turn (a warm-up of each first, not counted)."""
    timed(a, env)
    timed(b, env)
    ra, rb = Runs(), Runs()
    for _ in range(runs):
        ra.add(timed(a, env))
        rb.add(timed(b, env))
    return ra, rb


def row(label: str, runs: Runs, reference: Runs, ref_label: str, target: float) -> str:
    med, ref = statistics.median(runs.times), statistics.median(reference.times)
    ratio = med / ref
    verdict = "ok" if ratio <= target else "over"
    return f"{label:<30} {med:7.2f} s   {ref_label:<28} {ref:7.2f} s   {ratio:5.2f}×  (≤ {target:g}×: {verdict})"


def memory_row(label: str, runs: Runs, reference: Runs, target: float = 2.0) -> str:
    peak, ref = max(runs.rss) / 1024, max(reference.rss) / 1024
    verdict = "ok" if peak / ref <= target else "over"
    return f"{label:<30} {peak:7.0f} MB  {'empty session':<28} {ref:7.0f} MB  {peak / ref:5.2f}×  (≤ {target:g}×: {verdict})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", default="10000,100000", help="efforts per session, comma-separated")
    parser.add_argument("--messages", type=int, default=10, help="messages in each effort's log")
    parser.add_argument("--keep", type=Path, help="build the sessions here (reused when present)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]

    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "sk-bench-fake",
        "CCM_HOME": "",
        "CCM_MODEL": "",
        "CCM_TOKEN_BUDGET": "",
    }
    root = args.keep or Path(tempfile.mkdtemp(prefix="ccm-bench-cli-"))
    env["CCM_HOME"] = str(root / "home")
    ccm = ccm_command()
    empty = root / "empty"
    first: dict[int, float] = {}
    for size in [0, *sizes]:
        directory = root / f"s{size}" if size else empty
        if not directory.exists():
            print(f"building {directory} ({size:,} efforts)…", file=sys.stderr)
            build_effort_files(directory, size, args.messages)
            first[size] = timed([*ccm, "search", "--session-dir", str(directory), "kafka"], env)[0]
    server = FakeLLMServer(responder=lambda body: text("ok")).start()
    lines = [f"medians of {args.runs} runs, each alternated with its reference"]
    try:

        def send(directory: Path) -> list[str]:
            return [*ccm, "send", "--session-dir", str(directory), "--model", "openai/bench"] + [
                "--api-base",
                server.base_url,
                "hello",
            ]

        print(f"measuring send vs import litellm ({args.runs} runs each)…", file=sys.stderr)
        bare = [sys.executable, "-c", "import litellm"]
        t_send, t_import = alternate(send(empty), bare, args.runs, env)
        lines.append(row("send, empty session", t_send, t_import, 'python -c "import litellm"', 1.2))
        for size in sizes:
            big = root / f"s{size}"
            print(f"measuring send, status and search: empty vs {size:,} efforts…", file=sys.stderr)
            s_big, s_empty = alternate(send(big), send(empty), args.runs, env)
            status = [*ccm, "status", "--session-dir"]
            st_big, st_empty = alternate([*status, str(big)], [*status, str(empty)], args.runs, env)
            search = [*ccm, "search", "--session-dir"]
            se_big, se_empty = alternate([*search, str(big), "kafka"], [*search, str(empty), "kafka"], args.runs, env)
            lines.append(row(f"send, {size:,} efforts", s_big, s_empty, "send, empty session", 1.25))
            lines.append(row(f"status, {size:,} efforts", st_big, st_empty, "status, empty session", 2.0))
            lines.append(row(f"search, {size:,} efforts", se_big, se_empty, "search, empty session", 1.5))
            lines.append(memory_row(f"peak memory of send, {size:,}", s_big, s_empty))
            lines.append(memory_row(f"peak memory of search, {size:,}", se_big, se_empty))
    finally:
        server.stop()
    for size, seconds in first.items():
        if size:
            lines.append(
                f"first command on a session written by another tool, {size:,} efforts: {seconds:.1f} s (once)"
            )
    print("\n".join(lines))
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
