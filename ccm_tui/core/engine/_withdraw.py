"""Taking back the last exchange (regenerate the reply, edit the message): the marker that withdraws it.

Which lines a marker withdraws, and every reader's answer to "is this line withdrawn?", are
:mod:`ccm_tui.core.session.withdrawn`'s; this module decides whether the newest exchange may be taken
back and appends its marker. Only the newest exchange can be withdrawn, and only when nothing
happened after it and its turn changed no effort (undoing an opened or concluded effort is not what
"regenerate" means): else the user gets one line saying why. An ``exchange_retracted`` event records
the withdrawal for the event log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import Refused
from ..session.session import Session
from ..session.withdrawn import RETRACTS, is_marker
from ..storage import eventlog as ev
from ..storage.durable import read_jsonl_tail
from ..storage.eventlog import now_iso

EVENTS_READ = 400  # the event-log tail searched for the last turn
# a turn that did one of these is not withdrawn (its effects would stay, its words not)
EFFECTS = {
    ev.EFFORT_OPENED,
    ev.EFFORT_CONCLUDED,
    ev.EFFORT_REOPENED,
    ev.EFFORT_SWITCHED,
    ev.EFFORT_RESTORED,
    ev.NOTE_ADDED,
}
WORDS = {"regenerate": "the reply is written again", "edit": "the message is edited and sent again"}


class CannotWithdraw(Refused):
    """Why the last exchange cannot be withdrawn, in plain words."""


@dataclass(frozen=True)
class LastExchange:
    log: str  # "ambient" or an effort id
    records: tuple[dict[str, Any], ...]  # the exchange as logged: the user's message first

    @property
    def user(self) -> str:
        return str(self.records[0].get("content") or "")

    @property
    def reply(self) -> str:
        return "\n\n".join(str(r.get("content") or "") for r in self.records[1:] if r.get("role") == "assistant")


def last_exchange(session: Session) -> LastExchange:
    """The newest exchange, if it can be withdrawn (else :class:`CannotWithdraw`)."""
    events = read_jsonl_tail(session.events.path, EVENTS_READ)
    start = max((i for i, e in enumerate(events) if e.get("event") == ev.TURN_START), default=None)
    if start is None:
        raise CannotWithdraw("there is no exchange to withdraw yet")
    turn = events[start:]
    kinds = [str(e.get("event")) for e in turn]
    if ev.TURN_DONE not in kinds:
        raise CannotWithdraw("the last turn did not end with a reply (send the message again instead)")
    changed = sorted({k.removeprefix("effort_") for k in kinds if k in EFFECTS})
    if changed:
        raise CannotWithdraw(
            f"the last turn changed efforts ({', '.join(changed)}); taking it back would leave that done: "
            "send a new message instead"
        )
    logged = [e for e in turn if e.get("event") == ev.MESSAGE_LOGGED]
    if not logged or not isinstance(logged[-1].get("to"), str) or not isinstance(logged[-1].get("count"), int):
        raise CannotWithdraw("the last exchange was not logged")
    to, count = logged[-1]["to"], int(logged[-1]["count"])
    path = session.raw_path if to == "ambient" else session.effort_path(to)
    if to != "ambient" and session.efforts.get(to) is None:
        raise CannotWithdraw(f"effort {to} is gone")
    tail = read_jsonl_tail(path, count)
    said = turn[0].get("user")
    if len(tail) != count or not tail or tail[0].get("role") != "user" or any(is_marker(r) for r in tail):
        raise CannotWithdraw("the last exchange is not the newest thing in its log")
    if isinstance(said, str) and tail[0].get("content") != said:
        raise CannotWithdraw("the last exchange is not the newest thing in its log")
    return LastExchange(to, tuple(tail))


def withdraw_exchange(session: Session, exchange: LastExchange, why: str) -> None:
    """Withdraw ``exchange`` (see the module doc): its marker appended to its log (fsynced: from then
    on every reader leaves the exchange out), the session's counts without it, an
    ``exchange_retracted`` event."""
    marker = {
        "role": "system",
        "content": f"--- The exchange above was withdrawn: {WORDS.get(why, why)} ---",
        RETRACTS: len(exchange.records),
        "ts": now_iso(),
    }
    # what the exchange and its marker added: the model never sees either
    tokens = sum(session.counter.count_message(r) for r in (*exchange.records, marker))
    if exchange.log == "ambient":
        session.append_ambient([marker])
        session.state.ambient_tokens = max(0, session.state.ambient_tokens - tokens)
        session.load_ambient_tail()  # the ambient window without it
    else:
        effort = session.efforts.get(exchange.log)
        assert effort is not None  # checked by last_exchange
        session.append_effort(effort, [marker])
        effort.raw_tokens = max(0, effort.raw_tokens - tokens)
        session.forget_log(effort.id)  # read again without it when the context needs it
        session.save_manifest()
    session.log_event(ev.EXCHANGE_WITHDRAWN, to=exchange.log, count=len(exchange.records), why=why)
    session.save_state()
