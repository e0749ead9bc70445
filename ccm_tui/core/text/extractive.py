"""Offline extractive summaries: the most informative sentences, within a token cap.

Used for effort summaries and compaction checkpoints when no model is
configured (the replay), and when the summary model fails or is missing as a user
concludes an effort by hand or ambient chat is folded into an effort. Input is the text the core's summarizer would send to a model
(``Effort: <title>`` then ``USER: …`` / ``ASSISTANT: …`` blocks, or the
combined part-summaries of a long log). The method:

1. split into sentences (code blocks, tables, log dumps and other
   symbol-heavy lines are dropped; their file names and identifiers still feed
   the key terms);
2. weigh words by TF-IDF over the sentences (a term frequent in the effort
   but not in every sentence carries the topic);
3. score a sentence by the weight of its distinct words (length-normalised),
   with bonuses for key terms (paths, file names, CamelCase identifiers,
   versions, numbers), for the user's own requests (they say what the effort
   was about), and for the opening request and the last reply (what was asked,
   how it ended);
4. the opening request's first sentence leads (what the effort was about);
   the rest is picked greedily with a redundancy penalty (maximal marginal
   relevance) until ~80% of the cap, and put back in conversation order;
5. spend the rest on ``Key terms: …`` — names, paths and numbers the picked
   sentences did not mention — so search can still find them.

The result never exceeds the cap (counted with the session's tokenizer) and is
deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from .tokens import TokenCounter, cap_tokens
from .words import FENCE_RE, content_words

ROLE_RE = re.compile(r"^(USER|ASSISTANT|SYSTEM): ?", re.MULTILINE)
PART_RE = re.compile(r"^Part (\d+): ", re.MULTILINE)
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9À-Ž])")
MARKUP_RE = re.compile(r"^\s*(?:[#>*+-]+|\d+[.)])\s+|[*`]+|(?<!\w)_{1,2}(?=\w)|(?<=\w)_{1,2}(?!\w)")
KEY_TERMS_RE = re.compile(r"Key terms: [^\n]*?\.(?=\s|$)")
LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
CODE_START_RE = re.compile(
    r"^\s*(?:def|class|return|import|from|if|elif|else|for|while|try|except|const|let|var|"
    r"public|private|protected|static|function|async|await|using|namespace|#include)\b"
)
CODE_CHARS = set("=(){}[];<>")
KEY_TERM_RES = (
    re.compile(r"(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b"),  # paths with a file name
    re.compile(
        r"\b[\w-]+\.(?:py|js|ts|tsx|jsx|cs|java|kt|kts|go|rs|rb|php|c|h|cpp|hpp|swift|md|json|ya?ml|toml|"
        r"xml|html|css|scss|sh|ps1|bat|gradle|sql|db|m3u8?|txt|ini|cfg|lock|env)\b"
    ),
    re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b"),  # CamelCase
    re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b"),  # snake_case identifiers
    re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b"),  # versions, decimals
    re.compile(r"`([^`\n]{2,40})`"),  # inline code
    re.compile(r"(?<![\w-])--?[a-z][\w-]{2,}\b"),  # command-line flags
)
NUMBER_RE = re.compile(r"\d+(?:\.\d+)+")
MIN_WORDS = 4
MAX_SENTENCE_CHARS = 240
SENTENCE_SHARE = 0.8
REDUNDANCY = 0.7


@dataclass
class Sentence:
    index: int
    text: str
    role: str
    message: int
    terms: set[str]
    score: float = 0.0


def _is_noise(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return True
    if stripped.startswith(("|", "```", "    ", "\t", "$ ", "> ", "+", "@@", "diff ", "at ", "Traceback")):
        return True
    letters = sum(ch.isalpha() for ch in stripped)
    if letters < 0.55 * len(stripped):
        return True
    return bool(CODE_START_RE.match(stripped)) or sum(ch in CODE_CHARS for ch in stripped) > 0.04 * len(stripped) + 1


def _clean(sentence: str) -> str:
    text = MARKUP_RE.sub("", LINK_RE.sub(r"\1", sentence))
    text = " ".join(text.split()).strip(" -–—:;,")
    if len(text) > MAX_SENTENCE_CHARS:
        cut = text[:MAX_SENTENCE_CHARS]
        text = cut[: cut.rfind(" ")].rstrip(",;:.…") + "…"
    return text


def split_messages(body: str) -> tuple[str, list[tuple[str, str]]]:
    """(title, [(role, text)]) from a summarizer prompt body."""
    title = ""
    first, _, rest = body.partition("\n")
    if first.startswith("Effort: "):
        title = first[len("Effort: ") :].strip()
        body = rest
    matches = list(ROLE_RE.finditer(body))
    if matches:
        out = []
        for m, nxt in zip(matches, matches[1:] + [None]):
            out.append((m.group(1).lower(), body[m.end() : nxt.start() if nxt else len(body)]))
        return title, out
    parts = list(PART_RE.finditer(body))
    if parts:
        return title, [
            ("summary", body[m.end() : n.start() if n else len(body)]) for m, n in zip(parts, parts[1:] + [None])
        ]
    return title, [("text", body)]


def sentences_of(messages: list[tuple[str, str]]) -> list[Sentence]:
    out: list[Sentence] = []
    seen: set[str] = set()
    for mi, (role, text) in enumerate(messages):
        if role == "system":
            continue
        text = FENCE_RE.sub("\n", text)
        for line in text.splitlines():
            if _is_noise(line):
                continue
            for piece in SENTENCE_END_RE.split(line.strip()):
                cleaned = _clean(piece)
                terms = set(content_words(cleaned))
                if len(cleaned.split()) < MIN_WORDS or len(terms) < 2:
                    continue
                key = cleaned.lower()
                if key in seen:
                    continue
                seen.add(key)
                out.append(Sentence(len(out), cleaned, role, mi, terms))
    return out


def key_terms(text: str, limit: int = 40) -> list[str]:
    """Identifiers worth keeping verbatim: paths, file names, CamelCase, snake_case, versions, code."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for rx in KEY_TERM_RES:
        for m in rx.finditer(text):
            term = (m.group(1) if m.groups() else m.group(0)).strip().strip(".,;:")
            if len(term) < 3 or len(term) > 60 or term.count(" ") > 3:
                continue
            counts[term] += 1
            first_seen.setdefault(term, m.start())
    # a bare decimal (53.848) is only a key term when it recurs (a version like 3.13 does)
    counts = Counter({t: c for t, c in counts.items() if c > 1 or not NUMBER_RE.fullmatch(t)})
    ranked = sorted(counts, key=lambda t: (-counts[t], first_seen[t], t))
    out: list[str] = []
    for term in ranked:
        low = term.lower()
        if any(low in o.lower() for o in out):
            continue
        out.append(term)
        if len(out) >= limit:
            break
    return out


def _weights(sents: list[Sentence]) -> dict[str, float]:
    tf: Counter[str] = Counter()
    df: Counter[str] = Counter()
    for s in sents:
        df.update(s.terms)
    for s in sents:
        tf.update(s.terms)
    n = len(sents)
    return {t: math.log(1 + tf[t]) * (math.log((1 + n) / (1 + df[t])) + 1.0) for t in tf}


def _score(sents: list[Sentence], messages: list[tuple[str, str]], keys: list[str]) -> None:
    weights = _weights(sents)
    key_set = {k.lower() for k in keys[:20]}
    last_assistant = max((i for i, (r, _) in enumerate(messages) if r == "assistant"), default=-1)
    first_user = min((i for i, (r, _) in enumerate(messages) if r == "user"), default=-1)
    for s in sents:
        base = sum(weights[t] for t in s.terms) / math.sqrt(len(s.terms) + 2)
        low = s.text.lower()
        bonus = 1.0 + 0.25 * min(3, sum(1 for k in key_set if k in low))
        if any(ch.isdigit() for ch in s.text):
            bonus += 0.1
        if s.role == "user":
            bonus += 0.3
        if s.message == first_user:
            bonus += 0.4
        if s.message == last_assistant:
            bonus += 0.3
        s.score = base * bonus


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def summarize(body: str, max_tokens: int, counter: TokenCounter, *, title: str | None = None) -> str:
    """An extractive summary of a summarizer prompt body in at most ``max_tokens`` tokens."""
    max_tokens = max(16, int(max_tokens))
    found_title, messages = split_messages(body)
    title = (title or found_title).strip()
    if title:  # part summaries of a long log each start with the title: say it once
        messages = [(role, text.replace(f"{title}: ", " ")) for role, text in messages]
    messages = [(role, KEY_TERMS_RE.sub(" ", text)) for role, text in messages]
    sents = sentences_of(messages)
    keys = key_terms(FENCE_RE.sub(lambda m: " " + m.group(0) + " ", body))
    head = f"{title}: " if title else ""
    if not sents:
        text = head + ("Key terms: " + ", ".join(keys[:12]) + "." if keys else "(nothing substantive was said)")
        return cap_tokens(text, max_tokens, counter)
    _score(sents, messages, keys)
    sentence_budget = int(max_tokens * SENTENCE_SHARE) - counter.count_text(head)
    chosen: list[Sentence] = []
    used = 0
    candidates = list(sents)
    # The lead: the opening request says what the effort was about; it goes in first.
    lead = sents[0] if sents[0].role in ("user", "summary", "text") and sents[0].message == 0 else None
    if lead is not None and counter.count_text(lead.text) <= sentence_budget // 2:
        chosen.append(lead)
        candidates.remove(lead)
        used += counter.count_text(lead.text) + 1
    while candidates:

        def mmr(s: Sentence) -> tuple[float, int]:
            penalty = max((_overlap(s.terms, c.terms) for c in chosen), default=0.0)
            return (s.score * (1 - REDUNDANCY * penalty), -s.index)

        best = max(candidates, key=mmr)
        candidates.remove(best)
        cost = counter.count_text(best.text) + 1
        if used + cost > sentence_budget:
            if sentence_budget - used < 12:
                break
            continue
        chosen.append(best)
        used += cost
    chosen.sort(key=lambda s: s.index)
    parts = []
    for s in chosen:
        t = s.text
        parts.append(t if t[-1:] in ".!?…" else t + ".")
    text = head + " ".join(parts)
    low = text.lower()
    extra = [k for k in keys if k.lower() not in low]
    if extra:
        added: list[str] = []
        for k in extra:
            trial = text + " Key terms: " + ", ".join(added + [k]) + "."
            if counter.count_text(trial) > max_tokens:
                break
            added.append(k)
        if added:
            text += " Key terms: " + ", ".join(added) + "."
    return cap_tokens(text, max_tokens, counter)
