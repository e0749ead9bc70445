"""Capture (``ccm-tui watch``) as numbers, each against a reference measured in the same run.

1. **Real transcripts** — every file of the shared corpus (``$CCM_CORPUS_DIR`` or
   ``/work/shared/corpus``) and of ``tests/fixtures/transcripts``: turns captured per file against
   ``restore --parse-only``'s (want every file equal), model calls (want 0: litellm is never even
   imported), and the backfill's time against parsing the same files (want ≤ 1.5×).
2. **Scale** — ``--files`` session files (default 200 of ~``--file-kb`` 100 KB; ``--files 2000
   --file-kb 500`` is the ~1 GB of the issue) built from the real transcripts' turns, half Claude Code
   sessions and half aider histories: ``watch --once`` in a child process (its peak memory, its
   throughput), then ``search --all-sessions`` against a search of one session holding the same
   efforts (want ≤ 1.5×), then ``send`` in the user's own session of that data directory, with
   ``watch`` following the files, against ``send`` without captures (want ≤ 1.1×; ``--send-runs``).
3. **Append to searchable** — ``watch`` following a Claude Code file; ``--appends`` turns appended
   one at a time, each timed until ``search --all-sessions`` finds it (p50/p95, and one search's own
   time; want p95 ≤ 2 s beyond the search).
4. **Idle** — the same watcher with nothing changing for ``--idle`` seconds: its CPU time over the
   wall time (want ≤ 1% of one core).

Usage::

    python benchmarks/bench_capture.py [--files 200] [--file-kb 100] [--appends 20] [--idle 10]
        [--send-runs 5] [--parts real,scale,follow] [--together]

The ~1 GB run: ``--files 2000 --file-kb 500 --parts scale --send-runs 3 --together`` (about an hour
on two shared cores; ~5 GB of disk under the temporary directory, deleted at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
from ccm_tui.restore.capture import CaptureOptions, Capturer  # noqa: E402
from ccm_tui.restore.parse import parse_transcript  # noqa: E402
from ccm_tui.restore.stores import candidate_files  # noqa: E402
from ccm_tui.restore.turns import TranscriptError  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
CLI = "import sys; from ccm_tui.cli import main; sys.exit(main(sys.argv[1:]))"


def corpus_dir() -> Path:
    return Path(os.environ.get("CCM_CORPUS_DIR") or "/work/shared/corpus")


def real_files() -> list[Path]:
    files = candidate_files(FIXTURES).files
    if corpus_dir().is_dir():
        files += candidate_files(corpus_dir()).files
    return files


def real_transcripts(tmp: Path, *, measure: bool = True) -> list[tuple[str, str]]:
    """1: capture against parse-only. Returns the turns (request, answer) met, for building files."""
    files = real_files()
    started = time.perf_counter()
    expected: dict[Path, int] = {}
    pool: list[tuple[str, str]] = []
    for path in files:
        try:
            parsed = parse_transcript(path)
        except TranscriptError:
            continue
        expected[path] = len(parsed.turns)
        pool += [(t.user, "\n\n".join(t.agent_responses)) for t in parsed.turns]
    parse_seconds = time.perf_counter() - started
    if not measure:
        return pool

    import ccm_tui.core.engine.opening  # noqa: F401  (the modules a process imports once: not the backfill's time)

    capturer = Capturer(tmp / "real" / "sessions", Settings(), CaptureOptions())
    started = time.perf_counter()
    results = capturer.capture(files)
    capture_seconds = time.perf_counter() - started
    got = {r.path: r.turns for r in results}
    differ = [p.name for p, n in expected.items() if n and got.get(p) != n]
    plain = Capturer(tmp / "plain" / "sessions", Settings(), CaptureOptions(redact=False))
    started = time.perf_counter()
    plain.capture(files)
    plain_seconds = time.perf_counter() - started
    print("1. real transcripts (corpus + fixtures)")
    print(f"   files {len(files)}, transcripts {len(expected)}, turns {sum(expected.values())}")
    print(f"   files whose captured turns differ from parse-only's: {len(differ)} {differ[:5]}")
    print(f"   model calls: 0 (litellm imported: {'litellm' in sys.modules})")
    print(f"   parse-only {parse_seconds:.2f} s · backfill {capture_seconds:.2f} s · "
          f"ratio {capture_seconds / parse_seconds:.2f}× (want ≤ 1.5×)")  # fmt: skip
    print(f"   without redaction (capture_redact = false) {plain_seconds:.2f} s · "
          f"ratio {plain_seconds / parse_seconds:.2f}×")  # fmt: skip
    return pool


def build_files(root: Path, pool: list[tuple[str, str]], count: int, file_kb: int) -> int:
    """``count`` files of about ``file_kb`` KB each from the real turns; returns their total bytes."""
    total = 0
    cursor = 0
    for index in range(count):
        claude = index % 2 == 0
        folder = root / ("claude" if claude else f"proj{index}")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (f"{index:08x}-0000-4000-8000-{index:012x}.jsonl" if claude else ".aider.chat.history.md")
        chunks: list[str] = [] if claude else ["# aider chat started at 2025-01-01 10:00:00\n\n"]
        size, turn, parent = 0, 0, None
        while size < file_kb * 1024:
            user, answer = pool[cursor % len(pool)]
            cursor += 1
            turn += 1
            user = f"{' '.join(user.split())[:2000]} (session {index} turn {turn})"
            if claude:
                records = [
                    {"parentUuid": parent, "uuid": f"u{turn}", "type": "user", "sessionId": str(index),
                     "cwd": f"/home/me/p{index % 7}", "message": {"role": "user", "content": user}},
                    {"parentUuid": f"u{turn}", "uuid": f"a{turn}", "type": "assistant", "sessionId": str(index),
                     "cwd": f"/home/me/p{index % 7}",
                     "message": {"role": "assistant", "id": f"m{turn}",
                                 "content": [{"type": "text", "text": answer[:6000] or "ok"}]}},
                ]  # fmt: skip
                parent = f"a{turn}"
                text = "".join(json.dumps(r) + "\n" for r in records)
            else:
                text = f"#### {user}\n\n{answer[:6000] or 'ok'}\n\n"
            chunks.append(text)
            size += len(text.encode())
        path.write_text("".join(chunks), encoding="utf-8")
        total += path.stat().st_size
    return total


def scale(
    tmp: Path, pool: list[tuple[str, str]], files: int, file_kb: int, send_runs: int = 0, together: bool = False
) -> None:
    """``together``: the reference session is built while ``watch --once`` runs (half the wall time for
    a big run; the throughput then shares the machine with it)."""
    root = tmp / "scale"
    total = build_files(root, pool, files, file_kb)
    env = dict(os.environ, CCM_HOME=str(tmp / "scale-data"), HOME=str(tmp / "home"), PYTHONPATH=str(ROOT),
               LITELLM_LOCAL_MODEL_COST_MAP="True")  # fmt: skip
    print(f"2. scale: {files} files, {total / 2**20:,.0f} MB", flush=True)
    started = time.perf_counter()
    watch = subprocess.Popen([sys.executable, "-c", CLI, "watch", "--once", "--no-home", "--quiet", "--root", str(root)],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    one_root = tmp / "one" / "sessions"
    if together:
        reference_session(root, one_root)
    out, err = watch.communicate(timeout=24 * 3600)
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"   watch --once: exit {watch.returncode}, {seconds:.1f} s, {total / 2**20 / seconds:.2f} MB/s, "
          f"peak memory {peak_mb:,.0f} MB" + (" (the reference session built at the same time)" if together else ""))  # fmt: skip
    print(f"   {out.strip().splitlines()[-1] if out.strip() else err[-300:]}", flush=True)
    if not together:
        reference_session(root, one_root)
    from ccm_tui.core.api import search_all_sessions, search_session

    queries = ["database migration", "test failure", "refactor the parser", "session 3 turn 2", "README"]
    sessions = Path(env["CCM_HOME"]) / "sessions"
    for query in queries:  # warm both
        search_all_sessions(sessions, query, 10)
        search_session(one_root / "one", query, 10)
    all_times, one_times = [], []
    for _ in range(5):
        for query in queries:
            t = time.perf_counter()
            search_all_sessions(sessions, query, 10)
            all_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            search_session(one_root / "one", query, 10)
            one_times.append(time.perf_counter() - t)
    a, o = statistics.median(all_times), statistics.median(one_times)
    print(f"   search --all-sessions {a * 1000:.1f} ms · one session of the same efforts {o * 1000:.1f} ms · "
          f"ratio {a / o:.2f}× (want ≤ 1.5×)")  # fmt: skip
    if send_runs:
        send_unchanged(tmp, env, root, send_runs)


def reference_session(root: Path, one_root: Path) -> None:
    """The same efforts in one session, for the reference search."""
    import ccm_tui.restore.capture as capture_module

    original = capture_module.capture_session_name
    capture_module.capture_session_name = lambda agent: "one"  # type: ignore[assignment]
    try:
        Capturer(one_root, Settings(), CaptureOptions()).capture(candidate_files(root).files)
    finally:
        capture_module.capture_session_name = original  # type: ignore[assignment]


def send_unchanged(tmp: Path, env: dict[str, str], root: Path, runs: int) -> None:
    """``send`` in the user's own session of the data directory holding the captures, with ``watch``
    following them, against ``send`` in a data directory without captures (the scripted server)."""
    from tests.helpers.openai_server import FakeLLMServer, text

    bare = dict(env, CCM_HOME=str(tmp / "bare-data"))
    server = FakeLLMServer(responder=lambda body: text("ok")).start()
    watcher = subprocess.Popen([sys.executable, "-c", CLI, "watch", "--no-home", "--quiet", "--root", str(root)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:

        def send(home_env: dict[str, str]) -> float:
            argv = [sys.executable, "-c", CLI, "send", "--session-dir", str(Path(home_env["CCM_HOME"]) / "mine"),
                    "--model", "openai/bench", "--api-base", server.base_url, "hello"]  # fmt: skip
            started = time.perf_counter()
            done = subprocess.run(argv, env=dict(home_env, OPENAI_API_KEY="sk-bench-fake"), capture_output=True)
            if done.returncode != 0:
                raise SystemExit(f"send failed: {done.stderr.decode(errors='replace')[-300:]}")
            return time.perf_counter() - started

        send(env), send(bare)  # warm both
        with_captures, without = [], []
        for _ in range(runs):
            with_captures.append(send(env))
            without.append(send(bare))
        w, b = statistics.median(with_captures), statistics.median(without)
        print(f"   send in your own session, captures beside it and watch following them {w:.2f} s · "
              f"without captures {b:.2f} s · ratio {w / b:.2f}× (want ≤ 1.1×; medians of {runs})")  # fmt: skip
    finally:
        watcher.terminate()
        watcher.wait(timeout=60)
        server.stop()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def follow(tmp: Path, appends: int, idle: float) -> None:
    from ccm_tui.core.api import search_all_sessions

    root = tmp / "live"
    (root / "claude").mkdir(parents=True)
    agent_file = root / "claude" / "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.jsonl"
    agent_file.write_text("", encoding="utf-8")
    home = tmp / "live-data"
    env = dict(os.environ, CCM_HOME=str(home), HOME=str(tmp / "home"), PYTHONPATH=str(ROOT),
               LITELLM_LOCAL_MODEL_COST_MAP="True")  # fmt: skip
    watcher = subprocess.Popen([sys.executable, "-c", CLI, "watch", "--no-home", "--root", str(root)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert watcher.stdout is not None
        for line in watcher.stdout:
            if line.startswith("following"):
                break
        latencies, searches = [], []
        parent = None
        for n in range(1, appends + 1):
            word = f"zebra{n}x{os.getpid()}"
            records = [
                {"parentUuid": parent, "uuid": f"u{n}", "type": "user", "sessionId": "live", "cwd": "/home/me/live",
                 "message": {"role": "user", "content": f"please look at {word} now"}},
                {"parentUuid": f"u{n}", "uuid": f"a{n}", "type": "assistant", "sessionId": "live",
                 "cwd": "/home/me/live", "message": {"role": "assistant", "id": f"m{n}", "content": "done"}},
            ]  # fmt: skip
            parent = f"a{n}"
            started = time.perf_counter()
            with agent_file.open("a", encoding="utf-8") as handle:
                handle.write("".join(json.dumps(r) + "\n" for r in records))
            while True:
                t = time.perf_counter()
                hits = search_all_sessions(home / "sessions", word, 3).hits
                searches.append(time.perf_counter() - t)
                if hits:
                    break
                if time.perf_counter() - started > 60:
                    break
                time.sleep(0.02)
            latencies.append(time.perf_counter() - started)
        latencies.sort()
        p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
        search = statistics.median(searches)
        print(f"3. append to searchable ({appends} appends)")
        print(f"   p50 {statistics.median(latencies):.2f} s · p95 {p95:.2f} s · one search {search * 1000:.0f} ms · "
              f"p95 beyond the search {p95 - search:.2f} s (want ≤ 2 s)")  # fmt: skip
        time.sleep(2)  # the last batch settles
        before, wall = cpu_seconds(watcher.pid), time.perf_counter()
        time.sleep(idle)
        used = cpu_seconds(watcher.pid) - before
        share = used / (time.perf_counter() - wall)
        print(f"4. idle watcher over {idle:g} s: {used:.2f} s of CPU, {share * 100:.2f}% of one core (want ≤ 1%)")
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--file-kb", type=int, default=100)
    parser.add_argument("--appends", type=int, default=20)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--send-runs", type=int, default=5, help="send with and without captures (0: not measured)")
    parser.add_argument("--together", action="store_true", help="build the reference session during watch --once")
    parser.add_argument("--parts", default="real,scale,follow", help="which of real, scale, follow to run")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="ccm-bench-capture-"))
    try:
        pool = real_transcripts(tmp, measure="real" in parts)
        if "scale" in parts:
            scale(tmp, pool, args.files, args.file_kb, args.send_runs, args.together)
        if "follow" in parts:
            follow(tmp, args.appends, args.idle)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
