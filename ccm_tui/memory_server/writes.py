"""The write tools (only with ``--allow-writes``): remember and reopen, through the session controller.

Each session written to gets a :class:`~ccm_tui.core.controller.SessionController`
opened without holding the writer lock (like the TUI): the lock is taken around each
write, waiting up to ``wait`` seconds while the TUI or ``ccm-tui send`` is mid-turn,
then the write fails with that reason in plain words. No model is loaded: neither a
note nor a reopen needs one.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from ..config import Settings
from ..core.controller import OpenOptions, SessionController
from ..core.effort_states import Action
from ..core.reading import StoreError, redact
from ..core.run_state import EffortAction, Phase, Remember
from ..core.turn_events import Outcome
from .render import cut
from .scope import SESSION_FILES, InputError, Scope, effort_id

WRITE_WAIT = 10.0  # seconds a write waits for another process's writer lock


def _failed(outcome: Outcome) -> InputError:
    return InputError(redact(outcome.reason or "the write failed"))


class Writes:
    """remember and reopen over the sessions of a :class:`Scope` (one controller per session)."""

    def __init__(self, scope: Scope, settings: Settings, *, wait: float = WRITE_WAIT) -> None:
        self.scope = scope
        self.settings = replace(settings, model=None, summary_model=None)  # no model client, no litellm
        self.wait = wait
        self._controllers: dict[Path, SessionController] = {}
        self._opening: dict[Path, asyncio.Lock] = {}

    async def _controller(self, directory: Path) -> SessionController:
        lock = self._opening.setdefault(directory, asyncio.Lock())
        async with lock:
            controller = self._controllers.get(directory)
            if controller is not None and controller.state.phase is not Phase.CLOSED:
                return controller
            if not any((directory / name).is_file() for name in SESSION_FILES):
                raise InputError(f"no session at {directory} (the first ccm-tui or ccm-tui send makes it)")
            options = OpenOptions(hold_lock=False, lock_wait=self.wait, retry_delays=(), turn_lock_wait=self.wait)
            controller = SessionController(directory, self.settings, options=options)
            try:
                await controller.open()
            except StoreError as exc:
                await controller.close()
                pid = getattr(exc, "pid", None)
                if pid is not None or "in use" in str(exc):
                    who = f"pid {pid}" if pid else "another process"
                    raise InputError(
                        f"the session is in use by {who} (ccm-tui or ccm-tui send mid-turn) and stayed so for "
                        f"{self.wait:g} s; nothing was written — try again in a moment"
                    ) from None
                raise InputError(redact(f"the session cannot be opened for writing: {exc}")) from None
            self._controllers[directory] = controller
            return controller

    async def remember(self, text: str, effort: str | None, session: str | None = None) -> str:
        target = effort_id(effort) if effort else ""
        name, directory = self.scope.session(session)
        outcome = await (await self._controller(directory)).run(Remember(text, target))
        if not outcome.ok:
            raise _failed(outcome)
        result = outcome.result or {}
        made = " (the notes effort was made for it)" if result.get("created") else ""
        where = f" of session {name}" if self.scope.all_sessions else ""
        return (
            f"Noted in effort {result.get('effort_id')}{where}, line {result.get('line')}{made}. "
            "Search finds it from now on."
        )

    async def reopen(self, effort: str, session: str | None = None) -> str:
        target = effort_id(effort)
        name, directory = self.scope.session(session)
        outcome = await (await self._controller(directory)).run(EffortAction(Action.REOPEN, target))
        if not outcome.ok:
            raise _failed(outcome)
        result = outcome.result or {}
        where = f" in session {name}" if self.scope.all_sessions else ""
        prior = result.get("prior_summary")
        summary = f" Its summary was: {cut(str(prior), 300)}" if prior else ""
        return f"Reopened effort {target}{where}: it is the active effort there now.{summary}"

    async def close(self) -> None:
        for controller in self._controllers.values():
            await controller.close()
        self._controllers.clear()
