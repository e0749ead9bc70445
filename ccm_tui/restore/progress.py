"""How an import tells what it is doing, and asks before a costly file: small protocols the caller
implements (the command draws a progress line on stderr and asks on the terminal; a library user
may pass :class:`Quiet`, which imports no file over the call budget)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ccm_tui.restore.call_plan import CallPlan, RunPlan
    from ccm_tui.restore.results import ImportRow
    from ccm_tui.restore.summarizer import TurnSummaries


class ImportProgress(Protocol):
    """The progress of one transcript's import."""

    def __call__(self, done: int, total: int, label: str) -> None:
        """A unit of work starts or ends (``done`` of ``total``): a turn, an evidence round."""

    def message(self, text: str) -> None:
        """A line that stays (where the evidence search may read, …)."""

    def clear(self) -> None:
        """The model work is over (or was cut short): take any transient display away."""

    def turns_summarized(self, turns: TurnSummaries) -> None:
        """Every turn has been summarized (before the evidence search and the session summary)."""

    def approve(self, plan: CallPlan) -> bool:
        """The file needs more model calls than the budget per file: whether to make them
        (ask a person, or say what ``--yes`` says). False: the file is not imported."""
        ...


class BulkProgress(Protocol):
    """The progress of an import of several transcripts, one after the other."""

    def start_file(self, index: int, total: int, path: Path) -> ImportProgress:
        """File ``index`` (1-based) of ``total`` starts; what it reports goes to the answer."""
        ...

    def file_done(self, index: int, total: int, row: ImportRow) -> None:
        """File ``index`` of ``total`` ended as ``row`` says."""

    def run_estimate(self, plan: RunPlan) -> None:
        """The calls the whole run will make, said before the first one."""

    def approve_run(self, plan: RunPlan) -> bool:
        """The run needs more model calls than the budget: whether to make them (one question for
        the run, or what ``--yes`` says). False: no file is imported."""
        ...


class Quiet:
    """Progress that shows nothing, for one file or for many."""

    def __call__(self, done: int, total: int, label: str) -> None:
        return None

    def message(self, text: str) -> None:
        return None

    def clear(self) -> None:
        return None

    def turns_summarized(self, turns: TurnSummaries) -> None:
        return None

    def approve(self, plan: CallPlan) -> bool:
        return False  # nobody to ask: a file over the budget is not imported

    def start_file(self, index: int, total: int, path: Path) -> Quiet:
        return self

    def file_done(self, index: int, total: int, row: ImportRow) -> None:
        return None

    def run_estimate(self, plan: RunPlan) -> None:
        return None

    def approve_run(self, plan: RunPlan) -> bool:
        return False  # nobody to ask: a run over the budget is not imported
