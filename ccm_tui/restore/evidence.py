"""Agentic evidence search over a restored transcript and the files it touched.

The model gets the turn summaries and the accumulated state, and real tool
calls (:mod:`.evidence_tools`): ``search_log``, ``search_file``, ``read_file``,
``list_artifacts`` and ``complete``. The loop ends when the model stops calling
tools or calls ``complete``; after ``max_rounds`` rounds of tool calls it is
asked to complete with what it has. Tool errors go back to the model as JSON
errors and the loop goes on. What the file tools may read is decided by
:mod:`.file_access`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ccm_tui import paths
from ccm_tui.core.models.interface import ChatModel
from ccm_tui.core.models.litellm_client import LLMError, parse_arguments
from ccm_tui.restore.evidence_tools import COMPLETE, TOOLS, EvidenceTools, to_json
from ccm_tui.restore.file_access import FileAccess, ToolError, choose_root
from ccm_tui.restore.turns import ParsedTranscript

DEFAULT_MAX_ROUNDS = 8
MAX_CALLS_PER_ROUND = 8
CONTEXT_TOKENS = 6_000

Progress = Callable[[int, int, str], None]


# ----------------------------------------------------------------------------- the loop
class EvidenceEnd(StrEnum):
    """How an evidence search ended (its value is what the manifest's ``source`` records)."""

    COMPLETE = "complete"  # the model called complete with its findings
    NO_TOOL_CALLS = "no_tool_calls"  # the model answered in text instead of calling a tool
    MAX_SEARCHES = "max_searches"  # the rounds were spent: the findings were asked for
    ERROR = "error"  # a provider error stopped it
    DISABLED = "disabled"  # --max-searches 0

    @property
    def text(self) -> str:
        return _END_TEXTS[self]


_END_TEXTS = {
    EvidenceEnd.COMPLETE: "findings handed in",
    EvidenceEnd.NO_TOOL_CALLS: "ended with an answer in text",
    EvidenceEnd.MAX_SEARCHES: "all rounds used",
    EvidenceEnd.ERROR: "stopped by a provider error",
    EvidenceEnd.DISABLED: "disabled",
}


@dataclass
class EvidenceResult:
    """What the evidence search found and how it ended."""

    findings: str
    rounds: int = 0  # rounds in which the model called tools
    calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments", "ok"}
    ended_by: EvidenceEnd = EvidenceEnd.COMPLETE
    notes: list[str] = field(default_factory=list)

    @property
    def searches(self) -> list[dict[str, Any]]:
        """The tool calls that looked at something (every call but ``complete``)."""
        return [c for c in self.calls if c["name"] != "complete"]

    def describe(self) -> str:
        """One line for the user: ``6 tool call(s) (2 refused or failed) in 1 round(s), all rounds used``."""
        searches = self.searches
        if not searches:
            return f"no tool calls, {self.ended_by.text}"
        failed = sum(1 for c in searches if not c["ok"])
        refused = f" ({failed} refused or failed)" if failed else ""
        return f"{len(searches)} tool call(s){refused} in {self.rounds} round(s), {self.ended_by.text}"


def evidence_messages(context: str, max_rounds: int, file_access: str) -> list[dict[str, Any]]:
    """The opening request of the loop: instructions and the material to check."""
    system = (
        paths.prompt("restore_evidence")
        .replace("{max_rounds}", str(max_rounds))
        .replace("{file_access}", f"File access: {file_access}.")
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": context}]


async def gather_evidence(
    llm: ChatModel,
    tools: EvidenceTools,
    context: str,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    progress: Progress | None = None,
) -> EvidenceResult:
    """Run the tool loop: at most ``max_rounds`` rounds of tool calls, then force completion.

    Provider errors end the search (noted) with whatever was found; they never raise.
    """
    if max_rounds <= 0:
        return EvidenceResult("", ended_by=EvidenceEnd.DISABLED, notes=["evidence search disabled (--max-searches 0)"])
    messages = evidence_messages(context, max_rounds, tools.files.reason)
    result = EvidenceResult("")
    for round_no in range(1, max_rounds + 1):
        if progress:
            progress(round_no - 1, max_rounds, f"evidence search round {round_no}")
        try:
            completion = await llm.chat_once(messages, TOOLS)
        except LLMError as err:
            result.notes.append(f"evidence search stopped: {err}")
            result.ended_by = EvidenceEnd.ERROR
            result.findings = _fallback_findings(result)
            return result
        if not completion.tool_calls:
            result.findings = completion.content.strip()
            result.ended_by = EvidenceEnd.NO_TOOL_CALLS
            return result
        result.rounds = round_no
        findings = _run_round(tools, completion, messages, result)
        if findings is not None:
            result.findings = findings
            result.ended_by = EvidenceEnd.COMPLETE
            return result
    if progress:
        progress(max_rounds, max_rounds, "evidence search: final findings")
    return await _force_completion(llm, messages, result, max_rounds)


def _run_round(tools: EvidenceTools, completion, messages: list[dict[str, Any]], result: EvidenceResult) -> str | None:
    """Answer every tool call of one round; returns the findings if ``complete`` was called."""
    messages.append(
        {
            "role": "assistant",
            "content": completion.content or None,
            "tool_calls": [c.as_message_part() for c in completion.tool_calls],
        }
    )
    findings: str | None = None
    for index, call in enumerate(completion.tool_calls):
        args, error = parse_arguments(call.arguments)
        payload: dict[str, Any]
        if index >= MAX_CALLS_PER_ROUND:
            payload = {
                "error": f"too many tool calls in one round (at most {MAX_CALLS_PER_ROUND}); this one was not run"
            }
        elif error is not None:
            payload = {"error": error}
        elif call.name == "complete":
            text = args.get("findings") if args else None
            if isinstance(text, str) and text.strip():
                findings = text.strip()
                payload = {"status": "complete"}
            else:
                payload = {"error": "'findings' must be a non-empty string"}
        else:
            try:
                payload = {"ok": True, **tools.run(call.name, args or {})}
            except ToolError as exc:
                payload = {"error": str(exc)}
            except TypeError:
                payload = {"error": f"bad arguments for {call.name}"}
        ok = "error" not in payload
        result.calls.append({"name": call.name, "arguments": args if args is not None else call.arguments, "ok": ok})
        messages.append({"role": "tool", "tool_call_id": call.id, "content": to_json(payload)})
    return findings


async def _force_completion(
    llm: ChatModel, messages: list[dict[str, Any]], result: EvidenceResult, max_rounds: int
) -> EvidenceResult:
    """The search budget is spent: ask for the findings, offering only the ``complete`` tool."""
    result.ended_by = EvidenceEnd.MAX_SEARCHES
    messages.append(
        {
            "role": "user",
            "content": f"You have used all {max_rounds} rounds of searches. "
            "Call complete now with your findings from what you have seen; no more searches.",
        }
    )
    try:
        completion = await llm.chat_once(messages, [COMPLETE])
    except LLMError as err:
        result.notes.append(f"evidence search: the final findings request failed: {err}")
        result.findings = _fallback_findings(result)
        return result
    for call in completion.tool_calls:
        args, _ = parse_arguments(call.arguments)
        text = (args or {}).get("findings")
        if call.name == "complete" and isinstance(text, str) and text.strip():
            result.findings = text.strip()
            return result
    result.findings = completion.content.strip() or _fallback_findings(result)
    return result


def _fallback_findings(result: EvidenceResult) -> str:
    if not result.calls:
        return ""
    ok = sum(1 for c in result.calls if c["ok"])
    return f"(no findings were handed in; {len(result.calls)} tool call(s) were made, {ok} succeeded)"


def evidence_context(parsed: ParsedTranscript, digest: str, state_text: str, name: str) -> str:
    """The material the evidence search checks: session facts, turn summaries, state."""
    return "\n\n".join(
        [
            f"SESSION: {name} ({parsed.format}, {len(parsed.turns)} turn(s); transcript has line numbers "
            "that search_log reports)",
            "TURN SUMMARIES:\n" + digest,
            "ACCUMULATED STATE:\n" + state_text,
        ]
    )


__all__ = [
    "COMPLETE",
    "EvidenceEnd",
    "EvidenceResult",
    "EvidenceTools",
    "FileAccess",
    "TOOLS",
    "ToolError",
    "choose_root",
    "evidence_context",
    "gather_evidence",
]
