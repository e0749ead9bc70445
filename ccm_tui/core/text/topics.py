"""Offline topic segmentation of a conversation (TextTiling over turns).

Hearst's TextTiling, with a *turn* as the unit instead of a pseudo-sentence:

1. each turn becomes a TF-IDF word vector; the user's words weigh more than the
   agent's (the user's requests are what change topic; agent replies are long
   and full of incidental identifiers), code blocks are ignored;
2. at every gap between two turns, the cosine similarity of the summed vectors
   of the ``k`` turns before and the ``k`` turns after the gap ("block
   comparison"); no smoothing (Hearst smooths pseudo-sentence gaps, but a chat has
   few turns and smoothing washed real dips out on the corpus);
3. a depth score per gap: how far the similarity dips below the nearest peaks
   on either side (climbing while it rises);
4. boundaries at the deepest valleys whose depth passes a cutoff
   (mean − σ/2 of the valley depths, Hearst's liberal cutoff, floored), keeping
   every segment at least ``min_len`` turns long, and never cutting before a
   request too short to open a topic ("yes", "retry", "do it").

On the corpus, against the hand-placed boundaries in ``benchmarks/boundaries``,
the mean Pk error is 0.33 (one segment for everything: 0.41; evenly spaced
boundaries, told the true count: 0.46) — useful, not a substitute for a model
or for hand boundaries. Pk was the only thing tuned on the corpus, coarsely
(block size, cutoff, smoothing, user weight).

The segments cover every turn (so no turn falls to the ambient log) and each
is named after its most distinctive words (TF-IDF of the segment against the
other segments). Deterministic: ties break on position.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from .words import COMMON_WORDS, content_words, cosine, document_frequencies, idf, stem, strip_code, written_words

USER_WEIGHT = 3.0
AGENT_WORD_LIMIT = 2_000  # content words of a reply that count (giant tool dumps would drown the user)
CUTOFF_STD = 0.5  # Hearst's liberal cutoff: mean − σ/2 of the valley depths
MIN_DEPTH = 0.05  # a valley shallower than this is noise, whatever the statistics say
NAME_WORDS = 3
NAME_AGENT_WEIGHT = 0.05  # names come from what the user asked; reply words only break ties
CONTINUATION_WORDS = 2  # fewer content words than this in the request: it continues the topic
SMOOTH_RADIUS = 0  # Hearst smooths sentence gaps; turn gaps are few, and smoothing washed out real dips


@dataclass(frozen=True)
class TurnText:
    user: str
    agent: str = ""


@dataclass(frozen=True)
class EffortSpan:
    id: str
    first_turn: int
    last_turn: int
    name: str | None = None

    @property
    def turns(self) -> int:
        return self.last_turn - self.first_turn + 1


def _turn_terms(turn: TurnText) -> tuple[list[str], list[str]]:
    return content_words(strip_code(turn.user)), content_words(strip_code(turn.agent))[:AGENT_WORD_LIMIT]


def turn_vectors(turns: Sequence[TurnText]) -> list[dict[str, float]]:
    """TF-IDF vectors, one per turn (user words weighted ``USER_WEIGHT``)."""
    terms = [_turn_terms(t) for t in turns]
    weights = idf(document_frequencies(u + a for u, a in terms), len(turns))
    vectors = []
    for user, agent in terms:
        vec: dict[str, float] = {}
        for source, factor in ((user, USER_WEIGHT), (agent, 1.0)):
            for term, tf in Counter(source).items():
                vec[term] = vec.get(term, 0.0) + factor * (1.0 + math.log(tf)) * weights[term]
        vectors.append(vec)
    return vectors


def _block(vectors: Sequence[dict[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for vec in vectors:
        for term, value in vec.items():
            out[term] = out.get(term, 0.0) + value
    return out


def gap_similarities(vectors: Sequence[dict[str, float]], block: int) -> list[float]:
    """Similarity across each gap ``g`` (between turn ``g`` and ``g + 1``, 0-based)."""
    n = len(vectors)
    return [
        cosine(_block(vectors[max(0, g - block + 1) : g + 1]), _block(vectors[g + 1 : g + 1 + block]))
        for g in range(n - 1)
    ]


def smooth(values: Sequence[float], radius: int = 1) -> list[float]:
    out = []
    for i in range(len(values)):
        window = values[max(0, i - radius) : i + radius + 1]
        out.append(sum(window) / len(window))
    return out


def depth_scores(scores: Sequence[float]) -> list[float]:
    """Hearst's depth: (left peak − score) + (right peak − score), climbing while scores rise.
    Only valleys (local minima) get a depth; other gaps get 0."""
    n = len(scores)
    depths = [0.0] * n
    for i, s in enumerate(scores):
        left_ok = i == 0 or scores[i - 1] >= s
        right_ok = i == n - 1 or scores[i + 1] >= s
        if not (left_ok and right_ok):
            continue
        left = s
        j = i - 1
        while j >= 0 and scores[j] >= left:
            left = scores[j]
            j -= 1
        right = s
        j = i + 1
        while j < n and scores[j] >= right:
            right = scores[j]
            j += 1
        depths[i] = (left - s) + (right - s)
    return depths


def is_continuation(turn: TurnText) -> bool:
    """A request too short to open a topic ("yes", "do it", "retry", "let's continue")."""
    return len(content_words(strip_code(turn.user))) < CONTINUATION_WORDS


def choose_boundaries(
    depths: Sequence[float], n_turns: int, min_len: int, blocked: Sequence[bool] | None = None
) -> list[int]:
    """Gaps (0-based) to cut at: deepest valleys first, above the cutoff, segments ≥ ``min_len``.
    ``blocked[g]`` forbids a cut at gap ``g`` (the turn after it is a mere continuation)."""
    valleys = [d for g, d in enumerate(depths) if d > 0 and not (blocked and blocked[g])]
    if not valleys:
        return []
    mean = sum(valleys) / len(valleys)
    std = math.sqrt(sum((d - mean) ** 2 for d in valleys) / len(valleys))
    cutoff = max(MIN_DEPTH, mean - CUTOFF_STD * std)
    cuts: list[int] = []
    for gap in sorted(range(len(depths)), key=lambda g: (-depths[g], g)):
        if depths[gap] < cutoff:
            break
        if blocked and blocked[gap]:
            continue
        edges = sorted(cuts + [gap])
        starts = [0] + [g + 1 for g in edges]
        ends = [g + 1 for g in edges] + [n_turns]
        if all(e - s >= min_len for s, e in zip(starts, ends)):
            cuts = edges
    return cuts


def default_block(n_turns: int) -> int:
    return 2 if n_turns < 40 else 3


def default_min_len(n_turns: int) -> int:
    return 2 if n_turns < 40 else 3


def _ascii_slug(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-")


def surface_forms(turns: Sequence[TurnText]) -> dict[str, str]:
    """The word as the user wrote it most often, for each stemmed term (names read as written:
    "tomatoes", not the stem "tomatoe")."""
    seen: dict[str, Counter[str]] = {}
    for turn in turns:
        for word in written_words(strip_code(turn.user)):
            seen.setdefault(stem(word), Counter())[word] += 1
    return {term: counts.most_common(1)[0][0] for term, counts in seen.items()}


# Words that ask about a topic without naming it ("how long", "how big", "what kind", "any tips"):
# never a name's word while the segment has others (issue 38: "sourdough-bake-long").
NAME_FILLER_WORDS = """
    long short big small large huge tiny high low old young fast slow quick early late easy hard
    kind kinds sort type types tip tips idea ideas advice option options way ways thing stuff
    good bad best worst better worse nice ok okay fine pretty real actual exact exactly usual usually
    need needs want wants know knows help helps tell explain show give make made get got find
    should would could might must can will shall also still just even really much many more most
    enough long-term question questions answer answers hello thanks please
"""


@cache
def _name_filler() -> frozenset[str]:
    return frozenset(stem(w) for w in (*COMMON_WORDS, *NAME_FILLER_WORDS.split())) | SMALL_TALK_WORDS


def name_segments(turns: Sequence[TurnText], ranges: Sequence[tuple[int, int]]) -> list[str]:
    """A slug per segment from its most distinctive words (the user's words first); filler words
    ("long" of "how long", small talk's words) only when the segment has no others."""
    filler = _name_filler()
    docs = []
    for first, last in ranges:
        counts: dict[str, float] = {}
        for turn in turns[first - 1 : last]:
            user, agent = _turn_terms(turn)
            for term in user:
                counts[term] = counts.get(term, 0.0) + 1.0
            for term in agent:
                counts[term] = counts.get(term, 0.0) + NAME_AGENT_WEIGHT
        docs.append(counts)
    weights = idf(document_frequencies(docs), len(docs))
    surface = surface_forms(turns)
    names: list[str] = []
    taken: set[str] = set()
    for index, counts in enumerate(docs):
        ranked = sorted(counts, key=lambda t: (t in filler, -math.log1p(counts[t]) * weights[t], t))
        parts: list[str] = []
        for term in ranked:
            slug = _ascii_slug(surface.get(term, term))
            if len(slug) < 3 or slug in parts or any(slug in p or p in slug for p in parts):
                continue
            parts.append(slug)
            if len(parts) == NAME_WORDS:
                break
        base = "-".join(parts)[:56].strip("-") or f"topic-{index + 1}"
        name, n = base, 2
        while name in taken:
            name = f"{base}-{n}"
            n += 1
        taken.add(name)
        names.append(name)
    return names


def segment(turns: Sequence[TurnText], *, block: int | None = None, min_len: int | None = None) -> list[EffortSpan]:
    """Split turns 1..n into contiguous topic efforts covering every turn."""
    n = len(turns)
    if n == 0:
        return []
    block = block or default_block(n)
    min_len = min_len or default_min_len(n)
    cuts: list[int] = []
    if n >= 2 * min_len:
        scores = gap_similarities(turn_vectors(turns), block)
        if SMOOTH_RADIUS:
            scores = smooth(scores, SMOOTH_RADIUS)
        blocked = [is_continuation(turns[g + 1]) for g in range(n - 1)]
        cuts = choose_boundaries(depth_scores(scores), n, min_len, blocked)
    starts = [1] + [g + 2 for g in cuts]
    ends = [g + 1 for g in cuts] + [n]
    ranges = list(zip(starts, ends))
    names = name_segments(turns, ranges)
    return [EffortSpan(id=name, first_turn=a, last_turn=b) for name, (a, b) in zip(names, ranges)]


MERGE_SIMILARITY = 0.2  # neighbouring topics at least this alike are one topic


def topics_of(turns: Sequence[TurnText], *, min_len: int = 2, keep_tail: bool = False) -> list[EffortSpan]:
    """Topics of a live chat for the app's effort proposals: :func:`segment`, then neighbours that
    share their words merged (TextTiling over few short turns cuts too often) and topics shorter
    than ``min_len`` turns joined to the one before (an aside is not a topic of its own) — except,
    with ``keep_tail``, the last one: it may be a new topic just starting."""
    spans = segment(turns)
    if len(spans) < 2:
        return spans
    vectors = turn_vectors(turns)
    ranges = [(span.first_turn, span.last_turn) for span in spans]
    merged = True
    while merged and len(ranges) > 1:
        merged = False
        blocks = [_block(vectors[a - 1 : b]) for a, b in ranges]
        for i in range(len(ranges) - 1):
            tail = keep_tail and i + 1 == len(ranges) - 1
            short = not tail and ranges[i + 1][1] - ranges[i + 1][0] + 1 < min_len
            if short or cosine(blocks[i], blocks[i + 1]) >= MERGE_SIMILARITY:
                ranges[i : i + 2] = [(ranges[i][0], ranges[i + 1][1])]
                merged = True
                break
    names = name_segments(turns, ranges)
    return [EffortSpan(id=name, first_turn=a, last_turn=b) for name, (a, b) in zip(names, ranges)]


def last_turn_fits(turns: Sequence[TurnText], span: EffortSpan, threshold: float = 0.05) -> bool:
    """Whether the last turn shares words with the rest of its topic (a new topic may be starting)."""
    if span.turns < 2:
        return True
    vectors = turn_vectors(turns)
    rest = _block(vectors[span.first_turn - 1 : span.last_turn - 1])
    return cosine(vectors[span.last_turn - 1], rest) >= threshold


# Words of small talk: they recur across jokes, greetings and one-off questions without making them one topic.
SMALL_TALK_WORDS = frozenset(
    stem(w)
    for w in """
    joke jokes pun puns riddle riddles funny laugh laughing haha hahaha lol lmao rofl fact facts trivia random
    bored fun interesting wow amazing tell give mean means meaning say word words spell question questions
    answer day days today tonight tomorrow yesterday morning evening night week weekend time feel feeling
    fine tired guess wonder wondering quick curious favorite favourite
    """.split()
)
REFERRING_WORDS = frozenset("it its that this these those them they there he she him her his same".split())
FOLLOW_UP_WORDS = 3  # a request with fewer content words and a word pointing back follows up the one before
LINK_AGENT_WORDS = 40  # content words of a reply a later request may pick up (a long reply shares by chance)


def _topic_words(text: str, limit: int | None = None) -> set[str]:
    found = [w for w in content_words(strip_code(text)) if w not in SMALL_TALK_WORDS]
    return set(found[:limit] if limit is not None else found)


def _follows_up(user: str) -> bool:
    """A short request pointing back at the last answer ("how long should I bake it?", "how many coats
    will it need?"): a word or two of content and a word that points back. Without content it is no
    evidence ("what day is it?", "good one")."""
    said = set(written_words(user))
    return 0 < len(_topic_words(user)) < FOLLOW_UP_WORDS and bool(said & REFERRING_WORDS)


def sustained(turns: Sequence[TurnText], min_turns: int) -> bool:
    """Whether the last turn belongs to a topic held over at least ``min_turns`` turns: turns linked
    by content words (a request picks up words of an earlier request or reply — not the words of
    small talk, :data:`SMALL_TALK_WORDS`) or by following up the answer before, at least one link by
    words. A run of jokes, greetings and one-off questions is not a topic, even when two of them
    happen to share a word."""
    n = len(turns)
    if n < min_turns:
        return False
    users, heard, root = _linked(turns)
    last = root(n - 1)
    members = [i for i in range(n) if root(i) == last]
    return len(members) >= min_turns and _linked_by_words(users, heard, members)


def holds_topic(turns: Sequence[TurnText], min_turns: int) -> bool:
    """Whether ``turns`` are mostly one topic: a group of them linked as :func:`sustained` links them,
    at least ``min_turns`` long and at least half of them. A run of small talk (greetings, a unit
    conversion, a joke — where two turns may share a word by chance) is not."""
    users, heard, root = _linked(turns)
    groups: dict[int, list[int]] = {}
    for i in range(len(turns)):
        groups.setdefault(root(i), []).append(i)
    need = max(min_turns, (len(turns) + 1) // 2)
    return any(len(m) >= need and _linked_by_words(users, heard, m) for m in groups.values())


def goes_on(before: Sequence[TurnText], after: Sequence[TurnText]) -> bool:
    """Whether ``after`` goes on with the topic of ``before``: at least half its requests pick up words
    of the requests before it ("sourdough starter" … "sourdough banneton": one topic, however the
    segmenter cut it). A switch proposed there would cut one topic in two."""
    said = set().union(*(_topic_words(t.user) for t in before)) if before else set()
    picked = sum(1 for t in after if _topic_words(t.user) & said)
    return bool(after) and 2 * picked >= len(after)


def _linked(turns: Sequence[TurnText]) -> tuple[list[set[str]], list[set[str]], Callable[[int], int]]:
    """Each turn's topic words, the words it heard (its request and the start of its reply), and the
    root of its group of linked turns."""
    n = len(turns)
    users = [_topic_words(t.user) for t in turns]
    heard = [users[i] | _topic_words(t.agent, LINK_AGENT_WORDS) for i, t in enumerate(turns)]
    group = list(range(n))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i in range(1, n):
        for j in range(i):
            if users[i] & heard[j]:
                group[root(i)] = root(j)
        if _follows_up(turns[i].user):
            group[root(i)] = root(i - 1)
    return users, heard, root


def _linked_by_words(users: list[set[str]], heard: list[set[str]], members: list[int]) -> bool:
    return any(users[i] & heard[j] for i in members for j in members if j < i)
