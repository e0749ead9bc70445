"""The durable write layer: appends that are fsynced before they are reported, whole-file replacements
a crash cannot tear, tolerant readers (a torn last line is reported, not fatal), and the session's
append-only event log (``events.jsonl``) with the names of its events. Imports only
``ccm_tui.config`` and ``ccm_tui.atomic_file``.
"""
