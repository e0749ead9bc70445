"""kill -9 fault injection at scale against turns (``send``), ``repair`` and ``restore``; and two
campaigns of other faults: a full disk and type-ahead after a crash.

    python benchmarks/kill9.py [--target send|fold|repair|restore|disk-full|type-ahead|watch|forget|all] [--kills 200]
                               [--seed 1] [--events-mb 28] [--disk-size 4m] [--slow-summary SECONDS]

CI runs small versions (tests/faults/test_kill9*.py, test_*_campaign.py). Prints, per target,
kills / corrupt lines / lost or duplicated turns or efforts (want N / 0 / 0 / 0); repair also
counts kills after which no manifest.yaml existed. ``fold``: turns with a model without tools, which
the app answers by folding ambient chat into efforts after turns, killed at random points; also
prints the folds and the ambient lines folded twice (want 0). Durations are printed against the duration of
one unkilled run measured in the same campaign.

``disk-full`` (``--kills`` is the number of runs; needs root for a small tmpfs, else a loop file):
send, restore and search on a file system filled to random levels, the space freed after each;
prints runs / acknowledged / failed cleanly / lost / duplicated / corrupt / bad messages (want
N / a / N-a / 0 / 0 / 0 / 0). ``type-ahead`` (needs tmux): a ``send`` killed mid-reply, then the
TUI typed into 0-2 s after its launch or its first frame; prints runs / typed / delivered intact /
left in the input / swallowed / mangled / crashes / unwanted resends (want N / N / N / 0 ...).
``forget``: ``forget --text`` killed at random moments, then the session opened and the same forget run
again; prints kills / unopenable / half done after the re-run / unrelated lines lost / corrupt lines
(want N / 0 / 0 / 0 / 0).

``--slow-summary SECONDS`` (send, fold, restore; issue 42 item 9: with fast summaries no kill landed in
one): the scripted server holds each summary call that long — ``send``: conclusions (the turns cycle
open, chat, conclude; ``/conclude`` by the user and ``close_effort`` by the model); ``fold``: a fold's
summary step (extracted without a model: the campaign's driver asks the server from it); ``restore``:
the turn-by-turn summaries — and each kill waits for one (the first, second or third of the run, at
random) and lands in the first half of its wait. A kill counts as *in a summary* only if the server had
received the call before the kill and not answered it once the process was dead (logged, with the
calls, in the campaign's ``summary_calls.jsonl``). After each kill it also checks that ``derived.sqlite``
rebuilds to the same ``status`` and ``search`` answers, and that a restart does the interrupted summary
again (a last unkilled run redoes interrupted ``/conclude`` actions and folds; a restore run again has
every turn summarized).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.campaigns.disk_full import SmallDiskUnavailable, run_disk_full_campaign
from tests.helpers.campaigns.kill9_forget import run_forget_campaign
from tests.helpers.campaigns.kill9_repair_restore import run_repair_campaign, run_restore_campaign
from tests.helpers.campaigns.kill9_turns import run_campaign
from tests.helpers.campaigns.kill9_watch import run_watch_campaign
from tests.helpers.campaigns.type_ahead import TmuxUnavailable, run_type_ahead_campaign


def progress(message: str) -> None:
    print(message, file=sys.stderr)


def send_campaign(tmp: Path, kills: int, seed: int, *, fold: bool = False, slow_summary: float = 0.0) -> None:
    result = run_campaign(tmp, kills, seed, log=progress, fold=fold, summary_delay=slow_summary)
    print("fold (turns of a model without tools)" if fold else "send (turns)")
    print(f"  kills survived      {result.kills - len(result.violations)}/{result.kills}")
    print(f"  acknowledged turns  {result.acked}")
    print(f"  recovery reports    {result.recoveries}")
    print(f"  corrupt lines       {len(result.corrupt_files)}")
    print(f"  lost turns          {len(result.lost_turns)}")
    print(f"  duplicated turns    {len(result.duplicated_turns)}")
    if fold:
        print(f"  folds               {result.folds}")
        print(f"  folded twice        {len(result.folded_twice)}")
    if slow_summary:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(result.hits_by_kind.items()))
        print(f"  kills in a summary  {result.summary_hits} ({kinds}; the server held the call {slow_summary:g} s)")
        what = "folds" if fold else "/conclude actions"
        print(f"  interrupted         {result.interrupted} {what}, {len(result.not_redone)} not done after a restart")
        if not fold:
            print(f"  acknowledged /conclude {result.concluded}, concluded twice {len(result.duplicated_conclusions)}")
        print(f"  rebuilt differently {len(result.rebuilt_differently)} (derived.sqlite deleted: status, search)")
    print(f"  violations          {len(result.violations)}")
    found = result.duplicated_conclusions + result.not_redone + result.rebuilt_differently
    for v in (result.folded_twice + found + result.violations)[:10]:
        print(f"    - {v}")


def repair_campaign(tmp: Path, kills: int, seed: int, events_mb: float) -> None:
    report = run_repair_campaign(tmp, kills, seed, events_mb=events_mb, log=progress)
    print(f"repair ({events_mb:g} MB event log; kill moments spread over 0–1.1 × an unkilled run)")
    print(f"  kills               {report.kills} ({report.finished_first} ended before their kill moment)")
    print(f"  manifest missing    {report.missing_manifest}")
    print(f"  efforts lost        {len(report.lost)}")
    print(f"  corrupt lines       {len(report.corrupt_files)}")
    print(f"  violations          {len(report.violations)}")
    for v in report.violations[:10]:
        print(f"    - {v}")


def restore_campaign(tmp: Path, kills: int, seed: int, slow_summary: float = 0.0) -> None:
    report = run_restore_campaign(tmp, kills, seed, log=progress, summary_delay=slow_summary)
    when = "inside one of its turn-by-turn summary calls" if slow_summary else "at 0–1.1 × an unkilled run"
    print(f"restore (kill {when}, then import the same transcript again: whole, every turn summarized)")
    print(f"  kills               {report.kills} ({report.finished_first} ended before their kill moment)")
    print(f"  duplicated imports  {report.duplicated}")
    print(f"  lost imports        {len(report.lost)}")
    if slow_summary:
        print(f"  kills in a summary  {report.summary_hits} (turn-by-turn summary calls held {slow_summary:g} s)")
    print(f"  corrupt lines       {len(report.corrupt_files)}")
    print(f"  violations          {len(report.violations)}")
    for v in report.violations[:10]:
        print(f"    - {v}")


def disk_full_campaign(tmp: Path, runs: int, seed: int, size: str) -> None:
    try:
        report = run_disk_full_campaign(tmp, runs, seed, size=size, log=progress)
    except SmallDiskUnavailable as exc:
        print(f"disk-full: skipped ({exc})")
        return
    print(f"disk-full ({report.disk}; send, restore, search with 0-1024 KiB left free; space freed after each)")
    print(f"  runs                {report.runs} ({', '.join(f'{n} {k}' for k, n in sorted(report.kinds.items()))})")
    print(f"  acknowledged        {report.acknowledged}")
    print(f"  failed cleanly      {report.failed_cleanly}")
    print(f"  lost                {len(report.lost)}")
    print(f"  duplicated          {len(report.duplicated)}")
    print(f"  corrupt             {len(report.corrupt)}")
    print(f"  bad messages        {len(report.bad_messages)}")
    print(f"  failed yet stored   {len(report.stored_though_failed)}")
    print(
        f"  told not to resend  {len(report.logged_at_next_start)} (logged by the next start, --retry-orphan refused)"
    )
    print(f"  not found by search {len(report.not_found)}")
    print(f"  violations          {len(report.violations)}")
    for line in report.threshold_lines():
        print(f"  {line}")
    found = report.lost + report.duplicated + report.corrupt + report.bad_messages + report.stored_though_failed
    for v in (found + report.violations)[:10]:
        print(f"    - {v}")


def type_ahead_campaign(tmp: Path, runs: int, seed: int) -> None:
    try:
        report = run_type_ahead_campaign(tmp, runs, seed, log=progress)
    except TmuxUnavailable as exc:
        print(f"type-ahead: skipped ({exc})")
        return
    print("type-ahead (send killed mid-reply; the TUI typed into 0-2 s after its launch or its first frame)")
    print(f"  runs                {report.runs} ({report.orphans_left} left an unanswered message)")
    print(
        f"  typed messages      {report.typed} ({report.typed_early} begun before the app took the terminal, "
        f"{report.typed_before_frame} before its first frame, those included)"
    )
    print(
        f"  delivered intact    {report.delivered_intact} ({report.intact_early} of those typed early, "
        f"{report.intact_before_frame} of those typed before the first frame)"
    )
    print(f"  left in the input   {len(report.left_in_input)} (Enter became a new line)")
    print(f"  swallowed           {len(report.swallowed)}")
    print(f"  mangled             {len(report.mangled)}")
    print(f"  crashes             {len(report.crashes)}")
    print(f"  unwanted resends    {report.unwanted_resends}")
    print(f"  violations          {len(report.violations)}")
    for v in (report.left_in_input + report.swallowed + report.mangled + report.crashes + report.violations)[:10]:
        print(f"    - {v}")


def watch_campaign(tmp: Path, kills: int, seed: int) -> None:
    report = run_watch_campaign(tmp, kills, seed, log=progress)
    print("watch (backfill of agent files killed at 0–1.1 × an unkilled run; a file grows between kills)")
    print(f"  kills               {report.kills} ({report.finished_first} ended before their kill moment)")
    print(f"  unkilled run        {report.reference_seconds:.1f} s")
    print(f"  files / turns       {report.files} / {report.turns} ({report.appended_turns} appended between kills)")
    print(f"  lost turns          {len(report.lost)}")
    print(f"  duplicated turns    {len(report.duplicated)}")
    print(f"  corrupt lines       {len(report.corrupt)}")
    for v in report.violations[:10]:
        print(f"    - {v}")


def forget_campaign(tmp: Path, kills: int, seed: int) -> None:
    report = run_forget_campaign(tmp, kills, seed, efforts=200, log=progress)
    print(f"forget (kill at 0–1.1 × an unkilled run of {report.reference_seconds:.2f} s, then the same forget again)")
    print(f"  kills               {report.kills} ({report.finished_first} ended before their kill moment)")
    print(f"  unopenable          {len(report.unopenable)}")
    print(f"  half done (re-run)  {len(report.half_done)}")
    print(f"  unrelated lost      {len(report.unrelated_lost)}")
    print(f"  corrupt lines       {len(report.corrupt)}")
    print(f"  violations          {len(report.violations)}")
    for v in (report.unopenable + report.half_done + report.unrelated_lost + report.corrupt + report.violations)[:10]:
        print(f"    - {v}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    targets = ["send", "fold", "repair", "restore", "disk-full", "type-ahead", "watch", "forget"]
    parser.add_argument("--target", choices=[*targets, "all"], default="send")
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--events-mb", type=float, default=28.0, help="size of the event log repair reads")
    parser.add_argument("--disk-size", default="4m", help="size of the disk-full campaign's file system")
    parser.add_argument(
        "--slow-summary", type=float, default=0.0, metavar="SECONDS", help="send, fold, restore: kill inside summaries"
    )
    args = parser.parse_args()
    targets = targets if args.target == "all" else [args.target]
    start = time.monotonic()
    for target in targets:
        with tempfile.TemporaryDirectory(prefix=f"ccm-kill9-{target}-") as tmp:
            if target in ("send", "fold"):
                send_campaign(Path(tmp), args.kills, args.seed, fold=target == "fold", slow_summary=args.slow_summary)
            elif target == "repair":
                repair_campaign(Path(tmp), args.kills, args.seed, args.events_mb)
            elif target == "restore":
                restore_campaign(Path(tmp), args.kills, args.seed, args.slow_summary)
            elif target == "watch":
                watch_campaign(Path(tmp), args.kills, args.seed)
            elif target == "forget":
                forget_campaign(Path(tmp), args.kills, args.seed)
            elif target == "disk-full":
                disk_full_campaign(Path(tmp), args.kills, args.seed, args.disk_size)
            else:
                type_ahead_campaign(Path(tmp), args.kills, args.seed)
    print(f"elapsed             {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
