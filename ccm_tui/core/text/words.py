"""Words for the offline segmenter and summarizer: tokenizing, stopwords, light stemming.

Deliberately small and dependency-free: lowercase word tokens (any script),
a stopword list for English chat and coding-agent filler (plus a few Czech,
German and Spanish function words, since real transcripts are multilingual),
and a crude plural stripper. Everything here is deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

WORD_RE = re.compile(r"[^\W\d_][\w'’-]*[^\W_]|[^\W\d_]", re.UNICODE)
FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)

STOPWORDS = frozenset(
    """
    a about above after again against all almost also although always am among an and another any anyone
    anything are aren't around as at away back be because been before being below best better between both
    but by can can't cannot could couldn't did didn't do does doesn't doing don't done down during each
    either else enough even ever every everything few for from further get gets getting give given go goes
    going gone good got great had hadn't has hasn't have haven't having he her here hers herself him himself
    his how however i i'd i'll i'm i've if in into is isn't it it's its itself just keep know last least
    less let let's like likely lot make makes making many may maybe me might mine more most much must my
    myself need needs never new next no nor not nothing now of off often ok okay on once one only onto or
    other others our ours ourselves out over own per perhaps please put quite rather really right said same
    say see seem seems shall she should shouldn't show since so some something still such sure take than
    thank thanks that that's the their theirs them themselves then there there's these they they're thing
    things think this those though through thus to too try trying two under until up upon us use used using
    very via want wants was wasn't way we we'll we're we've well were weren't what what's when where whether
    which while who whom whose why will with within without won't would wouldn't yes yet you you'd you'll
    you're you've your yours yourself yourselves yeah sorry hey hi hello sweet cool good awesome nice
    let lets go got gonna wanna ll ve re didn doesn isn wasn don won couldn shouldn wouldn
    here's there's it'll that'll i’m it’s let’s don’t can’t
    user assistant agent claude tool tools output result results file files line lines code run running
    now first also again fine work works worked working looks look looking want wanted able actually
    already instead currently check checked checking update updated updating add added adding change
    changes changed create created creating implement implemented implementing fix fixed fixing issue
    issues problem problems step steps
    je to se na že ale pro jak tak jsem jsi jsou bude byl byla bylo nebo když jako které který která
    mám máme mi ti tu ten ta co už jen jestli potřebuju pojdme pokračujme ted teď
    der die das und ist nicht ein eine mit auf für von zu den dem des
    el la los las que de en por para con una uno como más pero
    """.split()
)


def strip_code(text: str) -> str:
    """Text with fenced code blocks removed (they drown the topic words in identifiers)."""
    return FENCE_RE.sub(" ", text)


def stem(word: str) -> str:
    """A very light stemmer: plural -s/-es, so 'tests' and 'test' meet."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Content words of a text: lowercase, stopwords and 1–2 letter words dropped, stemmed."""
    out = []
    for match in WORD_RE.finditer(text.lower()):
        w = match.group(0).strip("'’-")
        if len(w) < 3 or w in STOPWORDS:
            continue
        out.append(stem(w))
    return out


def document_frequencies(docs: Iterable[Iterable[str]]) -> Counter[str]:
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(set(doc))
    return df


def idf(df: Counter[str], n_docs: int) -> dict[str, float]:
    """Smoothed inverse document frequency: log((1 + N) / (1 + df)) + 1."""
    return {term: math.log((1 + n_docs) / (1 + count)) + 1.0 for term, count in df.items()}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    dot = sum(v * b.get(k, 0.0) for k, v in a.items())
    if dot == 0.0:
        return 0.0
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0
