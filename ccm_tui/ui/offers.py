"""What the app offers on the line under the input, taken by Ctrl+Y: the message a crashed run left
unanswered (sent again), or an effort the app proposes (the model does not manage them).

The chat screen owns one :class:`Offers`. An offer lasts until it is taken, until the user sends
something else, or until the session moves on without it (:func:`stales_an_offer`); each change
calls ``changed`` so the screen redraws the hint and the Ctrl+Y binding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.api import DONE, EffortChanged, Outcome, TurnEvent, TurnStarted

if TYPE_CHECKING:
    from ..core.api import Proposal

UNANSWERED_HINT = "Your last message got no reply — Ctrl+Y sends it again · ↑ brings it back to edit"


def stales_an_offer(event: TurnEvent) -> bool:
    """Whether an offer shown before ``event`` no longer fits the session: a turn began (a regenerate or
    an edit sent again too), an effort changed, or an action or command was carried out."""
    if isinstance(event, (TurnStarted, EffortChanged)):
        return True
    return isinstance(event, Outcome) and event.work != "turn" and event.status == DONE


class Offers:
    def __init__(self, changed: Callable[[], None]) -> None:
        self.changed = changed
        self.suggestion: Proposal | None = None  # the app's effort proposal
        self.unanswered: str | None = None  # a crashed run's unanswered message (it goes first)

    @property
    def any(self) -> bool:
        """Something is on offer (Ctrl+Y is bound)."""
        return self.suggestion is not None or self.unanswered is not None

    @property
    def hint(self) -> str | None:
        """What the line under the input says of the offer, if there is one."""
        if self.unanswered is not None:
            return UNANSWERED_HINT
        return self.suggestion.text if self.suggestion is not None else None

    def offer_retry(self, text: str) -> None:
        """A crashed run left ``text`` unanswered. Never a dialog: what the user types at start-up goes
        to the input."""
        self.unanswered = text
        self.changed()

    def propose(self, proposal: Proposal) -> None:
        self.suggestion = proposal
        self.changed()

    def drop_suggestion(self) -> None:
        """The proposal went stale: the session moved on without it (a turn, an effort changed, an action)."""
        if self.suggestion is not None:
            self.suggestion = None
            self.changed()

    def withdraw(self) -> None:
        """Not taken: the user moved on (sent something else, switched sessions)."""
        if self.any:
            self.suggestion = self.unanswered = None
            self.changed()

    def take(self) -> Proposal | str | None:
        """Ctrl+Y: the unanswered message to send again if there is one, else the proposal; either way
        it is no longer on offer."""
        taken: Proposal | str | None
        if self.unanswered is not None:
            taken, self.unanswered = self.unanswered, None
        else:
            taken, self.suggestion = self.suggestion, None
        self.changed()
        return taken
