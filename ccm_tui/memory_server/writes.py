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

An open controller holds up to :data:`FDS_PER_WRITER` descriptors, so at most
:func:`writers_kept` are open at once (a share of the descriptor limit); a write to another
session waits for one to close. A controller that fails to open is closed again, and a
failure to get a descriptor is said in one line (:class:`~.descriptors.OutOfDescriptors`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import replace
from pathlib import Path

import anyio

from ..config import Settings
from ..core.api import (
    Action,
    DerivedError,
    EffortAction,
    OpenOptions,
    Outcome,
    Phase,
    Remember,
    SessionController,
    StoreError,
    redact,
)
from .descriptors import OutOfDescriptors, descriptor_limit, out_of_descriptors
from .reads import Reads
from .render import cut
from .scope import Scope, ToolInputError, effort_id

log = logging.getLogger(__name__)

WRITE_WAIT = 10.0  # seconds a write waits for another process's writer lock
# Measured (a controller opened on a built session and a note written, open/close traced): 10 at most —
# its thread's event loop (an epoll and a socket pair), the presence file, derived.sqlite with its -wal
# and -shm, and while it writes the writer lock, manifest.yaml and the manifest's temporary file.
FDS_PER_WRITER = 10
MAX_WRITERS = 16
# ccm-tui's model's tools, as its refusals name them, and what an agent calling these tools has instead
CORE_TOOLS = {
    "search_efforts": "search",
    "expand_effort": "read",
    "effort_status": "status",
    "reopen_effort": "reopen",
}
PID_RE = re.compile(r"\bpid (\d+)")


def writers_kept(limit: int | None = None) -> int:
    """How many sessions may be open for writing at once: a quarter of the descriptor limit (as the
    readers have another), at least 1, at most MAX_WRITERS."""
    limit = descriptor_limit() if limit is None else limit
    return max(1, min(MAX_WRITERS, limit // (4 * FDS_PER_WRITER)))


def agent_words(reason: str, tool: str, scope: Scope) -> str:
    """A core refusal or failure reworded for an agent calling ``tool``: the tools it has (search, not
    search_efforts), what to do (call the tool again, not "send again"), no local path, no credential."""
    for core, ours in CORE_TOOLS.items():
        reason = re.sub(rf"\b{core}\b", ours, reason)
    reason = reason.replace("send again once it is done", f"call {tool} again once it is done")
    return scope.private(redact(" ".join(reason.split())))


def locked(tool: str, wait: float, reason: str = "", pid: int | None = None) -> ToolInputError:
    """The session stayed in use through the wait: who holds it, that nothing was written, what to do."""
    if pid is None and (found := PID_RE.search(reason)):
        pid = int(found.group(1))
    who = f"pid {pid}" if pid else "another process"
    return ToolInputError(
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
        self.kept = writers_kept()
        self._places = asyncio.Semaphore(self.kept)  # one per controller open

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
                    try:  # (a close that fails leaves the session to its next start: the write is stored)
                        await _close_quietly(controller)
                    finally:
                        self._places.release()

    async def _controller(self, directory: Path, tool: str) -> SessionController:
        lock = self._opening.setdefault(directory, asyncio.Lock())
        async with lock:
            controller = self._controllers.get(directory)
            if controller is not None and controller.state.phase is not Phase.CLOSED:
                return controller
            if controller is None:  # (a closed one keeps its place for the next)
                await self._place(tool)
            opened = None
            try:
                opened = await self._open(directory, tool)
            finally:  # (failed, or the request was cancelled: the place is free again)
                if opened is None:
                    self._controllers.pop(directory, None)
                    self._places.release()
            self._controllers[directory] = opened
            return opened

    async def _open(self, directory: Path, tool: str) -> SessionController:
        """The session's controller, open. A failure closes what it opened; when it was for want of
        descriptors, the idle session readers are closed and the session opened once more.

        Raises:
            ToolInputError: it cannot be opened, in words for the agent (OutOfDescriptors: no descriptor left).
        """
        options = OpenOptions(hold_lock=False, lock_wait=self.wait, retry_delays=(), turn_lock_wait=self.wait)
        for attempt in range(2):
            controller = SessionController(directory, self.settings, options=options)
            try:
                await controller.open()
                return controller
            except (StoreError, DerivedError, OSError) as exc:
                await _close_quietly(controller)
                short = out_of_descriptors(exc, FDS_PER_WRITER)  # (is there room for a controller now?)
                if not short:
                    raise self._not_opened(exc, tool) from None
                if attempt:
                    raise OutOfDescriptors(f"call {tool} again in a moment; nothing was written") from None
                self.reads.close_idle()
            except BaseException:  # (cancelled: what it opened is closed all the same)
                await _close_quietly(controller)
                raise
        raise AssertionError("unreachable")

    async def _place(self, tool: str) -> None:
        """A place for one more open controller, waiting up to ``wait`` for a write to end."""
        try:
            await asyncio.wait_for(self._places.acquire(), self.wait)
        except TimeoutError:
            raise ToolInputError(
                f"the {self.kept} sessions this server may write at once (a share of its descriptor limit) stayed "
                f"in use by other writes for {self.wait:g} s; nothing was written — call {tool} again in a moment"
            ) from None

    def _not_opened(self, exc: Exception, tool: str) -> ToolInputError:
        """Why the session could not be opened for a write, for the agent."""
        pid = getattr(exc, "pid", None)
        if pid is not None or "in use" in str(exc):
            return locked(tool, self.wait, str(exc), pid)
        return ToolInputError(
            "the session cannot be opened for writing, nothing was written: " + agent_words(str(exc), tool, self.scope)
        )

    def _failed(self, outcome: Outcome, tool: str, directory: Path, target: str = "") -> ToolInputError:
        reason = outcome.reason or "the write failed"
        if outcome.cause == "locked":
            return locked(tool, self.wait, reason)
        if "too many open files" in reason.lower():
            return OutOfDescriptors(f"call {tool} again in a moment")
        if tool == "reopen" and outcome.cause in ("refused", "input", "not_found"):
            try:
                with self.reads.reader(directory) as reader:
                    view = reader.effort(target)
            except (StoreError, DerivedError, OSError):
                return ToolInputError(agent_words(reason, tool, self.scope))  # (what the write said, then)
            if view is None:
                return ToolInputError(f"there is no effort '{target}' in this session (search and list give the ids)")
            if view.state.is_open:
                return ToolInputError(
                    f"effort '{target}' is open already ({view.state.value}), not concluded: there is nothing to "
                    "reopen (read shows its log)"
                )
        return ToolInputError(agent_words(reason, tool, self.scope))

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
            self._places.release()


async def _close_quietly(controller: SessionController) -> None:
    """Close a controller after its write, or after it failed to open (its thread, what it opened):
    what the caller is told is the write's outcome or the failure to open, not a failure while
    closing, which is logged in one line (the session's next start recovers what was not marked)."""
    try:
        with anyio.CancelScope(shield=True):  # (a cancelled request's controller is closed all the same)
            await controller.close()
    except (StoreError, DerivedError, OSError) as exc:
        log.warning("closing session %s: %s", controller.session_dir.name, " ".join(str(exc).split()))
