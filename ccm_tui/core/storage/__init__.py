"""The durable write layer: appends that are fsynced before they are reported, whole-file replacements
a crash cannot tear, tolerant readers (a torn last line is reported, not fatal), the session's
append-only event log (``events.jsonl``) with the names of its events, and :mod:`.derived`, the one
derived database of a session (``derived.sqlite``: rebuilt from the record when missing, old, foreign
or corrupt). Imports only ``ccm_tui.config``, ``ccm_tui.atomic_file`` and ``ccm_tui.errors``.
"""
