"""The effort list on disk: the :class:`~.effort.Effort` record and its ids, ``manifest.yaml`` (one
standard YAML dump per entry, cut back into its blocks: :mod:`.yaml_file`), and :mod:`.effort_list`,
the one keeper of the list: the journal of saved entries in ``events.jsonl`` (the commit point), the
catch-up that is the only way the derived rows change (for the writer and every reader alike), the
flush that rewrites the file, and the efforts an open session holds as objects. Imports
:mod:`..storage` and :mod:`..text` only.
"""
