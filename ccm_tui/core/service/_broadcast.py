"""What a session controller tells its listeners: the run state, snapshots of the session, events.

A base class of :class:`~.controller.SessionController`, which owns the attributes: it keeps
the listeners, publishes the immutable :class:`~.run_state.RunState` and
:class:`~.run_state.SessionSnapshot` (read from any thread under one lock) and tells every event
to every listener on the session thread. The controller's work and opening change what is
published; this module only says it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..efforts.states import Action
from ..engine.engine import Engine
from .run_state import ControllerEvent, RunState, SessionSnapshot, SnapshotChanged, StateChanged

Listener = Callable[[ControllerEvent], None]


class SessionBroadcast:
    _guard: threading.Lock
    _listeners: list[Listener]
    _state: RunState
    _snapshot: SessionSnapshot | None
    _engine: Engine | None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event from now on (on the session thread); returns the
        function that stops it."""
        with self._guard:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._guard:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _tell(self, event: ControllerEvent) -> None:
        with self._guard:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)

    @property
    def state(self) -> RunState:
        with self._guard:
            return self._state

    @property
    def snapshot(self) -> SessionSnapshot | None:
        """The session as last published (None until it is open)."""
        with self._guard:
            return self._snapshot

    def _set_state(self, **changes: Any) -> None:
        with self._guard:
            self._state = replace(self._state, **changes)
            state = self._state
        self._tell(StateChanged(state))

    def _publish(self) -> None:
        """A new snapshot of the session (on the session thread, between or during work)."""
        engine = self._engine
        if engine is None:
            return
        snapshot = SessionSnapshot(
            status=engine.status(),
            figures=engine.figures(),
            history=tuple(engine.history()),
            budget=engine.budget,
            has_model=engine.has_model,
            tools_enabled=engine.tools_enabled,
            usage=engine.usage(),
            session_usage=engine.session_usage(),
        )
        with self._guard:
            self._snapshot = snapshot
        self._tell(SnapshotChanged(snapshot))

    def valid_actions(self, effort_id: str) -> tuple[Action, ...]:
        """The actions valid for an effort now (none for an unknown id)."""
        snapshot = self.snapshot
        effort = snapshot.effort(effort_id) if snapshot is not None else None
        return effort.actions if effort is not None else ()
