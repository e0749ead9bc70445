"""Bulk import at scale: parse throughput over thousands of sessions, and an import's own cost as the
session grows.

* ``ccm-tui restore DIR --parse-only`` over a directory of N distinct sessions (default 5,000, made
  from the real Codex rollout fixture with a unique word each): sessions per second.
* ``ccm-tui restore DIR --skip-evidence-search`` of K sessions (default 40) into an empty session and
  into one of M concluded efforts (default 100,000, 10 messages each), against the in-process fake
  OpenAI server that answers at once: the time per imported session on each, and their ratio (the
  import's own overhead, without model time, should stay flat as the session grows: target ≤ 1.25×).

    python benchmarks/bench_import.py [--sessions 5000] [--imports 40] [--efforts 100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_cli import ccm_command  # noqa: E402
from benchmarks.bench_turn import build_session  # noqa: E402
from tests.helpers.openai_server import FakeLLMServer, text  # noqa: E402

SOURCE = ROOT / "tests" / "fixtures" / "transcripts" / "codex-rollout.jsonl"


def make_transcripts(directory: Path, count: int) -> None:
    """``count`` distinct copies of a real Codex rollout (one word changed, so none is a re-import)."""
    directory.mkdir(parents=True, exist_ok=True)
    original = SOURCE.read_text(encoding="utf-8")
    marker = "cooldown"
    if marker not in original:
        raise SystemExit(f"{SOURCE.name} no longer holds {marker!r}: pick another word")
    for i in range(count):
        (directory / f"rollout-{i:05d}.jsonl").write_text(original.replace(marker, f"cooldown{i}", 1), encoding="utf-8")


def run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} … failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--imports", type=int, default=40)
    parser.add_argument("--efforts", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build the files here (reused when present)")
    args = parser.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "sk-bench-fake"}
    root = args.keep or Path(tempfile.mkdtemp(prefix="ccm-bench-import-"))
    env["CCM_HOME"] = str(root / "home")
    ccm = ccm_command()

    many = root / f"transcripts-{args.sessions}"
    if not many.exists():
        print(f"writing {args.sessions:,} transcripts…", file=sys.stderr)
        make_transcripts(many, args.sessions)
    one = run([*ccm, "restore", str(many / "rollout-00000.jsonl"), "--parse-only"], env)
    every = run([*ccm, "restore", str(many), "--parse-only"], env)
    print(
        f"restore --parse-only over {args.sessions:,} sessions: {every:.1f} s, {args.sessions / every:,.0f} sessions/s"
    )
    print(f"  (one session: {one:.2f} s, the process's start included)")

    batch = root / f"transcripts-import-{args.imports}"
    if not batch.exists():
        make_transcripts(batch, args.imports)
    big = root / f"s{args.efforts}"
    if not big.exists():
        print(f"building a session of {args.efforts:,} efforts…", file=sys.stderr)
        build_session(big, args.efforts, 10)
        run([*ccm, "status", "--session-dir", str(big)], env)
    server = FakeLLMServer(responder=lambda body: text("A summary of the imported session.")).start()
    try:
        times = {}
        for label, directory in (("empty", root / "empty-import"), (f"{args.efforts:,} efforts", big)):
            argv = [*ccm, "restore", str(batch), "--session-dir", str(directory), "--model", "openai/bench"]
            argv += ["--api-base", server.base_url, "--skip-evidence-search", "--force"]
            times[label] = run(argv, env) / args.imports
    finally:
        server.stop()
    empty, grown = times.values()
    print(
        f"bulk import of {args.imports} sessions, per session: {grown * 1000:.0f} ms into {args.efforts:,} efforts, "
        f"{empty * 1000:.0f} ms into an empty session: {grown / empty:.2f}× (target ≤ 1.25×)"
    )
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
