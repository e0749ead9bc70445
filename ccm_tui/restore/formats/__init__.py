"""Transcript format parsers, one module per format.

Each module exposes ``NAME`` (the ``--format`` value), ``sniff(head, path)``
returning a 0..1 confidence from the first ~64 KB of text and the file name,
and ``parse(text)`` returning a :class:`~ccm_tui.restore.turns.ParsedTranscript`.
Register a new module in ``ccm_tui.restore.parse``.
"""
