"""A turn sent before litellm is loaded waits visibly; preloading in the background avoids the wait."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio, json, sys
from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import start_engine
from ccm_tui.core.turn import events as te

engine = start_engine(sys.argv[1], Settings(model="openai/fake-model", api_base=sys.argv[2]))
events = []
if sys.argv[3] == "preload":
    engine.preload_model().join()
before = engine.model_client_loaded
events.append(asyncio.run(engine.run_turn("hello", events.append)))  # the turn's outcome ends it
engine.close()
print(json.dumps({
    "loaded_before": before,
    "loaded_after": engine.model_client_loaded,
    "kinds": [type(e).__name__ for e in events],
    "waiting": [e.reason for e in events if isinstance(e, te.Waiting)],
}))
"""


def run_turn_in_fresh_process(llm_server, session: Path, mode: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(session), llm_server.base_url, mode],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_turn_before_the_client_is_loaded_waits_visibly(llm_server, tmp_path):
    from tests.helpers.openai_server import text

    llm_server.push(text("Hi."))
    got = run_turn_in_fresh_process(llm_server, tmp_path / "s", "cold")
    assert got["loaded_before"] is False and got["loaded_after"] is True
    assert got["waiting"] == ["loading the model client…"]
    kinds = got["kinds"]
    assert kinds.index("TurnStarted") < kinds.index("Waiting") < kinds.index("TextDelta") < kinds.index("Outcome")


def test_a_preloaded_client_does_not_wait(llm_server, tmp_path):
    from tests.helpers.openai_server import text

    llm_server.push(text("Hi."))
    got = run_turn_in_fresh_process(llm_server, tmp_path / "s", "preload")
    assert got["loaded_before"] is True and got["waiting"] == [] and got["kinds"][-1] == "Outcome"


ACTION_SCRIPT = """
import asyncio, json, sys
from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import start_engine
from ccm_tui.core.turn import events as te
from ccm_tui.core.efforts.states import Action

engine = start_engine(sys.argv[1], Settings(model="openai/fake-model", api_base=sys.argv[2]))
events = []
asyncio.run(engine.run_action(Action.OPEN, "trip", events.append))  # needs no model
opened = [e for e in events if isinstance(e, te.Waiting)]
outcome = asyncio.run(engine.run_action(Action.CONCLUDE, "trip", events.append))
engine.close()
print(json.dumps({
    "ok": outcome.ok,
    "waiting_to_open": len(opened),
    "waiting": [e.reason for e in events if isinstance(e, te.Waiting)],
}))
"""


def test_concluding_by_hand_before_the_client_is_loaded_waits_visibly(llm_server, tmp_path):
    """The summary of a conclusion the user asked for is written by the model: the same visible wait."""
    from tests.helpers.openai_server import text

    llm_server.push(text("Trip plan: nothing decided yet."))
    done = subprocess.run(
        [sys.executable, "-c", ACTION_SCRIPT, str(tmp_path / "s"), llm_server.base_url],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["ok"] is True
    assert got["waiting_to_open"] == 0  # opening needs no model: no wait
    assert got["waiting"] == ["loading the model client…"]
