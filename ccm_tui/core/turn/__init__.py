"""One turn: the orchestrator (context → model → tools → logs), compaction, model requests with their
retry policy, the tools, recall, how the exchange reaches disk, folding after a turn, and the typed
events a turn reports (:mod:`.events`). Imports :mod:`..efforts`, :mod:`..search`, :mod:`..models`
and everything below them.
"""
