"""Sending from the chat screen: messages and slash commands, their turns on screen, and what the
app offers on the line under the input (Ctrl+Y: an effort proposal, or the message a crashed run
left unanswered).

A base class of :class:`~.chat.ChatScreen`, which owns the attributes declared here; the screen
module keeps the layout and the drawing of the session's state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on

from ...core.api import Phase, SessionSnapshot, SlashCommand, SlashError, spec_of
from ...core.api import parse as parse_message
from ...core.api import turn_events as te
from .. import messages as msg
from ..widgets.command_result import CommandResult
from .chat_keys import ChatActions
from .choice import Choice, ChoiceDialog

if TYPE_CHECKING:
    from ...core.api import Proposal
    from ..turn_presenter import TurnPresenter
    from ..widgets.turn_status import TurnStatus


def stales_an_offer(event: te.TurnEvent) -> bool:
    """Whether an offer shown before ``event`` no longer fits the session: a turn began (a regenerate or
    an edit sent again too), an effort changed, or an action or command was carried out."""
    if isinstance(event, (te.TurnStarted, te.EffortChanged)):
        return True
    return isinstance(event, te.Outcome) and event.work != "turn" and event.status == te.DONE


class ChatTurns(ChatActions):
    turns: TurnPresenter
    demo: bool
    suggestion: Proposal | None
    unanswered: str | None

    @property
    def snapshot(self) -> SessionSnapshot | None:
        raise NotImplementedError

    @property
    def status_line(self) -> TurnStatus:
        raise NotImplementedError

    def update_hint(self) -> None:
        raise NotImplementedError

    def show_figures(self, figures: te.ContextFigures) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ offers
    def _offer_retry(self, text: str) -> None:
        """A crashed run left this message unanswered: offered on the line under the input (Ctrl+Y sends it
        again, Up brings it back to edit). Never a dialog: what the user types at start-up goes to the input."""
        self.unanswered = text
        self.prompt.remind(text)
        self.refresh_bindings()
        self.update_hint()

    def on_suggestion_message(self, message: msg.SuggestionMessage) -> None:
        if message.taken:
            return  # auto_efforts: carried out already (its banners say so)
        self.suggestion = message.proposal
        self.refresh_bindings()
        self.update_hint()

    def _drop_suggestion(self) -> None:
        """The offer went stale: the session moved on without it (a turn, an effort changed, an action)."""
        if self.suggestion is not None:
            self.suggestion = None
            self.refresh_bindings()
            self.update_hint()

    def action_accept_suggestion(self) -> None:
        if self.unanswered is not None:
            text, self.unanswered = self.unanswered, None
            self.send_message(text, retry=True)
            return
        proposal, self.suggestion = self.suggestion, None
        self.refresh_bindings()
        self.update_hint()
        if proposal is not None and self.efforts.ready("take the proposal"):
            self.link.controller.accept(proposal)

    # ------------------------------------------------------------------- turns
    def on_prompt_submitted(self, message: msg.PromptSubmitted) -> None:
        self.send(message.text, typed=message.typed, pastes=message.pastes)

    def send(self, text: str, *, typed: str | None = None, pastes: dict[int, str] | None = None) -> None:
        """Enter: a slash command runs at once; anything else is a message for the model. The input
        gave the text up already; what cannot be sent now comes back to it (``typed``, ``pastes``: as the
        input showed it)."""
        typed = text if typed is None else typed
        try:
            intent = parse_message(text)
        except SlashError as exc:
            self.notify(str(exc), title="Not a command", severity="warning")
            self._not_sent(typed, pastes)
            return
        if isinstance(intent, SlashCommand):
            if not self.run_command(intent):
                self._not_sent(typed, pastes)
            return
        self.send_message(intent.text, typed=typed, pastes=pastes)

    def _not_sent(self, typed: str, pastes: dict[int, str] | None) -> None:
        """A message that could not be sent goes back into the input, unless something else was typed
        since: then Up brings it back (it is in the input's history)."""
        if not self.prompt.give_back(typed, pastes):
            self.notify("It was not sent; ↑ in an empty input brings it back.", severity="information", timeout=6)

    def run_command(self, command: SlashCommand) -> bool:
        """Run a slash command (its line and answer in the chat); False when it cannot run now."""
        if spec_of(command).action is not None and not self.efforts.ready(command.line):
            return False
        if not self.is_open:
            self.notify(self.run_state.error or "The session is still opening…", severity="warning")
            return False
        view = CommandResult(command.line)
        self.run_worker(self._command(command, view), group="command", exit_on_error=False)
        return True

    async def _command(self, command: SlashCommand, view: CommandResult) -> None:
        await self.chat_log.add(view)
        self.chat_log.scroll_end(animate=False)
        outcome = await self.link.controller.command(command)
        report = (outcome.result or {}).get("report") if outcome.ok else None
        view.show(outcome.reply if outcome.ok else outcome.reason, failed=not outcome.ok, report=report)
        self.chat_log.scroll_end(animate=False)

    def send_message(
        self, text: str, *, typed: str | None = None, pastes: dict[int, str] | None = None, retry: bool = False
    ) -> None:
        """Send ``text`` to the model (``typed``: as the input showed it, with ``pastes`` folded;
        ``retry``: it is the crashed run's unanswered message, sent again)."""
        typed = text if typed is None else typed
        state = self.run_state
        if state.phase is Phase.CLOSED and state.error:
            self.notify(state.error, severity="warning")
            self._not_sent(typed, pastes)
            return
        snapshot = self.snapshot
        if state.is_open and snapshot is not None and not snapshot.has_model:
            self.notify("No model is configured: open Settings (F4) or start with --model.", severity="warning")
            self._not_sent(typed, pastes)
            self.post_message(msg.ShowWelcome())
            return
        if self.demo:
            self.driver.sent(text)
        if self.suggestion is not None or self.unanswered is not None:  # not taken: moved on
            self.suggestion = self.unanswered = None
            self.refresh_bindings()
            self.update_hint()
        queued = state.busy or not state.is_open
        self.turns.begin(text, queued=queued, typed=typed, pastes=pastes)  # on screen at once, sent in turn
        if retry:
            self.link.retry_orphan()  # the controller checks that it is still unanswered
        else:
            self.link.send(text)  # the controller runs it, or queues it until the session is open

    def give_back(self, text: str, typed: str | None = None, pastes: dict[int, str] | None = None) -> None:
        """A message that got no answer: back in the input as it was typed (and in the demo's script)."""
        if not self.prompt.text.strip():
            if typed is None:  # a whole message back (edit the last one): folded if it is long
                typed, pastes = self.prompt.pastes.fold(text), dict(self.prompt.pastes.texts)
            self.prompt.give_back(typed, pastes)
        if self.demo:
            self.driver.unsent(text)

    @on(msg.TurnMessage)
    async def on_turn_event(self, message: msg.TurnMessage) -> None:
        """Every core event of a turn or an action: the presenter draws it, the meter takes figures."""
        event = message.event
        if isinstance(event, te.ContextFigures):
            self.show_figures(event)
            return
        if stales_an_offer(event):
            self._drop_suggestion()
        if isinstance(event, te.EffortChanged):
            return  # the snapshot that follows redraws the sidebar
        label = await self.turns.apply(event)
        if label:
            self.status_line.set_label(label)
        if isinstance(event, te.Outcome):
            self.update_hint()  # the turn may have found that the model has no tools
            if event.failed and event.cause == "budget" and event.result:
                self.offer_passage(event.reason, event.result)

    def offer_passage(self, reason: str, result: dict) -> None:
        """An expansion the budget cannot hold was refused: offer what fits instead — the lines around
        the best hit, or the effort's raw log to read."""
        effort_id = str(result.get("effort_id") or "")
        around = result.get("around_line")
        if not effort_id:
            return
        choices = []
        if isinstance(around, int) and around > 0:
            choices.append(
                Choice("lines", f"Read its lines around line {around:,}", "read-only, a screen of them", "r")
            )
        choices += [
            Choice("log", "Read its raw log", "read-only, the newest lines first", "l"),
            Choice("cancel", "Leave it concluded", "its summary stays in the context", "c"),
        ]

        def chosen(choice: str | None) -> None:
            if choice == "lines" and isinstance(around, int):
                self.show_lines(effort_id, (around, around))
            elif choice == "log":
                self.efforts.show_log(effort_id)

        self.app.push_screen(ChoiceDialog(f"{effort_id} does not fit in the context", choices, text=reason), chosen)
