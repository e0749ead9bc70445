"""Ranked, incremental, persistent full-text search over a session's efforts.

The SQLite file and its recovery (:mod:`.database`), the incremental ingest of
the manifest and the JSONL logs (:mod:`.ingest`), and the ranking: query
processing (:mod:`.query`), the score of one effort (:mod:`.scoring`), reading
postings and ordering (:mod:`.ranking`), snippets and passages
(:mod:`.results`). The design and the measurements behind it are in
``docs/SEARCH.md``.
"""

from __future__ import annotations

from .database import SearchIndexBusy, SearchIndexError
from .ingest import IndexIngest
from .ranking import IndexRanking, SearchHit, query_terms
from .recall import IndexRecall, RecallHit
from .results import without_folded
from .scoring import Weights

__all__ = [
    "EffortIndex",
    "RecallHit",
    "SearchHit",
    "SearchIndexBusy",
    "SearchIndexError",
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
