"""Wall-clock time of the command line: ``send`` against an instant model, ``status`` as history grows.

Every figure is a median of N runs of a fresh process, and is printed as a ratio to a
reference measured in the same run, alternated with it (so a busy machine slows both):

* ``ccm-tui send`` (one turn against the in-process fake OpenAI server, which answers at
  once) against ``python -c "import litellm"`` — the floor for any command that calls a
  model through litellm;
* ``ccm-tui status`` on a session of 10,000 concluded efforts against an empty session;
* ``ccm-tui search`` on the 10,000-effort session against the empty one.

    python benchmarks/bench_cli.py [--runs 7] [--efforts 10000] [--keep DIR]
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
from ccm_tui.config import Settings  # noqa: E402
from ccm_tui.core.opening import open_engine  # noqa: E402
from tests.fakes.openai_server import FakeLLMServer, text  # noqa: E402


def build_session(directory: Path, efforts: int, messages: int = 4) -> None:
    """``efforts`` concluded efforts of ``messages`` lines each (bench_turn's builder), opened once
    so that every session file (state, view, search index) exists as after real use."""
    build_effort_files(directory, efforts, messages)
    open_engine(directory, Settings(token_budget=16_000)).close()


def ccm_command() -> list[str]:
    script = Path(sys.executable).with_name("ccm-tui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ccm_tui.cli"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def alternate(a: list[str], b: list[str], runs: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """Run ``a`` and ``b`` in turn (a warm-up of each first, not counted)."""
    timed(a, env)
    timed(b, env)
    ta, tb = [], []
    for _ in range(runs):
        ta.append(timed(a, env))
        tb.append(timed(b, env))
    return ta, tb


def row(label: str, times: list[float], reference: list[float], ref_label: str, target: float) -> str:
    med, ref = statistics.median(times), statistics.median(reference)
    ratio = med / ref
    verdict = "ok" if ratio <= target else "over"
    return f"{label:<34} {med:7.2f} s   {ref_label:<30} {ref:7.2f} s   {ratio:5.2f}×  (target ≤ {target:g}×: {verdict})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--efforts", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="build the sessions here (reused when present)")
    args = parser.parse_args()

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
    empty, big, chat = root / "empty", root / f"s{args.efforts}", root / "chat"
    for directory, size in ((empty, 0), (big, args.efforts)):
        if not directory.exists():
            print(f"building {directory} ({size:,} efforts)…", file=sys.stderr)
            build_session(directory, size)
    ccm = ccm_command()
    server = FakeLLMServer(responder=lambda body: text("ok")).start()
    try:
        send = [*ccm, "send", "--session-dir", str(chat), "--model", "openai/bench", "--api-base", server.base_url]
        send += ["hello"]
        bare = [sys.executable, "-c", "import litellm"]
        print(f"measuring send vs import litellm ({args.runs} runs each)…", file=sys.stderr)
        t_send, t_import = alternate(send, bare, args.runs, env)
    finally:
        server.stop()
    print(f"measuring status and search, empty vs {args.efforts:,} efforts…", file=sys.stderr)
    status = [*ccm, "status", "--session-dir"]
    t_status_big, t_status_empty = alternate([*status, str(big)], [*status, str(empty)], args.runs, env)
    search = [*ccm, "search", "--session-dir"]
    t_search_big, t_search_empty = alternate(
        [*search, str(big), "kafka"], [*search, str(empty), "kafka"], args.runs, env
    )

    print(f"medians of {args.runs} runs, each alternated with its reference")
    print(row("send (instant model)", t_send, t_import, 'python -c "import litellm"', 1.2))
    print(row(f"status, {args.efforts:,} efforts", t_status_big, t_status_empty, "status, empty session", 2.0))
    print(row(f"search, {args.efforts:,} efforts", t_search_big, t_search_empty, "search, empty session", 2.0))
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
