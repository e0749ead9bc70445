"""The call budget of ``ccm-tui restore``: what a file of many tiny turns costs before anyone says yes,
and a Ctrl+C campaign.

1. Markdown chat exports of 1,000, 10,000 and 100,000 tiny turns (4 MB at 100,000), each restored by
   the real command (a subprocess, no terminal, no ``--yes``) against the in-process fake OpenAI
   server, which counts the requests: the calls made (1,000 turns fit the budget, 3 per call; the
   others are refused before any call: target 0), the calls and tokens the plan states, the exit
   code and the last line.
2. The same 2,000-turn file with ``--yes --max-calls 100``: the calls made against the plan and its
   ceiling, and the turns that kept their own TURN SUMMARY (turns share calls, 8 at most).
3. ``--interrupts N`` (default 6): the 100,000-turn file restored with ``--yes --max-calls 200000``
   (one call per turn, as before the budget; the fake server in its own process, answering after
   50 ms) and interrupted (SIGINT) at random moments; counts the runs that ended in exactly one
   line ("ccm-tui: interrupted", exit 130). ``--reference`` runs the same with the pipeline under a
   bare ``asyncio.run`` (the code before the fix) for comparison.

    python benchmarks/bench_call_budget.py [--interrupts 6] [--reference] [--seed 3] [--interrupts-only]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.openai_server import FakeLLMServer, call, text, tool_calls  # noqa: E402

MODEL = "openai/fake-model"
CLI = "import sys; from ccm_tui.cli import entry; sys.argv[0] = 'ccm-tui'; entry()"  # the console script
REFERENCE_CLI = "import asyncio; from ccm_tui.restore import importer; importer.run_to_the_end = asyncio.run; " + CLI


def tiny_turns(path: Path, count: int) -> Path:
    path.write_text("".join(f"**User:** q{n}\n\n**Assistant:** a{n}\n\n" for n in range(1, count + 1)))
    return path


def answer(body: dict[str, Any]):
    """Instant answers: a TURN SUMMARY for every turn a request carries, evidence, session summary."""
    if body.get("tools"):
        return tool_calls(call("complete", {"findings": "- nothing to check"}))
    if "SESSION SUMMARY" in body["messages"][0]["content"]:
        return text("SESSION SUMMARY\n\nSummary: many small questions.")
    numbers = re.findall(r"^CURRENT TURN (\d+):", body["messages"][-1]["content"], re.M)
    return text(
        "\n\n".join(
            f"TURN SUMMARY\n\nTurn number: {n}\nUser request summary: asked q{n}\nKey outcomes: answered"
            for n in numbers
        )
    )


def env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HOME": str(home),
        "OPENAI_API_KEY": "sk-test-fake",
        "CCM_RETRY_BASE_SECONDS": "0",
    }


def restore_argv(server: FakeLLMServer, transcript: Path, session: Path, *extra: str, cli: str = CLI) -> list[str]:
    return [
        sys.executable,
        "-c",
        cli,
        "restore",
        str(transcript),
        "--session-dir",
        str(session),
        "--model",
        MODEL,
        "--api-base",
        server.base_url,
        *extra,
    ]


def before_asking(server: FakeLLMServer, scratch: Path, counts: list[int]) -> list[dict[str, Any]]:
    rows = []
    for count in counts:
        transcript = tiny_turns(scratch / f"chat-{count}.md", count)
        server.clear()
        started = time.perf_counter()
        done = subprocess.run(
            restore_argv(server, transcript, scratch / f"s-{count}"),
            env=env(scratch),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        estimate = next((line for line in done.stderr.splitlines() if "estimate:" in line), "")
        rows.append(
            {
                "turns": count,
                "file_mb": round(transcript.stat().st_size / 1e6, 1),
                "calls_made": len(server.chat_requests()),
                "planned_calls": int(re.search(r"up to ([\d,]+) model", estimate).group(1).replace(",", "")),
                "estimated_tokens": int(re.search(r"~([\d,]+) tokens", estimate).group(1).replace(",", "")),
                "exit": done.returncode,
                "seconds": round(time.perf_counter() - started, 1),
                "last_line": done.stderr.strip().splitlines()[-1],
            }
        )
    return rows


def with_yes(server: FakeLLMServer, scratch: Path, count: int = 2_000) -> dict[str, Any]:
    transcript = tiny_turns(scratch / f"yes-{count}.md", count)
    server.clear()
    done = subprocess.run(
        restore_argv(server, transcript, scratch / "s-yes", "--yes", "--max-calls", "100", "--json", "--dump-turns"),
        env=env(scratch),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"restore --yes failed: {done.stderr.strip()[-500:]}")
    estimate = next(line for line in done.stderr.splitlines() if "estimate:" in line)
    data = json.loads(done.stdout)
    return {
        "turns": count,
        "planned_calls": int(re.search(r"up to ([\d,]+) model", estimate).group(1).replace(",", "")),
        "ceiling": int(re.search(r"([\d,]+) at most", estimate).group(1).replace(",", "")),
        "calls_made": len(server.chat_requests()),
        "turns_with_their_own_summary": len(data["turn_summaries"]),
    }


def external_server(scratch: Path) -> tuple[subprocess.Popen[str], str]:
    """The fake server as its own process, answering every request after 50 ms, as a provider does
    (in this process, sharing its interpreter, it hid the hole the campaign looks for)."""
    summary = "TURN SUMMARY\n\nTurn number: 1\nUser request summary: asked\nKey outcomes: answered"
    script = scratch / "script.json"
    script.write_text(
        json.dumps(
            {"replies": [], "fallback": {"type": "hang", "seconds": 0.05, "then": {"type": "text", "content": summary}}}
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.openai_server", "--script", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def interrupts(scratch: Path, runs: int, seed: int, cli: str) -> dict[str, Any]:
    transcript = scratch / "chat-100000.md"
    if not transcript.exists():
        tiny_turns(transcript, 100_000)
    rng = random.Random(seed)
    server, base_url = external_server(scratch)
    clean = 0
    examples: list[list[str]] = []
    try:
        for run in range(runs):
            lines, code = _interrupted_run(scratch, transcript, base_url, cli, run, rng.uniform(7.0, 15.0))
            if code == 130 and lines == ["ccm-tui: interrupted"]:
                clean += 1
            elif len(examples) < 2:
                examples.append(lines)
    finally:
        server.terminate()
        server.wait(30)
    return {"interrupts": runs, "ended_in_one_line": clean, "examples_of_more": examples}


def _interrupted_run(
    scratch: Path, transcript: Path, base_url: str, cli: str, run: int, after: float
) -> tuple[list[str], int]:
    """One restore interrupted ``after`` seconds from its start (parsing takes about 5): its stderr
    lines other than progress, and its exit code."""
    argv = [sys.executable, "-c", cli, "restore", str(transcript), "--session-dir", str(scratch / f"s-int-{run}")]
    argv += ["--model", MODEL, "--api-base", base_url, "--yes", "--max-calls", "200000"]
    with open(scratch / f"err-{run}.txt", "w+", encoding="utf-8") as errors:  # never a full pipe
        process = subprocess.Popen(
            argv,
            env=env(scratch),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        time.sleep(after)  # a random moment of the run, as a person's Ctrl+C
        process.send_signal(signal.SIGINT)
        process.wait(120)
        errors.seek(0)
        lines = [line for line in errors.read().splitlines() if not line.startswith("restore:")]
    return lines, process.returncode


def costs(server: FakeLLMServer, scratch: Path) -> None:
    print("1. no terminal, no --yes (1,000 turns fit the budget of 500 calls: 3 turns per call):")
    for row in before_asking(server, scratch, [1_000, 10_000, 100_000]):
        print("  ", json.dumps(row))
    print("2. --yes --max-calls 100 on 2,000 turns:")
    print("  ", json.dumps(with_yes(server, scratch)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interrupts", type=int, default=6)
    parser.add_argument("--reference", action="store_true", help="also interrupt the code before the fix")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--interrupts-only", action="store_true", help="skip parts 1 and 2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_dir, FakeLLMServer(responder=answer) as server:
        scratch = Path(scratch_dir)
        if not args.interrupts_only:
            costs(server, scratch)
        if args.interrupts:
            print(f"3. Ctrl+C at random moments of a 100,000-turn restore ({args.interrupts} runs):")
            print("   now:      ", json.dumps(interrupts(scratch, args.interrupts, args.seed, CLI)))
            if args.reference:
                reference = interrupts(scratch, args.interrupts, args.seed, REFERENCE_CLI)
                print("   reference:", json.dumps(reference))


if __name__ == "__main__":
    main()
