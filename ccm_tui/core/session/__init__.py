"""One session directory opened for use: :class:`~.session.Session` (files, in-memory state, the
writer lock), its small snapshots and schema migrations, the lock and presence files, withdrawn
exchanges (:mod:`.withdrawn`: the one answer to "is this line withdrawn?", read from the marker
lines), numbered lines of a raw log, a logged line as the chat draws it, the input's prompt history,
and the sessions of the data directory (listed, archived, deleted; forked at a turn: :mod:`.fork`). Imports :mod:`..manifest`, :mod:`..storage` and :mod:`..text`.
"""
