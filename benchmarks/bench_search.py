"""Benchmark of ccm_tui.core.search.EffortIndex on a synthetic session.

Builds a session directory of N efforts × M messages (``efforts/<id>.jsonl``
logs of varied synthetic text drawn from a Zipf-distributed vocabulary with a
fixed seed, and ``manifest.yaml`` listing them), takes the list into its rows
(the index reads each effort's status, summary and name there), indexes it with
``sync_session`` and prints a table:

* the effort list's catch-up (``manifest.yaml`` into the rows, as a first load),
* build time (cold ``sync_session``: reading, parsing and indexing every log),
* database size,
* ``search()`` latency p50/p95 over mixed queries (rare, common, mixed,
  id-like, and noisy text full of FTS5 syntax), overall and per kind,
* single-line ``add_messages`` latency,
* ``sync_session`` latency when nothing changed and after one appended line.

``--ambient N`` also writes an ambient log (``raw.jsonl``) of N lines of the same
text: it is indexed in blocks and searched with the efforts.

Usage::

    python benchmarks/bench_search.py                      # 10,000 × 100
    python benchmarks/bench_search.py --efforts 1000 --messages 50
    python benchmarks/bench_search.py --keep /tmp/bench    # reuse/keep the session
    python benchmarks/bench_search.py --ambient 1000000    # plus a million-line ambient log
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ccm_tui.core.manifest.effort import Effort
from ccm_tui.core.manifest.effort_list import EffortList, save_manifest
from ccm_tui.core.search import EffortIndex

SYLLABLES = (
    "ka lo mi ne ru ta so ve ti pa de fo gu ha ji ko le ma no pe qui ra se tu "
    "va xi yo za bri cla dro fen gal hor ist jun kel lum mor nix oph pra quo "
    "rel sta tor ulm vex wyn zor"
).split()
TECH_WORDS = (
    "authentication token refresh login database migration schema index query "
    "cache latency connection pool timeout retry error exception stack trace "
    "deploy release build test failure regression config parser buffer socket "
    "thread lock deadlock memory leak profile benchmark café naïve résumé"
).split()


def make_vocabulary(rng: random.Random, size: int) -> list[str]:
    """Distinct pseudo-words plus some real tech words, in Zipf rank order."""
    words: dict[str, None] = dict.fromkeys(TECH_WORDS)
    while len(words) < size:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    vocab = list(words)
    rng.shuffle(vocab)
    return vocab


def zipf_cum_weights(size: int, exponent: float = 1.07) -> list[float]:
    total, out = 0.0, []
    for rank in range(1, size + 1):
        total += 1.0 / rank**exponent
        out.append(total)
    return out


class TextGen:
    """Random sentences from a Zipf-distributed vocabulary."""

    def __init__(self, rng: random.Random, vocab: list[str]) -> None:
        self.rng, self.vocab = rng, vocab
        self.cum = zipf_cum_weights(len(vocab))

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=n)

    def sentence(self, lo: int, hi: int) -> str:
        words = self.words(self.rng.randint(lo, hi))
        words[0] = words[0].capitalize()
        return " ".join(words) + self.rng.choice(".!?")


Manifest = list[tuple[str, str, "str | None"]]


def write_session(root: Path, efforts: int, messages: int, seed: int) -> tuple[Manifest, list[str]]:
    """Create efforts/<id>.jsonl logs; return the manifest tuples and the vocabulary.

    A session generated earlier with the same parameters (``--keep``) is reused.
    """
    rng = random.Random(seed)
    vocab = make_vocabulary(rng, 20_000)
    saved = root / "bench-manifest.json"
    params = [efforts, messages, seed, "slug ids"]
    if saved.exists():
        data = json.loads(saved.read_text(encoding="utf-8"))
        if data["params"] == params:
            return [tuple(m) for m in data["manifest"]], vocab  # type: ignore[misc]
    gen = TextGen(rng, vocab)
    logs = root / "efforts"
    logs.mkdir(parents=True, exist_ok=True)
    manifest: Manifest = []
    roles = ("user", "assistant", "assistant", "system")
    for i in range(efforts):
        words = "-".join(gen.words(rng.randint(2, 3))).lower()  # an id is a slug: café → cafe
        effort_id = unicodedata.normalize("NFKD", words).encode("ascii", "ignore").decode() + f"-{i}"
        concluded = rng.random() < 0.9
        summary = gen.sentence(10, 30) if concluded else None
        manifest.append((effort_id, "concluded" if concluded else "open", summary))
        lines = [
            json.dumps({"role": roles[j % 4], "content": gen.sentence(8, 60), "ts": "2025-01-01T00:00:00Z"})
            for j in range(messages)
        ]
        (logs / f"{effort_id}.jsonl").write_text("\n".join(lines) + "\n" if lines else "", encoding="utf-8")
    saved.write_text(json.dumps({"params": params, "manifest": manifest}), encoding="utf-8")
    return manifest, vocab


def write_ambient(root: Path, lines: int, seed: int, vocab: list[str]) -> None:
    """``raw.jsonl`` of ``lines`` user/assistant lines (kept when it already has that many)."""
    raw = root / "raw.jsonl"
    if raw.exists() and sum(1 for _ in raw.open("rb")) == lines:
        return
    gen = TextGen(random.Random(seed + 2), vocab)
    with raw.open("w", encoding="utf-8") as fh:
        for j in range(lines):
            role = "user" if j % 2 == 0 else "assistant"
            fh.write(json.dumps({"role": role, "content": gen.sentence(8, 60), "ts": "2025-01-01T00:00:00Z"}) + "\n")


def make_queries(rng: random.Random, vocab: list[str], manifest: Manifest, n: int) -> list[tuple[str, str]]:
    """(kind, query) pairs: rare, common, mixed, id-like and noisy."""
    common, rare = vocab[:50], vocab[5_000:]
    kinds: list[tuple[str, Callable[[], str]]] = [
        ("rare", lambda: rng.choice(rare)),
        ("common", lambda: rng.choice(common)),
        ("mixed", lambda: " ".join(rng.sample(common, 1) + rng.sample(vocab[50:5_000], rng.randint(1, 3)))),
        ("id-like", lambda: " ".join(rng.choice(manifest)[0].split("-")[:2])),
        ("noisy", lambda: f'"{rng.choice(rare)}* NEAR({rng.choice(common)} -{rng.choice(vocab)}) ^x: ('),
    ]
    return [(kinds[i % len(kinds)][0], kinds[i % len(kinds)][1]()) for i in range(n)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def p50_p95(values: list[float]) -> str:
    return f"{percentile(values, 0.5):.2f} / {percentile(values, 0.95):.2f} ms"


def timed(fn: Callable[[], object]) -> float:
    """Wall-clock milliseconds of one call."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def file_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


Rows = list[tuple[str, str]]


def bench_list(index: EffortIndex, root: Path, manifest: Manifest, rows: Rows) -> None:
    save_manifest(root / "manifest.yaml", [Effort(id=i, status=status, summary=s) for i, status, s in manifest])
    start = time.perf_counter()
    EffortList(index.database, root).catch_up()
    rows.append(("effort list: manifest.yaml into its rows", f"{time.perf_counter() - start:.1f} s"))


def bench_build(index: EffortIndex, root: Path, manifest: Manifest, optimize: bool, rows: Rows) -> None:
    start = time.perf_counter()
    added = index.sync_session(root)
    build = time.perf_counter() - start
    rows.append((f"build: sync_session, {len(manifest):,} efforts / {added:,} messages", f"{build:.1f} s"))
    rows.append(("  = messages indexed per second", f"{added / build:,.0f}"))
    if optimize:
        rows.append(("optimize (segment merge)", f"{timed(index.optimize) / 1000:.1f} s"))
    db = index.path
    wal = Path(f"{db}-wal")
    rows.append(("db size (+ WAL)", f"{file_size(db) / 2**20:,.1f} (+{file_size(wal) / 2**20:,.1f}) MiB"))


def bench_search(index: EffortIndex, queries: list[tuple[str, str]], rows: Rows) -> None:
    for _, q in queries[:10]:  # warm the page cache
        index.search(q)
    by_kind: dict[str, list[float]] = {}
    cpu: list[float] = []
    for kind, q in queries:
        start = time.process_time()
        by_kind.setdefault(kind, []).append(timed(lambda q=q: index.search(q)))
        cpu.append((time.process_time() - start) * 1000.0)
    every = [v for values in by_kind.values() for v in values]
    rows.append((f"search p50 / p95 ({len(every)} queries)", p50_p95(every)))
    rows.append(("  same, CPU time of this process", p50_p95(cpu)))
    for kind, values in by_kind.items():
        rows.append((f"  {kind:8} p50 / p95", p50_p95(values)))
    filtered = [timed(lambda q=q: index.search(q, status="open")) for _, q in queries[:50]]
    rows.append(("search status='open' p50 / p95 (50 queries)", p50_p95(filtered)))


def bench_sync(index: EffortIndex, root: Path, manifest: Manifest, rows: Rows) -> None:
    noop = [timed(lambda: index.sync_session(root)) for _ in range(5)]
    rows.append(("sync_session, nothing changed (median of 5)", f"{statistics.median(noop):.1f} ms"))
    with open(root / "efforts" / f"{manifest[0][0]}.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"role": "user", "content": "one more appended line"}) + "\n")
    rows.append(("sync_session, one line appended", f"{timed(lambda: index.sync_session(root)):.1f} ms"))


def bench_add(index: EffortIndex, manifest: Manifest, gen: TextGen, first_line: int, rows: Rows) -> None:
    latencies = []
    for i in range(200):
        effort_id = manifest[gen.rng.randrange(len(manifest))][0]
        message = {"role": "assistant", "content": gen.sentence(8, 60)}
        latencies.append(
            timed(lambda e=effort_id, m=message, i=i: index.add_messages(e, [m], start_line=first_line + i))
        )
    rows.append(("add_messages, one line p50 / p95 (200 calls)", p50_p95(latencies)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--efforts", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--keep", type=Path, help="session directory to create/reuse and keep")
    parser.add_argument("--optimize", action="store_true", help="merge FTS segments after the build")
    parser.add_argument("--ambient", type=int, default=0, metavar="N", help="also an ambient log of N lines")
    args = parser.parse_args(argv)

    root = args.keep or Path(tempfile.mkdtemp(prefix="ccm-bench-search-"))
    rows: Rows = []
    try:
        start = time.perf_counter()
        manifest, vocab = write_session(root, args.efforts, args.messages, args.seed)
        if args.ambient:
            write_ambient(root, args.ambient, args.seed, vocab)
        elif (root / "raw.jsonl").exists():
            (root / "raw.jsonl").unlink()
        rows.append(("generate logs", f"{time.perf_counter() - start:.1f} s"))
        db_path = root / "search.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db_path}{suffix}").unlink(missing_ok=True)
        rng = random.Random(args.seed + 1)
        with EffortIndex(db_path) as index:
            bench_list(index, root, manifest, rows)
            bench_build(index, root, manifest, args.optimize, rows)
            bench_search(index, make_queries(rng, vocab, manifest, args.queries), rows)
            bench_sync(index, root, manifest, rows)
            bench_add(index, manifest, TextGen(rng, vocab), args.messages + 10, rows)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    width = max(len(label) for label, _ in rows)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    ambient = f" + {args.ambient:,} ambient lines" if args.ambient else ""
    print(f"EffortIndex benchmark: {args.efforts:,} efforts × {args.messages} messages{ambient}, seed {args.seed}")
    print(f"(machine: {os.cpu_count()} CPUs, load average at the end {load})")
    print("-" * (width + 22))
    for label, value in rows:
        print(f"{label:<{width}}  {value:>18}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
