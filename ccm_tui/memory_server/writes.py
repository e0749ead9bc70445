"""The write tools (only with ``--allow-writes``): remember and reopen, through the session controller.

Each session written to gets a :class:`~ccm_tui.core.service.controller.SessionController`
opened without holding the writer lock (like the TUI): the lock is taken around each
write, waiting up to ``wait`` seconds while the TUI or ``ccm-tui send`` is mid-turn,
then the write fails with that reason in plain words. The controller is closed again
once no write is under way (writes that come together share it): an open controller
holds the session's presence, and a long-lived agent's server must not keep the user
from renaming the session between its writes. No model is loaded: neither a
note nor a reopen needs one. The core words its refusals for ccm-tui's own model and
its user ("use search_efforts", "send again"); :func:`agent_words` says them again for
an agent calling these tools: the tools it has, what to call again, no local path.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from pathlib import Path

from ..config import Settings
from ..core.api import (
    Action,
    EffortAction,
    OpenOptions,
    Outcome,
    Phase,
    Remember,
    SessionController,
    StoreError,
    redact,
)
from .reads import Reads
from .render import cut
from .scope import InputError, Scope, effort_id

WRITE_WAIT = 10.0  # seconds a write waits for another process's writer lock
# ccm-tui's model's tools, as its refusals name them, and what an agent calling these tools has instead
CORE_TOOLS = {
    "search_efforts": "search",
    "expand_effort": "read",
    "effort_status": "status",
    "reopen_effort": "reopen",
}
PID_RE = re.compile(r"\bpid (\d+)")


def agent_words(reason: str, tool: str, scope: Scope) -> str:
    """A core refusal or failure reworded for an agent calling ``tool``: the tools it has (search, not
    search_efforts), what to do (call the tool again, not "send again"), no local path, no credential."""
    for core, ours in CORE_TOOLS.items():
        reason = re.sub(rf"\b{core}\b", ours, reason)
    reason = reason.replace("send again once it is done", f"call {tool} again once it is done")
    return scope.private(redact(" ".join(reason.split())))


def locked(tool: str, wait: float, reason: str = "", pid: int | None = None) -> InputError:
    """The session stayed in use through the wait: who holds it, that nothing was written, what to do."""
    if pid is None and (found := PID_RE.search(reason)):
        pid = int(found.group(1))
    who = f"pid {pid}" if pid else "another process"
    return InputError(
        f"the session is in use by {who} (ccm-tui or ccm-tui send, mid-turn on it) and stayed so for {wait:g} s; "
        f"nothing was written — call {tool} again in a moment (reads such as search go on meanwhile)"
    )


class Writes:
    """remember and reopen over the sessions of a :class:`Scope` (one controller per session)."""

    def __init__(
        self, scope: Scope, settings: Settings, *, wait: float = WRITE_WAIT, reads: Reads | None = None
    ) -> None:
        self.scope = scope
        self.reads = reads or Reads(scope, settings)  # to say why a reopen was refused
        self.settings = replace(settings, model=None, summary_model=None)  # no model client, no litellm
        self.wait = wait
        self._controllers: dict[Path, SessionController] = {}
        self._opening: dict[Path, asyncio.Lock] = {}
        self._writing: dict[Path, int] = {}  # writes under way per session (its controller closes at 0)

    async def _run(self, directory: Path, tool: str, intent: Remember | EffortAction) -> Outcome:
        """Run one write through the session's controller, opened for it (or shared with the writes
        under way) and closed after the last of them."""
        self._writing[directory] = self._writing.get(directory, 0) + 1
        try:
            return await (await self._controller(directory, tool)).run(intent)
        finally:
            self._writing[directory] -= 1
            if not self._writing[directory]:
                del self._writing[directory]
                controller = self._controllers.pop(directory, None)  # (before the await: a new write opens anew)
                if controller is not None:
                    await controller.close()

    async def _controller(self, directory: Path, tool: str) -> SessionController:
        lock = self._opening.setdefault(directory, asyncio.Lock())
        async with lock:
            controller = self._controllers.get(directory)
            if controller is not None and controller.state.phase is not Phase.CLOSED:
                return controller
            options = OpenOptions(hold_lock=False, lock_wait=self.wait, retry_delays=(), turn_lock_wait=self.wait)
            controller = SessionController(directory, self.settings, options=options)
            try:
                await controller.open()
            except StoreError as exc:
                await controller.close()
                pid = getattr(exc, "pid", None)
                if pid is not None or "in use" in str(exc):
                    raise locked(tool, self.wait, str(exc), pid) from None
                raise InputError(
                    "the session cannot be opened for writing, nothing was written: "
                    + agent_words(str(exc), tool, self.scope)
                ) from None
            self._controllers[directory] = controller
            return controller

    def _failed(self, outcome: Outcome, tool: str, directory: Path, target: str = "") -> InputError:
        reason = outcome.reason or "the write failed"
        if outcome.cause == "locked":
            return locked(tool, self.wait, reason)
        if tool == "reopen" and outcome.cause in ("refused", "input", "not_found"):
            with self.reads.reader(directory) as reader:
                view = reader.effort(target)
            if view is None:
                return InputError(f"there is no effort '{target}' in this session (search and list give the ids)")
            if view.state.is_open:
                return InputError(
                    f"effort '{target}' is open already ({view.state.value}), not concluded: there is nothing to "
                    "reopen (read shows its log)"
                )
        return InputError(agent_words(reason, tool, self.scope))

    async def remember(self, text: str, effort: str | None, session: str | None = None, *, agent: str = "") -> str:
        """A note, shown with ``agent`` (the MCP client's name) as who left it — never as the user's words."""
        target = effort_id(effort) if effort else ""
        name, directory = self.scope.session(session)
        outcome = await self._run(directory, "remember", Remember(text, target, agent))
        if not outcome.ok:
            raise self._failed(outcome, "remember", directory)
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
        outcome = await self._run(directory, "reopen", EffortAction(Action.REOPEN, target))
        if not outcome.ok:
            raise self._failed(outcome, "reopen", directory, target)
        result = outcome.result or {}
        where = f" in session {name}" if self.scope.all_sessions else ""
        prior = result.get("prior_summary")
        summary = f" Its summary was: {cut(str(prior), 300)}" if prior else ""
        return f"Reopened effort {target}{where}: it is the active effort there now.{summary}"

    async def close(self) -> None:
        controllers, self._controllers = list(self._controllers.values()), {}
        for controller in controllers:
            await controller.close()
