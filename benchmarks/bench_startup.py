"""Start-up time of the TUI: launch → first paint, median of 5 runs, against a bare Textual app
(``bare_textual_app.py``: a header, a text, a footer — the floor any Textual app pays) and elia,
measured alternately in the same run; prints both ratios (targets: ≤ 1.6× the bare app, ≤ 0.8× elia).

Every app is measured the same way: it is started in a detached tmux pane of
150x45 and the pane is polled (``capture-pane``) until a marker that only the
painted UI shows appears. The figure includes tmux's own start (a few ms, the
same for every app). For ccm-tui a second figure, "ready", waits until the
session is open and the token meter is filled in.

    python benchmarks/bench_startup.py                 # ccm-tui, plus elia / oterm if found
    python benchmarks/bench_startup.py --runs 9 --elia /tmp/elia-venv/bin/elia
    python benchmarks/bench_startup.py --efforts 10000   # also on a session of 10,000 concluded efforts

With ``--efforts N`` ccm-tui is measured on an empty session and on one of N concluded efforts
(10 messages each): first paint, the session ready, and (on the big one) the concluded list shown,
as ratios to the empty session (target ≤ 1.5×).

Comparison apps are looked up in /tmp/elia-venv and /tmp/oterm-venv
(``python -m venv /tmp/elia-venv && /tmp/elia-venv/bin/pip install elia-chat``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMEOUT = 30.0
_runs = 0


def tmux(socket: str, *args: str, check: bool = True) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=check).stdout


def time_to_marker(command: str, markers: list[str], env: dict[str, str]) -> list[float]:
    """Seconds from launching ``command`` until each marker is on screen (in order)."""
    global _runs
    _runs += 1
    socket = f"ccm-bench-{os.getpid()}-{_runs}"  # a fresh tmux server per run
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    start = time.perf_counter()
    tmux(
        socket,
        "new-session",
        "-d",
        "-s",
        "bench",
        "-x",
        "150",
        "-y",
        "45",
        f"env -u COLUMNS -u LINES {exports} {command}",
    )
    found: list[float] = []
    try:
        while len(found) < len(markers):
            screen = tmux(socket, "capture-pane", "-p", "-t", "bench", check=False)
            while len(found) < len(markers) and markers[len(found)] in screen:
                found.append(time.perf_counter() - start)
            if time.perf_counter() - start > TIMEOUT:
                raise RuntimeError(f"{markers[len(found)]!r} not seen after {TIMEOUT} s:\n{screen}")
            time.sleep(0.002)
    finally:
        tmux(socket, "kill-server", check=False)
    return found


def summarize(name: str, samples: list[list[float]]) -> dict:
    result: dict = {"app": name, "runs": len(samples)}
    for i in range(len(samples[0])):
        label = ("first_paint", "ready", "listed")[i]
        result[f"{label}_median_s"] = round(statistics.median(s[i] for s in samples), 3)
        result[f"{label}_samples_s"] = [round(s[i], 3) for s in samples]
    return result


def measure_all(apps: list[tuple[str, str, list[str]]], runs: int, env: dict[str, str]) -> list[dict]:
    """Each app ``runs`` times, alternated (one run of each, then the next round), so that a load
    that comes and goes on the machine weighs on every app alike."""
    samples: dict[str, list[list[float]]] = {name: [] for name, _, _ in apps}
    failed: dict[str, str] = {}
    for name, command, markers in apps:  # warm the OS file cache; not counted
        try:
            time_to_marker(command, markers, env)
        except RuntimeError as exc:
            failed[name] = str(exc).splitlines()[0]
    for _ in range(runs):
        for name, command, markers in apps:
            if name not in failed:
                samples[name].append(time_to_marker(command, markers, env))
    return [
        {"app": name, "error": failed[name]} if name in failed else summarize(name, samples[name])
        for name, _, _ in apps
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--elia", default="/tmp/elia-venv/bin/elia")
    parser.add_argument("--oterm", default="/tmp/oterm-venv/bin/oterm")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--efforts", type=int, default=0, help="also measure a session of this many efforts")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed to measure start-up")

    scratch = Path(tempfile.mkdtemp(prefix="ccm-bench-"))
    env = {
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "HOME": str(scratch / "home"),
        "OPENAI_API_KEY": "sk-bench",
        "TERM": "xterm-256color",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OLLAMA_HOST": "http://127.0.0.1:9",
    }
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"):
        Path(env[key]).mkdir(parents=True)
    # Bytecode as a wheel install leaves it (pip compiles on install): an editable checkout under
    # PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module from source at each start.
    import compileall

    import ccm_tui

    compileall.compile_dir(Path(ccm_tui.__file__).parent, quiet=1)
    ccm = Path(sys.executable).with_name("ccm-tui")
    program = str(ccm) if ccm.exists() else shutil.which("ccm-tui")
    bare = f"{sys.executable} {Path(__file__).with_name('bare_textual_app.py')}"
    apps = [
        ("bare textual", bare, ["bare textual app ready"]),
        (
            "ccm-tui",
            f"{program} --session-dir {scratch / 'session'} --model openai/gpt-4o-mini",
            ["EFFORTS", "of budget"],
        ),
    ]
    if args.efforts:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from benchmarks.bench_turn import build_session

        big = scratch / f"s{args.efforts}"
        build_session(big, args.efforts, 10)
        apps.append(
            (
                f"ccm-tui, {args.efforts:,} efforts",
                f"{program} --session-dir {big} --model openai/gpt-4o-mini",
                ["EFFORTS", "of budget", "CONCLUDED"],
            )
        )
    missing = []
    for name, path, marker in (("elia", args.elia, "Enter your message"), ("oterm", args.oterm, "Welcome to oterm")):
        if Path(path).exists():
            apps.append((name, path, [marker]))
        else:
            missing.append({"app": name, "error": f"not installed at {path}"})
    results = measure_all(apps, args.runs, env) + missing
    shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        if "error" in r:
            print(f"{r['app']:8} {r['error']}")
            continue
        line = f"{r['app']:12} first paint {r['first_paint_median_s'] * 1000:6.0f} ms (median of {r['runs']})"
        if "ready_median_s" in r:
            line += f" · session ready {r['ready_median_s'] * 1000:6.0f} ms"
        if "listed_median_s" in r:
            line += f" · concluded list shown {r['listed_median_s'] * 1000:6.0f} ms"
        print(line)
    floor, base = results[0], results[1]
    print(
        f"ccm-tui first paint: {base['first_paint_median_s'] / floor['first_paint_median_s']:.2f}× a bare Textual app"
        " (target ≤ 1.6×)",
        end="",
    )
    elia = next((r for r in results if r["app"] == "elia" and "error" not in r), None)
    if elia is not None:
        print(f", {base['first_paint_median_s'] / elia['first_paint_median_s']:.2f}× elia (target ≤ 0.8×)")
    else:
        print(" (elia not measured)")
    for r in results[2:]:
        if r["app"].startswith("ccm-tui,") and "error" not in r:
            print(
                f"{r['app']} against an empty session: first paint "
                f"{r['first_paint_median_s'] / base['first_paint_median_s']:.2f}×, ready "
                f"{r['ready_median_s'] / base['ready_median_s']:.2f}×, list shown "
                f"{r['listed_median_s'] / base['ready_median_s']:.2f}× the empty session's ready (target ≤ 1.5×)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
