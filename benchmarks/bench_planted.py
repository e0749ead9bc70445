"""Planted-fact retrieval on real agent transcripts: does ``ccm-tui search`` find the effort, and the line?

A measure that is not LoCoMo. Every transcript of a collection — the real
transcripts of ``../shared/corpus`` (``--corpus`` or ``$CCM_CORPUS``) and, as a
collection of its own, ``tests/fixtures/transcripts`` (some of them are excerpts
of the corpus, so the two are never indexed together) — is parsed with
``ccm_tui.restore.parse.parse_transcript`` and laid out as a raw log with
``ccm_tui.restore.landing.turn_messages`` (a user line and an assistant line per
turn), in a real session directory: either one concluded effort per transcript
(what ``ccm-tui restore`` lands) or one per run of ``--turns`` turns (a session
split into efforts, harder: many more documents, several per project). Efforts
have neutral ids and no summary (a summary needs a model): the search has only
the logs.

``benchmarks/data/planted_facts.yaml`` holds the questions, written by reading
the transcripts: each names the transcript, a 1-based line of its log and a
substring that line must contain (checked first). A question counts as found at
k for the *effort* when the effort holding that line is among the first k
results, and for the *line* when that result's passage lines (``SearchHit.lines``)
include it. The same run scores plain BM25 (``bench_recall.PlainBM25``: k1 1.2,
b 0.75, unstemmed words) over the same efforts as the reference, its passage
being the 3 consecutive lines of the effort with the highest summed line-level
BM25.

Usage::

    python benchmarks/bench_planted.py
    python benchmarks/bench_planted.py --misses 10 --turns 4
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recall import PlainBM25

from ccm_tui.core.engine.opening import search_session
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.manifest.effort_list import save_manifest
from ccm_tui.core.search._records import MAX_MESSAGE_CHARS
from ccm_tui.core.session.session import EFFORTS_DIR, MANIFEST_FILE
from ccm_tui.core.storage.durable import append_jsonl
from ccm_tui.restore.landing import turn_messages
from ccm_tui.restore.parse import TranscriptError, parse_transcript

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
FIXTURES = REPO / "tests" / "fixtures" / "transcripts"
QUESTIONS = Path(__file__).resolve().parent / "data" / "planted_facts.yaml"
TRANSCRIPT_SUFFIXES = (".md", ".jsonl", ".log")
NOT_TRANSCRIPTS = ("README.md", "FORMATS.md")
KS = (1, 3)
PASSAGE_LINES = 3
TS = "2025-01-01T00:00:00Z"


@dataclass
class Question:
    transcript: str  # collection/relative path
    line: int  # 1-based in the transcript's log
    answer: str
    text: str
    kind: str
    effort: str = ""  # filled by the layout
    effort_line: int = 0  # 1-based in that effort's log


@dataclass
class Collection:
    name: str
    root: Path
    logs: dict[str, list[str]] = field(default_factory=dict)  # transcript key -> message contents


def load_collection(name: str, root: Path) -> Collection:
    """Parse every transcript under ``root`` (files no format recognises are left out)."""
    collection = Collection(name, root)
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in TRANSCRIPT_SUFFIXES or path.name in NOT_TRANSCRIPTS:
            continue
        try:
            parsed = parse_transcript(path)
        except TranscriptError:
            continue
        key = f"{name}/{path.relative_to(root).as_posix()}"
        collection.logs[key] = [m["content"] for m in turn_messages(parsed, TS)]
    return collection


def load_questions(collections: dict[str, Collection]) -> tuple[list[Question], int]:
    """The questions, and how many of them were moved: a parser that now reads a transcript into more or
    fewer lines moves an answer, which is then taken from the one line that holds it (a question whose
    answer is on no line, or on several, stops the benchmark)."""
    data = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    questions, moved = [], 0
    for item in data["questions"]:
        q = Question(item["transcript"], int(item["line"]), str(item["answer"]), str(item["question"]), item["kind"])
        log = collections[q.transcript.split("/")[0]].logs.get(q.transcript)
        if log is None:
            raise SystemExit(f"bench_planted: {q.transcript} was not parsed (question {q.text!r})")
        if not 1 <= q.line <= len(log) or q.answer not in log[q.line - 1]:
            holding = [n for n, text in enumerate(log, 1) if q.answer in text]
            if len(holding) != 1:
                raise SystemExit(f"bench_planted: line {q.line} of {q.transcript} does not hold {q.answer!r}")
            q.line, moved = holding[0], moved + 1
        questions.append(q)
    return questions, moved


# --------------------------------------------------------------------------- sessions


@dataclass
class Layout:
    """One collection written as a session directory, with the documents of the reference."""

    directory: Path
    efforts: dict[str, list[str]]  # effort id -> its log lines (contents)


def write_layout(collection: Collection, directory: Path, turns: int, questions: list[Question]) -> Layout:
    """One effort per transcript (``turns`` 0) or per ``turns`` turns; fills each question's effort/line."""
    (directory / EFFORTS_DIR).mkdir(parents=True)
    efforts: dict[str, list[str]] = {}
    where: dict[tuple[str, int], tuple[str, int]] = {}
    for t, (key, log) in enumerate(sorted(collection.logs.items())):
        size = 2 * turns if turns else max(1, len(log))
        for part, start in enumerate(range(0, len(log), size)):
            effort_id = f"t{t:02d}-p{part:03d}"
            efforts[effort_id] = log[start : start + size]
            for i in range(len(efforts[effort_id])):
                where[(key, start + i + 1)] = (effort_id, i + 1)
    manifest = []
    for effort_id, lines in efforts.items():
        effort = Effort(effort_id, status=CONCLUDED, summary=None, messages=len(lines))
        role = ("user", "assistant")
        records = [{"role": role[i % 2], "content": text, "ts": TS} for i, text in enumerate(lines)]
        append_jsonl(directory / effort.raw_file, records, sync=False)
        manifest.append(effort)
    save_manifest(directory / MANIFEST_FILE, manifest)
    for q in questions:
        if q.transcript.startswith(collection.name + "/"):
            q.effort, q.effort_line = where[(q.transcript, q.line)]
    return Layout(directory, efforts)


# --------------------------------------------------------------------------- rankings

#: a ranking: question -> [(effort id, (first line, last line) or None)], best first
Ranking = Callable[[Question], list[tuple[str, tuple[int, int] | None]]]


def product_ranking(layout: Layout) -> Ranking:
    def rank(q: Question) -> list[tuple[str, tuple[int, int] | None]]:
        return [(h.id, h.lines) for h in search_session(layout.directory, q.text, 10)]

    return rank


def plain_ranking(layout: Layout) -> Ranking:
    """Plain BM25 over whole efforts; the passage is the best 3-line window by line-level BM25."""
    documents = {effort_id: "\n".join(lines) for effort_id, lines in layout.efforts.items()}
    by_effort = PlainBM25(documents)
    line_docs = {f"{e}\x00{i}": text for e, lines in layout.efforts.items() for i, text in enumerate(lines, 1)}
    by_line = PlainBM25(line_docs)

    def rank(q: Question) -> list[tuple[str, tuple[int, int] | None]]:
        line_scores = line_bm25(by_line, q.text)
        out = []
        for effort_id in by_effort.rank(q.text)[:10]:
            n = len(layout.efforts[effort_id])
            scores = [line_scores.get(f"{effort_id}\x00{i}", 0.0) for i in range(1, n + 1)]
            starts = range(max(1, n - PASSAGE_LINES + 1))
            best = max(starts, key=lambda s: (sum(scores[s : s + PASSAGE_LINES]), -s))
            out.append((effort_id, (best + 1, min(n, best + PASSAGE_LINES))))
        return out

    return rank


def line_bm25(model: PlainBM25, query: str) -> dict[str, float]:
    """Every line's plain BM25 score for ``query`` (the reference's passage placement)."""
    import math  # noqa: F401  (PlainBM25 keeps its own idf)

    terms = set(_words(query))
    out = {}
    for doc, tf, length in zip(model.ids, model.tfs, model.lengths):
        if terms.isdisjoint(tf):
            continue
        norm = model.k1 * (1 - model.b + model.b * length / model.avg)
        out[doc] = sum(model.idf[t] * tf[t] * (model.k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
    return out


def _words(text: str) -> list[str]:
    from bench_recall import _WORD

    return _WORD.findall(text.lower())


# --------------------------------------------------------------------------- scoring


@dataclass
class Score:
    effort: Counter[int] = field(default_factory=Counter)
    line: Counter[int] = field(default_factory=Counter)
    total: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, q: Question, ranked: list[tuple[str, tuple[int, int] | None]]) -> None:
        self.total += 1
        first = next((i for i, (e, _) in enumerate(ranked) if e == q.effort), None)
        lines = ranked[first][1] if first is not None else None
        on_line = lines is not None and lines[0] <= q.effort_line <= lines[1]
        for k in KS:
            self.effort[k] += first is not None and first < k
            self.line[k] += first is not None and first < k and on_line
        if first is None or first >= 3 or not on_line:
            got = f"rank {first + 1}" if first is not None else "not found"
            self.misses.append(f"{q.transcript}:{q.line} [{got}, lines {lines}] {q.text}")

    def figures(self) -> str:
        return (
            " ".join(f"{self.effort[k] / self.total:6.3f}" for k in KS)
            + " "
            + " ".join(f"{self.line[k] / self.total:6.3f}" for k in KS)
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get("CCM_CORPUS", DEFAULT_CORPUS)))
    parser.add_argument("--turns", type=int, default=4, help="turns per effort in the split layout (default 4)")
    parser.add_argument("--misses", type=int, default=0, metavar="N", help="print N of our misses per layout")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"bench_planted: skipped, no transcript corpus at {args.corpus} (use --corpus or $CCM_CORPUS)")
        return 0
    collections = {"corpus": load_collection("corpus", args.corpus), "fixtures": load_collection("fixtures", FIXTURES)}
    questions, moved = load_questions(collections)
    beyond = sum(collections[q.transcript.split("/")[0]].logs[q.transcript][q.line - 1].find(q.answer)
                 >= MAX_MESSAGE_CHARS for q in questions)  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="ccm-bench-planted-"))
    rows: list[tuple[str, str, Score, int]] = []
    try:
        for label, turns in (("one effort per transcript", 0), (f"efforts of {args.turns} turns", args.turns)):
            scores = {"ccm-tui search": Score(), "plain BM25 (reference)": Score()}
            efforts = 0
            for name, collection in collections.items():
                layout = write_layout(collection, root / f"{name}-{turns}", turns, questions)
                efforts += len(layout.efforts)
                mine = [q for q in questions if q.transcript.startswith(name + "/")]
                for ranking_name, ranking in (
                    ("ccm-tui search", product_ranking(layout)),
                    ("plain BM25 (reference)", plain_ranking(layout)),
                ):
                    for q in mine:
                        scores[ranking_name].add(q, ranking(q))
            rows.extend((label, name, score, efforts) for name, score in scores.items())
    finally:
        shutil.rmtree(root, ignore_errors=True)

    kinds = Counter(q.kind for q in questions)
    print(
        f"Planted facts: {len(questions)} questions ({', '.join(f'{n} {k}' for k, n in kinds.most_common())}) over "
        f"{sum(len(c.logs) for c in collections.values())} transcripts"
        f" ({len(collections['corpus'].logs)} corpus, {len(collections['fixtures'].logs)} fixtures)"
    )
    if moved:
        print(f"({moved} answers were not on their line any more and were found on another: see load_questions)")
    if beyond:
        print(f"({beyond} answers lie past the first {MAX_MESSAGE_CHARS:,} characters of their message, not indexed)")
    print(f"{'layout':<28} {'ranking':<24} {'effort@1':>8} {'@3':>6} {'line@1':>7} {'@3':>6}")
    for label, name, score, efforts in rows:
        f = score.figures().split()
        print(f"{label + f' ({efforts})':<28} {name:<24} {f[0]:>8} {f[1]:>6} {f[2]:>7} {f[3]:>6}")
    for label, name, score, _ in rows:
        if name == "ccm-tui search" and args.misses:
            print(f"our misses ({label}):")
            for miss in score.misses[: args.misses]:
                print(f"  {miss}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
