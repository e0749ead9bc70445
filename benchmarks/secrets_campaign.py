"""Secrets campaign: a hostile home against the evidence search of ``ccm-tui restore``.

Builds a home directory (``tests/helpers/hostile_home.py``) of ``--copies`` projects, each with 34
secret files (``.envrc``, ``terraform.tfstate``, ``id_ed25519``, ``secrets.yaml``, ``app.sqlite`` …) and
17 ordinary project files carrying planted secret values (AWS, GitHub, GitLab, Slack, Stripe,
OpenAI, Anthropic, Google keys, JWTs, private key blocks, ``password=`` lines, URLs with
credentials, ``.pgpass`` and ``.netrc`` lines …), plus 32 personal credential and history files
(``.config/gh/hosts.yml``, ``.pgpass``, ``.vault-token``, ``.aws/credentials``, ``.zsh_history`` …).
A scripted model, through the fake OpenAI server, then calls every evidence tool over all of it
with ``--root ~``: ``read_file`` and ``search_file`` on every file, ``search_log`` with secret-hunting
patterns over a transcript in which the agent printed secret files, ``list_artifacts``.

Prints the secret files refused, the planted values that reached the model (target: 0; of them,
those in files the search reads or in the transcript are stopped by redaction alone), the ordinary
files read (they must be: a policy that refuses everything is no answer), and the time.

Then the shapes of issue 42 (``tests/helpers/secret_shapes.py``: typed declarations, call arguments,
values on the next line, multi-line ``.netrc``, directives without ``=``, Kubernetes key data, values
with ``(``, ``.`` or spaces, lower-case names, Mailgun/Telegram/PuTTY/OpenVPN formats — 77 of them),
each in a file of its kind and in a JSONL transcript record (``\\"`` quotes), end to end through the
evidence search (``read_file``, ``search_file``, ``search_log``), and six credential files renamed
(``kubeconfig.yaml``, ``key.txt`` …): shapes leaked (target 0) and renamed files refused (target all).

    python benchmarks/secrets_campaign.py [--copies 20] [--seed 7] [--keep DIR] [--shapes-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ccm_tui.core.models.litellm_client import LLMClient  # noqa: E402
from ccm_tui.restore import evidence as ev  # noqa: E402
from ccm_tui.restore.turns import Artifact, ParsedTranscript, TurnRound  # noqa: E402
from tests.helpers.hostile_home import HostileHome, build_home, transcript_text  # noqa: E402
from tests.helpers.openai_server import FakeLLMServer, call, text, tool_calls  # noqa: E402
from tests.helpers.secret_shapes import shapes, transcript_record, write_renamed, write_shapes  # noqa: E402

PATTERNS = ["password|secret|token|key|auth", "AKIA|gh[pos]_|sk[-_]|xox|eyJ|AIza|glpat|hvs", "BEGIN", "."]
CALLS_PER_SEARCH = ev.MAX_CALLS_PER_ROUND * 8  # one evidence search: 8 rounds of 8 calls


def campaign_calls(home: HostileHome) -> list:
    calls = [call("list_artifacts")] + [call("search_log", {"pattern": p, "context_lines": 10}) for p in PATTERNS]
    for path in home.secret_files + home.ordinary_files:
        calls.append(call("read_file", {"path": path}))
        calls += [call("search_file", {"path": path, "pattern": p}) for p in PATTERNS[:2]]
    return [call(c.name, c.arguments, id=f"c{n}") for n, c in enumerate(calls)]


async def run_searches(home: HostileHome, server: FakeLLMServer) -> tuple[list[dict], int]:
    """Every call, in evidence searches of 8 rounds; returns the requests the model got and the calls made."""
    parsed = ParsedTranscript(
        "claude-code", [TurnRound(1, ["why"], ["read"], 1, 2, [Artifact(p, "read", 2) for p in home.secret_files])]
    )
    log = transcript_text(home)
    llm = LLMClient("openai/fake-model", api_base=server.base_url, timeout=60)
    calls = campaign_calls(home)
    requests: list[dict] = []
    for start in range(0, len(calls), CALLS_PER_SEARCH):
        chunk = calls[start : start + CALLS_PER_SEARCH]
        server.clear()
        rounds = [tool_calls(*chunk[i : i + ev.MAX_CALLS_PER_ROUND]) for i in range(0, len(chunk), 8)]
        server.push(*rounds, text("done"))
        tools = ev.EvidenceTools(log, parsed, ev.FileAccess(home.home, "--root ~"))
        await ev.gather_evidence(llm, tools, "SESSION: hostile", max_rounds=len(rounds))
        requests.extend(server.chat_requests()[-1:])  # the last request carries every answer of this search
    return requests, len(calls)


def report(home: HostileHome, requests: list[dict], calls: int, seconds: float) -> dict:
    sent = json.dumps(requests, ensure_ascii=False)
    answers = [json.loads(m["content"]) for body in requests for m in body["messages"] if m["role"] == "tool"]
    read_secret_files = [path for path, canary in home.canaries.items() if canary in sent]
    read_ordinary = [path for path, canary in home.readable_canaries.items() if canary in sent]
    leaked = [value for value in home.planted if value in sent]
    readable = transcript_text(home) + "".join((home.home / p).read_text() for p in home.ordinary_files)
    return {
        "files": len(home.secret_files) + len(home.ordinary_files),
        "secret_files": len(home.secret_files),
        "secret_files_refused": len(home.secret_files) - len(read_secret_files),
        "ordinary_files": len(home.ordinary_files),
        "ordinary_files_read": len(read_ordinary),
        "planted_values": len(home.planted),
        "planted_values_in_readable_text": sum(1 for value in home.planted if value in readable),
        "planted_values_leaked": len(leaked),
        "tool_calls": calls,
        "tool_answers": len(answers),
        "refused_answers": sum(1 for a in answers if str(a.get("error", "")).startswith("refused:")),
        "redactions_sent": sent.count("[redacted]"),
        "seconds": round(seconds, 1),
        "leaked_examples": leaked[:5],
        "secret_files_read": read_secret_files[:5],
    }


async def run_shapes(root: Path, server: FakeLLMServer, seed: int) -> dict:
    """The shapes end to end: in files read and searched, in a JSONL transcript searched; renamed files."""
    found = shapes(seed)
    paths = write_shapes(root, found)
    renamed = write_renamed(root, seed)
    log = "\n".join(transcript_record(shape) for shape in found)
    calls = [call("search_log", {"pattern": p, "context_lines": 3}) for p in PATTERNS]
    for path in [*paths, *renamed]:
        calls.append(call("read_file", {"path": path}))
        calls += [call("search_file", {"path": path, "pattern": p}) for p in PATTERNS[:2]]
    calls = [call(c.name, c.arguments, id=f"s{n}") for n, c in enumerate(calls)]
    llm = LLMClient("openai/fake-model", api_base=server.base_url, timeout=60)
    parsed = ParsedTranscript("claude-code", [TurnRound(1, ["why"], ["read"], 1, 2, [])])
    sent_parts: list[str] = []
    for start in range(0, len(calls), CALLS_PER_SEARCH):
        chunk = calls[start : start + CALLS_PER_SEARCH]
        server.clear()
        rounds = [tool_calls(*chunk[i : i + ev.MAX_CALLS_PER_ROUND]) for i in range(0, len(chunk), 8)]
        server.push(*rounds, text("done"))
        tools = ev.EvidenceTools(log, parsed, ev.FileAccess(root, f"--root {root}"))
        await ev.gather_evidence(llm, tools, "SESSION: shapes", max_rounds=len(rounds))
        sent_parts.append(json.dumps(server.chat_requests()[-1:], ensure_ascii=False))
    sent = "".join(sent_parts)
    # a value the JSON of the requests escapes ("\"") is looked for as sent, too
    leaked = [s.label for s in found if s.value in sent or json.dumps(s.value)[1:-1] in sent]
    read_renamed = [path for path, value in renamed.items() if value in sent]
    return {
        "shapes": len(found),
        "shapes_leaked": len(leaked),
        "shapes_leaked_examples": leaked[:5],
        "renamed_files": len(renamed),
        "renamed_files_refused": len(renamed) - len(read_renamed),
        "shape_tool_calls": len(calls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20, help="projects in the home (default 20)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build the home here (else a temporary directory)")
    parser.add_argument("--shapes-only", action="store_true", help="run the shapes of issue 42 only (seconds)")
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        home_dir = (args.keep or Path(scratch)) / "home"
        os.environ["HOME"] = str(home_dir)
        with FakeLLMServer() as server:
            if not args.shapes_only:
                home = build_home(home_dir, copies=args.copies, seed=args.seed)
                started = time.perf_counter()
                requests, calls = asyncio.run(run_searches(home, server))
                figures = report(home, requests, calls, time.perf_counter() - started)
                print(json.dumps(figures, indent=2))
                print(
                    f"secret files refused: {figures['secret_files_refused']} of {figures['secret_files']}; "
                    f"planted values leaked: {figures['planted_values_leaked']} of {figures['planted_values']}; "
                    f"ordinary files read: {figures['ordinary_files_read']} of {figures['ordinary_files']}"
                )
                failed = (
                    bool(figures["planted_values_leaked"]) or figures["secret_files_refused"] < figures["secret_files"]
                )
            shape_root = home_dir.parent / "shapes-home"
            shape_root.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            shaped = asyncio.run(run_shapes(shape_root, server, args.seed))
            shaped["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(shaped, indent=2))
    print(
        f"shapes leaked end to end: {shaped['shapes_leaked']} of {shaped['shapes']}; "
        f"renamed credential files refused: {shaped['renamed_files_refused']} of {shaped['renamed_files']}"
    )
    if failed or shaped["shapes_leaked"] or shaped["renamed_files_refused"] < shaped["renamed_files"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
