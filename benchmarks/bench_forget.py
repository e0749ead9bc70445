"""What ``ccm-tui forget --text`` costs on a big session, against a ``send`` on the same session.

A string is planted in one effort's log (a line appended, then indexed by a search, untimed) before
each forget; ``forget --text STRING --yes`` is then timed against ``send`` on the same session (the
fake OpenAI server answers at once), alternated, medians of N runs of a fresh process each. Target:
a forget of a string in one effort costs at most 10× a send (it reads the logs the index names, not
every log). Sessions are built by ``bench_cli``'s builder (10 messages per effort).

    python benchmarks/bench_forget.py [--runs 3] [--sizes 10000,100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_cli import build_effort_files, ccm_command, timed  # noqa: E402
from tests.helpers.openai_server import FakeLLMServer, text  # noqa: E402


def plant(directory: Path, run: int, env: dict[str, str]) -> str:
    """A unique string appended to one effort's log, and indexed (untimed)."""
    secret = f"sk-planted-{run:04d}-Zq{run * 7919:06d}"
    efforts = sorted((directory / "efforts").iterdir())
    log = efforts[len(efforts) // 2]
    with log.open("a") as fh:
        record = {"role": "user", "content": f"my key is {secret} keep it", "ts": "2026-01-01T00:00:00Z"}
        fh.write(json.dumps(record) + "\n")
    timed([*ccm_command(), "search", "--session-dir", str(directory), secret], env)
    return secret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="10000,100000", help="efforts per session, comma-separated")
    parser.add_argument("--keep", type=Path, help="build the sessions here (reused when present)")
    args = parser.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "sk-bench-fake", "CCM_MODEL": ""}
    root = args.keep or Path(tempfile.mkdtemp(prefix="ccm-bench-forget-"))
    env["CCM_HOME"] = str(root / "home")
    ccm = ccm_command()
    server = FakeLLMServer(responder=lambda body: text("ok")).start()
    lines = [f"medians of {args.runs} runs, alternated"]
    try:
        for size in [int(n) for n in args.sizes.split(",")]:
            directory = root / f"s{size}"
            if not directory.exists():
                print(f"building {directory} ({size:,} efforts)…", file=sys.stderr)
                build_effort_files(directory, size, 10)
                timed([*ccm, "search", "--session-dir", str(directory), "kafka"], env)
            send = [*ccm, "send", "--session-dir", str(directory), "--model", "openai/bench"]
            send += ["--api-base", server.base_url, "hello"]
            timed(send, env)  # (warm-up)
            sends, forgets = [], []
            for run in range(args.runs):
                print(f"{size:,} efforts: run {run + 1}/{args.runs}…", file=sys.stderr)
                sends.append(timed(send, env)[0])
                secret = plant(directory, run, env)
                forgets.append(
                    timed([*ccm, "forget", "--session-dir", str(directory), "--text", secret, "--yes"], env)[0]
                )
            s, f = statistics.median(sends), statistics.median(forgets)
            verdict = "ok" if f / s <= 10 else "over"
            lines.append(
                f"forget --text, {size:,} efforts  {f:7.2f} s   send {s:6.2f} s   {f / s:5.1f}×  (≤ 10×: {verdict})"
            )
    finally:
        server.stop()
    print("\n".join(lines))
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
