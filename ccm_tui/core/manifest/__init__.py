"""The effort list on disk: the :class:`~.effort.Effort` record and its ids, ``manifest.yaml`` (its text,
read fast and rewritten by byte ranges), the journal of saved entries in ``events.jsonl``, the
derived ``.manifest.sqlite`` catalog, and the table of the efforts an open session holds. Imports
:mod:`..storage` and :mod:`..text` only.
"""
