"""Ranked, incremental, persistent full-text search over a session's efforts.

:class:`EffortIndex` (:mod:`._index`) is the one object callers hold; it is made of parts that share
one database: the session's ``derived.sqlite`` (:mod:`._database` over
:mod:`~ccm_tui.core.storage.derived`), the incremental ingest of the
manifest and the JSONL logs (:mod:`._ingest`, the ambient log in :mod:`._ambient`, records as stored
in :mod:`._records`), and the ranking: query processing (:mod:`._query`, unspaced scripts in
:mod:`._unspaced`), the score of one effort (:mod:`._scoring`), reading postings and ordering
(:mod:`._ranking`), snippets and passages (:mod:`._results`); recall's rare-word lookup is
:mod:`._rare_words`. :mod:`.sync` keeps an index in step with its session. The design and the
measurements behind it are in ``docs/SEARCH.md``. Imports :mod:`..session` and below.
"""

from __future__ import annotations

from ._database import IN_MEMORY, DerivedBusy, DerivedError
from ._index import EffortIndex
from ._query import query_terms
from ._rare_words import BEFORE as RECALL_BEFORE
from ._rare_words import Evidence, RecallHit, word_places
from ._results import Marked, SearchHit, Span, without_folded
from ._scoring import Weights

__all__ = [
    "IN_MEMORY",
    "RECALL_BEFORE",
    "EffortIndex",
    "Evidence",
    "Marked",
    "RecallHit",
    "SearchHit",
    "DerivedBusy",
    "DerivedError",
    "Span",
    "Weights",
    "query_terms",
    "without_folded",
    "word_places",
]
