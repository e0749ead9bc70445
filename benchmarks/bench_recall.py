"""Recall of ``ccm-tui search`` on conversations the project has not seen (LoCoMo development split).

Each LoCoMo session becomes one concluded effort of a real session directory
(``manifest.yaml`` written by the core's ``save_manifest``, ``efforts/<id>.jsonl``
by its ``append_jsonl``): summary = the session summary, raw log = the dialogue,
one message per turn (``--captions``: with the caption of a photo the speaker
shared, as LoCoMo's own evaluation renders it). Every question (adversarial category 5 left out) is asked
through ``search_session``, the function behind ``ccm-tui search``; a question
counts as found at k when one of its evidence sessions is among the first k
results.

The same run computes the reference line to beat: plain BM25 (k1 1.2, b 0.75,
unstemmed lower-case words) over each effort's summary + log, written here
independently of the product's index.

Then, unless ``--no-cv``, it estimates how the ranking does on conversations it
was not tuned on: leave-one-conversation-out cross-validation over the ranking
parameters of ``AXES`` (``Weights``): for each conversation, a coordinate search
from ``START`` chooses the weights with the best recall@3 (then MRR) on the
*other* conversations, and they are scored on the held-out one. The figures per
fold and their mean are printed beside the plain-BM25 figures of the same fold,
and the weights the same search chooses on all five (what the defaults should
be) beside the defaults.

First (``--turns-only``: only) it measures *recall* itself — the lines put back into a turn's request
before the model answers (``ccm_tui.core.turn.recall``) — on a labelled set of turns,
``benchmarks/data/recall_turns.yaml`` (the day of issue 38, real agent transcripts imported into it,
LoCoMo questions): each case is a message sent into a session, whether putting lines back is useful,
and which passage is. Precision: recalls that brought the useful passage over all recalls; recall:
useful cases whose passage was brought. Before (the evidence rule as it was, no memory of recent
recalls) and now, in the same run.

The data set is CC BY-NC 4.0 and is not part of the repository. It is read from
``--data`` (or ``$CCM_LOCOMO_DEV``), by default ``DEFAULT_DATA``; without it the
benchmark says so and exits 0.

Usage::

    python benchmarks/bench_recall.py
    python benchmarks/bench_recall.py --data /path/to/locomo-dev --misses 20
    python benchmarks/bench_recall.py --no-cv          # the all-in figures only (seconds, not minutes)
    python benchmarks/bench_recall.py --turns-only     # recall's precision on the labelled turns only
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
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ccm_tui.core.engine.opening import search_session
from ccm_tui.core.manifest.effort import CONCLUDED, Effort
from ccm_tui.core.manifest.effort_list import EffortList, save_manifest
from ccm_tui.core.search import EffortIndex, Weights
from ccm_tui.core.session.session import EFFORTS_DIR, MANIFEST_FILE
from ccm_tui.core.storage.derived import DERIVED_FILE
from ccm_tui.core.storage.durable import append_jsonl

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev"
DATA_FILE = "locomo-dev.json"
ADVERSARIAL = 5
KS = (1, 3, 5)

#: The parameters chosen by cross-validation, each with the values tried (a coordinate search: one
#: parameter at a time, the others held, until nothing improves): BM25 saturation and length
#: normalisation, the weight of a word pair, of the summary's coverage of the query, of the best
#: passage's and of the best single message's coverage. Stop words (left out) and the length of a line
#: (``size``: chosen on benchmarks/bench_planted.py, where logs of tool dumps are the concern) are fixed.
AXES: dict[str, tuple[float, ...]] = {
    "k1": (1.2, 1.6, 2.0),
    "b": (0.5, 0.75, 0.9),
    "pair": (0.15, 0.25, 0.35, 0.5),
    "meta_coverage": (3.0, 5.0, 8.0),
    "passage": (0.5, 1.0, 1.5),
    "message": (0.0, 0.5, 1.0),
}
#: Where every coordinate search starts: the defaults before this cross-validation (chosen on the whole
#: split), measured in the same run as "before".
START = Weights(k1=1.6, b=0.75, pair=0.25, meta_coverage=5.0, passage=1.0, message=0.0)
BEFORE = Weights(k1=1.6, b=0.75, pair=0.25, meta_coverage=5.0, passage=1.0, message=0.0, size=0.0)


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


def turn_text(turn: dict, captions: bool) -> str:
    """One dialogue turn as a log message: ``speaker: text``; with ``captions``, a photo the speaker
    shared is appended as LoCoMo's own evaluation renders it (``… and shared a photo of …``)."""
    text = f"{turn['speaker']}: {turn['text']}"
    if captions and turn.get("blip_caption"):
        text += f" and shared {turn['blip_caption']}."
    return text


def load_conversations(
    data: list[dict], root: Path, *, captions: bool = False
) -> tuple[list[Conversation], list[Question]]:
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
                {"role": "user" if i % 2 == 0 else "assistant", "content": turn_text(t, captions)}
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
        return self.found[k] / self.total if self.total else 0.0

    @property
    def mrr(self) -> float:
        return self.reciprocal / self.total if self.total else 0.0

    def __add__(self, other: Figures) -> Figures:
        found = {k: self.found[k] + other.found[k] for k in KS}
        return Figures(self.name, found, self.reciprocal + other.reciprocal, [], self.total + other.total)

    def row(self, label: str = "") -> str:
        return (
            f"{label or self.name:<34} {self.recall(1):6.3f} {self.recall(3):6.3f} {self.recall(5):6.3f}"
            f" {self.mrr:6.3f}"
        )


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


def per_conversation(name: str, questions: list[Question], rank: Callable[[Question], list[str]]) -> list[Figures]:
    """Figures of each conversation separately (its questions only)."""
    conversations = sorted({q.conversation for q in questions})
    return [evaluate(name, [q for q in questions if q.conversation == c], rank) for c in conversations]


def total(figures: Sequence[Figures]) -> Figures:
    out = figures[0]
    for f in figures[1:]:
        out = out + f
    return out


# --------------------------------------------------------------------------- cross-validation


def describe(w: Weights) -> str:
    return " ".join(f"{key}={getattr(w, key)}" for key in AXES)


class Table:
    """Figures per conversation of every point evaluated so far (each point is searched once)."""

    def __init__(self, indexes: list[EffortIndex], questions: list[Question], progress: bool) -> None:
        self.indexes, self.questions, self.progress = indexes, questions, progress
        self.figures: dict[Weights, list[Figures]] = {}

    def __call__(self, w: Weights) -> list[Figures]:
        if w not in self.figures:
            self.figures[w] = per_conversation(
                describe(w),
                self.questions,
                lambda q: [h.id for h in self.indexes[q.conversation].search(q.text, 10, weights=w)],
            )
            if self.progress and len(self.figures) % 10 == 0:
                print(f"  cross-validation: {len(self.figures)} points searched", file=sys.stderr)
        return self.figures[w]

    def objective(self, w: Weights, conversations: Sequence[int]) -> tuple[float, float]:
        f = total([fig for c, fig in enumerate(self(w)) if c in conversations])
        return (f.recall(3), f.mrr)


def coordinate_search(table: Table, conversations: Sequence[int], passes: int = 3) -> Weights:
    """From START, move one parameter of AXES at a time to its best value on ``conversations``
    (recall@3, then MRR; a tie keeps the current value) until a pass changes nothing."""
    current = START
    best = table.objective(current, conversations)
    for _ in range(passes):
        moved = False
        for key, values in AXES.items():
            for value in values:
                candidate = replace(current, **{key: value})
                score = table.objective(candidate, conversations)
                if score > best:
                    current, best, moved = candidate, score, True
        if not moved:
            break
    return current


def cross_validate(
    indexes: list[EffortIndex], questions: list[Question], progress: bool
) -> tuple[list[tuple[Weights, Figures]], Weights, Table]:
    """Leave one conversation out: per fold, (weights chosen on the other folds, held-out figures);
    and the weights the same search chooses on all of them (the defaults' candidate)."""
    table = Table(indexes, questions, progress)
    every = range(len(indexes))
    folds = []
    for held in every:
        chosen = coordinate_search(table, [c for c in every if c != held])
        folds.append((chosen, table(chosen)[held]))
    table(Weights())  # the defaults, for the report (searched while the indexes are open)
    return folds, coordinate_search(table, list(every)), table


# --------------------------------------------------------------------------- recall of turns

TURNS = Path(__file__).resolve().parent / "data" / "recall_turns.yaml"
PLANTED = Path(__file__).resolve().parent / "data" / "planted_facts.yaml"


def _shared(*parts: str) -> Path:
    """``shared/<parts>`` beside the repository or beside a folder above it (a worktree's), else the first."""
    here = Path(__file__).resolve().parents[1]
    found = [p.joinpath("shared", *parts) for p in here.parents]
    return next((p for p in found if p.exists()), found[0])


CORPUS = Path(os.environ.get("CCM_CORPUS", _shared("corpus")))


@dataclass
class TurnCase:
    session: str
    message: str
    useful: bool
    passage: str = ""
    history: tuple[str, ...] = ()
    origin: str = "day"


def _write_session(directory: Path, logs: dict[str, list[dict]], imported: set[str]) -> EffortIndex:
    """A session directory of concluded efforts (``imported``: with an agent transcript's provenance),
    and its index brought up to date."""
    (directory / EFFORTS_DIR).mkdir(parents=True)
    efforts = []
    for name, messages in logs.items():
        source = {"file": f"/imports/{name}", "format": "transcript", "turns": len(messages) // 2}
        effort = Effort(name, status=CONCLUDED, summary=name, messages=len(messages))
        effort.source = source if name in imported else None
        append_jsonl(directory / effort.raw_file, messages, sync=False)
        efforts.append(effort)
    save_manifest(directory / MANIFEST_FILE, efforts)
    index = EffortIndex(directory / DERIVED_FILE)
    EffortList(index.database, directory).catch_up()
    index.sync_session(directory)
    return index


def load_turn_cases(root: Path, data_file: Path | None) -> tuple[list[TurnCase], dict[str, EffortIndex], set[str]]:
    """The labelled turns, the index of each session they are sent into, and the imported efforts."""
    import yaml

    from ccm_tui.restore.landing import turn_messages
    from ccm_tui.restore.parse import parse_transcript

    spec = yaml.safe_load(TURNS.read_text(encoding="utf-8"))
    cases = [
        TurnCase(c["session"], c["message"], bool(c["useful"]), c.get("passage", ""), tuple(c.get("history", ())))
        for c in spec["cases"]
    ]
    indexes: dict[str, EffortIndex] = {}
    imported: set[str] = set()
    for name, session in spec["sessions"].items():
        logs: dict[str, list[dict]] = {}
        for effort, lines in (session.get("efforts") or {}).items():
            logs[effort] = [{"role": role, "content": text} for role, text in lines]
        for n, transcript in enumerate(session.get("imports") or ()):
            if not (CORPUS / transcript.removeprefix("corpus/")).is_file():
                print(f"bench_recall: no {transcript} under {CORPUS} ($CCM_CORPUS): not imported")
                continue
            parsed = parse_transcript(CORPUS / transcript.removeprefix("corpus/"))
            effort = f"import-{n + 1}"
            logs[effort] = [{"role": m["role"], "content": m["content"]} for m in turn_messages(parsed, "")]
            imported.add(effort)
        if "locomo" in session:
            if data_file is None:
                continue
            item = json.loads(data_file.read_text(encoding="utf-8"))[int(session["locomo"])]
            dialogue = item["conversation"]
            said: dict[str, str] = {}
            for key in sorted((k for k in dialogue if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:])):
                turns = dialogue[key]
                logs[f"locomo-{key[8:]}"] = [
                    {"role": "user" if i % 2 == 0 else "assistant", "content": turn_text(t, False)}
                    for i, t in enumerate(turns)
                ]
                said.update((t["dia_id"], turn_text(t, False)) for t in turns)
            wanted = spec["locomo_questions"]
            questions = [q for q in item["qa"] if q.get("category") != ADVERSARIAL and len(q["evidence"]) == 1]
            for q in questions[: int(wanted["count"])]:
                if q["evidence"][0] in said:
                    passage = said[q["evidence"][0]]
                    cases.append(TurnCase(wanted["session"], str(q["question"]), True, passage, (), "locomo"))
        indexes[name] = _write_session(root / name, logs, imported)
    planted = spec.get("planted")
    if planted:
        facts = yaml.safe_load(PLANTED.read_text(encoding="utf-8"))["questions"]
        for fact in facts:
            if fact["transcript"] in planted["transcripts"]:
                cases.append(TurnCase(planted["session"], fact["question"], True, str(fact["answer"]), (), "planted"))
    return [c for c in cases if c.session in indexes], indexes, imported


def run_turn_case(case: TurnCase, index: EffortIndex, imported: set[str], now: bool) -> tuple[bool, bool]:
    """(recalled anything, recalled the useful passage) for the case's message, after its history
    (each message of it a turn before, recalled as the app would: spending what it recalled)."""
    from ccm_tui.core.search import RECALL_BEFORE, Evidence
    from ccm_tui.core.turn.recall import RecallMemory, SkipRule

    memory = RecallMemory()
    evidence = Evidence() if now else RECALL_BEFORE
    hits: list = []
    for turn, message in enumerate((*case.history, case.message)):

        def spent(source: str, log: str, line: int, turn: int = turn, message: str = message) -> bool:
            return now and memory.spent("ambient" if source == "ambient" else log, line, turn, message)

        def needed(source: str, log: str, e: Evidence) -> float:
            return e.imported if log in imported else e.words

        hits = index.recall(message, skip=SkipRule(spent, needed), evidence=evidence)
        if hits:
            memory.note(tuple(hits), turn, message)
    right = case.useful and any(case.passage in content for h in hits for _n, _r, content in h.messages)
    return bool(hits), right


def turn_figures(cases: list[TurnCase], indexes: dict[str, EffortIndex], imported: set[str], now: bool) -> str:
    fired = right = 0
    wrong: list[str] = []
    took: list[float] = []
    for case in cases:
        start = time.perf_counter()
        recalled, good = run_turn_case(case, indexes[case.session], imported, now)
        took.append((time.perf_counter() - start) * 1000.0 / (1 + len(case.history)))
        fired += recalled
        right += good
        if recalled and not good:
            wrong.append(case.message)
    useful = sum(c.useful for c in cases)
    precision = right / fired if fired else 1.0
    text = (
        f"precision {precision:5.3f}  recall {right / useful if useful else 0:5.3f}  "
        f"(recalled {fired}, right {right}, useful cases {useful} of {len(cases)}; "
        f"p50 {percentile(took, 0.5):.2f} ms, p95 {percentile(took, 0.95):.2f} ms a lookup)"
    )
    return text + "".join(f"\n      wrong: {m!r}" for m in wrong[:12])


def report_turns(data_file: Path | None) -> None:
    root = Path(tempfile.mkdtemp(prefix="ccm-bench-recall-turns-"))
    indexes: dict[str, EffortIndex] = {}
    try:
        cases, indexes, imported = load_turn_cases(root, data_file)
        origins = Counter(c.origin for c in cases)
        print(f"Recall of turns: {len(cases)} labelled turns ({dict(origins)})")
        for label, now in (("before", False), ("now", True)):
            print(f"  {label:<7} {turn_figures(cases, indexes, imported, now)}")
        print("  by source (a wrong recall of a useful case: lines of the right talk, not the answer's):")
        for origin in origins:
            part = [c for c in cases if c.origin == origin]
            for label, now in (("before", False), ("now", True)):
                figures = turn_figures(part, indexes, imported, now).splitlines()[0]
                print(f"    {origin:<8} {label:<7} {figures}")
        unrelated = [c for c in cases if not c.useful]
        for label, now in (("before", False), ("now", True)):
            fired = sum(run_turn_case(c, indexes[c.session], imported, now)[0] for c in unrelated)
            print(f"  {label:<7} recalls for a message nothing answers: {fired} of {len(unrelated)}")
    finally:
        for index in indexes.values():
            index.close()
        shutil.rmtree(root, ignore_errors=True)


# --------------------------------------------------------------------------- main


def open_indexes(conversations: list[Conversation]) -> list[EffortIndex]:
    """The derived index of each conversation's session, brought up to date (as search_session does)."""
    indexes = []
    for c in conversations:
        index = EffortIndex(c.directory / DERIVED_FILE)
        EffortList(index.database, c.directory).catch_up()  # the effort rows the index reads, as a load brings them
        index.sync_session(c.directory)
        indexes.append(index)
    return indexes


def print_table(title: str, rows: list[tuple[str, Figures]]) -> None:
    print(title)
    print(f"{'':<34} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6}")
    for label, figures in rows:
        print(figures.row(label))


def mean_row(label: str, figures: Sequence[Figures]) -> str:
    n = len(figures)
    values = [sum(f.recall(k) for f in figures) / n for k in KS] + [sum(f.mrr for f in figures) / n]
    return f"{label:<34} " + " ".join(f"{v:6.3f}" for v in values)


def report_cv(
    cv: tuple[list[tuple[Weights, Figures]], Weights, Table], plain: list[Figures], before: list[Figures]
) -> None:
    folds, all_in, table = cv
    rows = []
    for c, (_, held) in enumerate(folds):
        rows.append((f"fold {c}: held out ({held.total} q)", held))
        rows.append((f"fold {c}: plain BM25", plain[c]))
        rows.append((f"fold {c}: before", before[c]))
    print_table("Leave-one-conversation-out cross-validation (each fold scored with weights chosen on the others):",
                rows)  # fmt: skip
    for c, (chosen, _) in enumerate(folds):
        print(f"  fold {c} chose: {describe(chosen)}")
    print(mean_row(f"mean over {len(folds)} held-out folds", [h for _, h in folds]))
    print(mean_row("mean, plain BM25", plain))
    print(mean_row("mean, before (chosen on all five)", before))
    print(f"  pooled held-out R@3 {total([h for _, h in folds]).recall(3):.3f}; {len(table.figures)} points searched")
    below = [c for c, (_, h) in enumerate(folds) if h.recall(3) < plain[c].recall(3)]
    print("held-out recall@3 below plain BM25 on folds: " + (", ".join(map(str, below)) or "none"))
    for label, w in (("chosen on all five", all_in), ("the defaults", Weights())):
        f = total(table(w))
        print(f"{label}: {describe(w)}: " + " ".join(f"R@{k} {f.recall(k):.3f}" for k in KS) + f" MRR {f.mrr:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("CCM_LOCOMO_DEV", _shared("data", "locomo-dev")))
    )
    parser.add_argument("--misses", type=int, default=0, metavar="N", help="print N questions missed at 3")
    parser.add_argument("--keep", type=Path, help="directory to write the sessions into and keep")
    parser.add_argument("--no-cv", action="store_true", help="skip the cross-validation (minutes)")
    parser.add_argument("--turns-only", action="store_true", help="only recall's precision on the labelled turns")
    parser.add_argument(
        "--captions", action="store_true", help="load the captions of shared photos too (LoCoMo's own rendering)"
    )
    args = parser.parse_args(argv)

    data_file = args.data / DATA_FILE if args.data.is_dir() else args.data
    report_turns(data_file if data_file.is_file() else None)
    if args.turns_only:
        return 0
    if not data_file.is_file():
        print(f"bench_recall: skipped, no LoCoMo development split at {data_file} (use --data or $CCM_LOCOMO_DEV)")
        return 0
    data = json.loads(data_file.read_text(encoding="utf-8"))
    root = args.keep or Path(tempfile.mkdtemp(prefix="ccm-bench-recall-"))
    indexes: list[EffortIndex] = []
    try:
        conversations, questions = load_conversations(data, root, captions=args.captions)
        for c in conversations:  # build the derived index first: latencies are of searches alone
            search_session(c.directory, "warm up", 1)
        misses: list[tuple] = []

        def product(q: Question) -> list[str]:
            return [h.id for h in search_session(conversations[q.conversation].directory, q.text, 10)]

        references = [PlainBM25(c.documents) for c in conversations]

        def plain_rank(q: Question) -> list[str]:
            return references[q.conversation].rank(q.text)

        rows = [
            evaluate("ccm-tui search", questions, product, misses),
            evaluate("plain BM25 (reference)", questions, plain_rank),
        ]
        indexes = open_indexes(conversations)

        def before_rank(q: Question) -> list[str]:
            return [h.id for h in indexes[q.conversation].search(q.text, 10, weights=BEFORE)]

        before = per_conversation("before", questions, before_rank)
        plain = per_conversation("plain", questions, plain_rank)
        product_folds = per_conversation("ccm-tui search", questions, product)
        cv = None if args.no_cv else cross_validate(indexes, questions, progress=True)
    finally:
        for index in indexes:
            index.close()
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    efforts = sum(len(c.documents) for c in conversations)
    print(
        f"LoCoMo development split: {len(conversations)} conversations, {efforts} efforts, {len(questions)} questions"
    )
    print(f"{'ranking (all in)':<34} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6} {'p50 ms':>8} {'p95 ms':>8}")
    for f in [*rows, total(before)]:
        latency = f" {percentile(f.latencies, 0.5):8.2f} {percentile(f.latencies, 0.95):8.2f}" if f.latencies else ""
        print(f.row() + latency)
    gap = rows[0].recall(3) - rows[1].recall(3)
    print(f"recall@3 against the reference: {gap:+.3f}")
    print("recall@3 per conversation (all in):")
    for label, figs in (("ccm-tui search", product_folds), ("plain BM25", plain), ("before", before)):
        print(f"  {label:<32} " + " ".join(f"{f.recall(3):6.3f}" for f in figs))
    if cv is not None:
        report_cv(cv, plain, before)
    for conversation, text, evidence, top in misses[: args.misses]:
        print(f"  missed [{conversation}] {text!r} evidence {evidence} top3 {top}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
