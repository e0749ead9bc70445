"""Recall of ``ccm-tui search`` on conversations the project has not seen (LoCoMo development split).

Each LoCoMo session becomes one concluded effort of a real session directory
(``manifest.yaml`` written by the core's ``save_manifest``, ``efforts/<id>.jsonl``
by its ``append_jsonl``): summary = the session summary, raw log = the dialogue,
one message per turn. Every question (adversarial category 5 left out) is asked
through ``search_session``, the function behind ``ccm-tui search``; a question
counts as found at k when one of its evidence sessions is among the first k
results.

The same run computes the reference line to beat: plain BM25 (k1 1.2, b 0.75,
unstemmed lower-case words) over each effort's summary + log, written here
independently of the product's index.

The data set is CC BY-NC 4.0 and is not part of the repository. It is read from
``--data`` (or ``$CCM_LOCOMO_DEV``), by default ``DEFAULT_DATA``; without it the
benchmark says so and exits 0.

Usage::

    python benchmarks/bench_recall.py
    python benchmarks/bench_recall.py --data /path/to/locomo-dev --misses 20
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ccm_tui.core.efforts import CONCLUDED, Effort, save_manifest
from ccm_tui.core.opening import search_session
from ccm_tui.core.session import EFFORTS_DIR, MANIFEST_FILE
from ccm_tui.core.store import append_jsonl

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev"
DATA_FILE = "locomo-dev.json"
ADVERSARIAL = 5
KS = (1, 3, 5)


@dataclass
class Question:
    conversation: int
    text: str
    evidence: set[str]  # effort ids


@dataclass
class Conversation:
    directory: Path
    documents: dict[str, str]  # effort id -> summary + log text, for the reference BM25


def effort_id(session: int) -> str:
    return f"session-{session}"


def load_conversations(data: list[dict], root: Path) -> tuple[list[Conversation], list[Question]]:
    """Write one session directory per conversation; return them with the questions."""
    conversations, questions = [], []
    for n, item in enumerate(data):
        directory = root / f"conversation-{n}"
        (directory / EFFORTS_DIR).mkdir(parents=True)
        dialogue, summaries = item["conversation"], item["session_summary"]
        efforts, documents = [], {}
        sessions = sorted(int(k.split("_")[1]) for k in dialogue if re.fullmatch(r"session_\d+", k))
        for s in sessions:
            turns = dialogue[f"session_{s}"]
            summary = summaries.get(f"session_{s}_summary") or None
            messages = [
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"{t['speaker']}: {t['text']}"}
                for i, t in enumerate(turns)
            ]
            effort = Effort(effort_id(s), status=CONCLUDED, summary=summary, messages=len(messages))
            append_jsonl(directory / effort.raw_file, messages, sync=False)
            efforts.append(effort)
            documents[effort.id] = "\n".join([summary or "", *(m["content"] for m in messages)])
        save_manifest(directory / MANIFEST_FILE, efforts)
        conversations.append(Conversation(directory, documents))
        for qa in item["qa"]:
            if qa.get("category") == ADVERSARIAL:
                continue
            evidence = {effort_id(int(m.group(1))) for e in qa["evidence"] for m in re.finditer(r"D(\d+):", e)}
            if evidence:
                questions.append(Question(n, str(qa["question"]), evidence))
    return conversations, questions


# --------------------------------------------------------------------------- the reference line

_WORD = re.compile(r"\w+")


class PlainBM25:
    """Textbook Okapi BM25 over whole documents (no stemming, no fields)."""

    def __init__(self, documents: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.ids = sorted(documents)
        self.tfs = [Counter(_WORD.findall(documents[i].lower())) for i in self.ids]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lengths) / len(self.lengths)
        df = Counter(term for tf in self.tfs for term in tf)
        n = len(self.ids)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def rank(self, query: str) -> list[str]:
        terms = set(_WORD.findall(query.lower()))
        scores = []
        for doc, tf, length in zip(self.ids, self.tfs, self.lengths):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg)
            s = sum(self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            scores.append((-s, doc))
        return [doc for s, doc in sorted(scores) if s < 0]


# --------------------------------------------------------------------------- scoring


@dataclass
class Figures:
    name: str
    found: dict[int, int]
    reciprocal: float
    latencies: list[float]
    total: int

    def recall(self, k: int) -> float:
        return self.found[k] / self.total

    @property
    def mrr(self) -> float:
        return self.reciprocal / self.total


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def evaluate(
    name: str, questions: list[Question], rank: Callable[[Question], list[str]], misses: list[tuple] | None = None
) -> Figures:
    found = dict.fromkeys(KS, 0)
    reciprocal, latencies = 0.0, []
    for q in questions:
        start = time.perf_counter()
        ranked = rank(q)
        latencies.append((time.perf_counter() - start) * 1000.0)
        first = next((i for i, e in enumerate(ranked) if e in q.evidence), None)
        if first is not None:
            reciprocal += 1.0 / (first + 1)
        for k in KS:
            found[k] += first is not None and first < k
        if misses is not None and (first is None or first >= 3):
            misses.append((q.conversation, q.text, sorted(q.evidence), ranked[:3]))
    return Figures(name, found, reciprocal, latencies, len(questions))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("CCM_LOCOMO_DEV", DEFAULT_DATA)))
    parser.add_argument("--misses", type=int, default=0, metavar="N", help="print N questions missed at 3")
    parser.add_argument("--keep", type=Path, help="directory to write the sessions into and keep")
    args = parser.parse_args(argv)

    data_file = args.data / DATA_FILE if args.data.is_dir() else args.data
    if not data_file.is_file():
        print(f"bench_recall: skipped, no LoCoMo development split at {data_file} (use --data or $CCM_LOCOMO_DEV)")
        return 0
    data = json.loads(data_file.read_text(encoding="utf-8"))
    root = args.keep or Path(tempfile.mkdtemp(prefix="ccm-bench-recall-"))
    try:
        conversations, questions = load_conversations(data, root)
        for c in conversations:  # build the derived index first: latencies are of searches alone
            search_session(c.directory, "warm up", 1)
        misses: list[tuple] = []

        def product(q: Question) -> list[str]:
            return [h.id for h in search_session(conversations[q.conversation].directory, q.text, 10)]

        references = [PlainBM25(c.documents) for c in conversations]
        rows = [
            evaluate("ccm-tui search", questions, product, misses),
            evaluate("plain BM25 (reference)", questions, lambda q: references[q.conversation].rank(q.text)),
        ]
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    efforts = sum(len(c.documents) for c in conversations)
    print(
        f"LoCoMo development split: {len(conversations)} conversations, {efforts} efforts, {len(questions)} questions"
    )
    print(f"{'ranking':<24} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6} {'p50 ms':>8} {'p95 ms':>8}")
    for f in rows:
        print(
            f"{f.name:<24} {f.recall(1):6.3f} {f.recall(3):6.3f} {f.recall(5):6.3f} {f.mrr:6.3f}"
            f" {percentile(f.latencies, 0.5):8.2f} {percentile(f.latencies, 0.95):8.2f}"
        )
    gap = rows[0].recall(3) - rows[1].recall(3)
    print(f"recall@3 against the reference: {gap:+.3f}")
    for conversation, text, evidence, top in misses[: args.misses]:
        print(f"  missed [{conversation}] {text!r} evidence {evidence} top3 {top}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
