"""Ranked, incremental, persistent full-text search over a session's efforts.

The SQLite file and its recovery (:mod:`.database`), the incremental ingest of
the manifest and the JSONL logs (:mod:`.ingest`), and the ranking: query
processing (:mod:`.query`), the score of one effort (:mod:`.scoring`), reading
postings and ordering (:mod:`.ranking`), snippets and passages
(:mod:`.results`). The design and the measurements behind it are in
``docs/SEARCH.md``.
"""

from __future__ import annotations

from ._database import IN_MEMORY, SearchIndexBusy, SearchIndexError
from ._ingest import IndexIngest
from ._ranking import IndexRanking, SearchHit, query_terms
from ._rare_words import IndexRecall, RecallHit
from ._results import Marked, Span, without_folded
from ._scoring import Weights

__all__ = [
    "IN_MEMORY",
    "EffortIndex",
    "Marked",
    "RecallHit",
    "SearchHit",
    "SearchIndexBusy",
    "SearchIndexError",
    "Span",
    "Weights",
    "query_terms",
    "without_folded",
]


class EffortIndex(IndexIngest, IndexRanking, IndexRecall):
    """A persistent, incrementally updated BM25 search index over a session's efforts.

    The index lives in one SQLite file (a session keeps it at
    ``<session>/search.sqlite``). It is derived data: deleting it loses nothing,
    the next :meth:`sync_session` rebuilds it from ``manifest.yaml`` and the
    ``efforts/<id>.jsonl`` logs. Thread-safe (one lock around the connection).
    Use as a context manager or call :meth:`close`.
    """
