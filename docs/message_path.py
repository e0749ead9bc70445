"""Count the files one plain message crosses in the TUI (docs/ARCHITECTURE.md, *One turn, end to end*).

A module counts when one of its functions is called holding the user's text or the model's reply: an
argument at call time, in a string, a container or a dataclass's fields, three levels deep. The app
runs against the scripted OpenAI server (``tests/helpers/openai_server.py``) in a Pilot; a first turn
warms it up, the second is followed on every thread (the UI's and the session thread). Helpers that
only see the message's parts (a token count of it, its words) count too: they are files a reader
follows the message into.

Each file is printed with the files it hands the message to (the path; a file that hands it to none
only looks at it, or is where it ends: the model's client, the log, the widget that draws it).

    PYTHONPATH=. python docs/message_path.py [--calls]   # --calls: the functions that held it, per file
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import os
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.helpers import tui  # noqa: E402
from tests.helpers.openai_server import FakeLLMServer, text  # noqa: E402
from tests.helpers.tui import SIZE, chat, send, server_app  # noqa: E402

_wait_until = tui.wait_until
tui.wait_until = lambda pilot, condition, timeout=0.0, what="": _wait_until(pilot, condition, 600.0, what)  # traced: slow

USER, REPLY = "zebra quince lantern", "kumquat reply marker"
PACKAGE = f"{ROOT / 'ccm_tui'}/"
VARARGS, VARKEYWORDS = 0x04, 0x08  # code flags: *args, **kwargs
held: dict[str, set[str]] = collections.defaultdict(set)
handed: set[tuple[str, str]] = set()  # (from, to): a file calling another with the message


def holds(value: Any, depth: int = 0, seen: set[int] | None = None) -> str:
    """"user" or "reply" when ``value`` holds that text, else ""."""
    if isinstance(value, str):
        return "user" if USER in value else "reply" if REPLY in value else ""
    seen = set() if seen is None else seen
    if depth > 3 or id(value) in seen:
        return ""
    seen.add(id(value))
    if isinstance(value, dict):
        items = list(value.values())[:50]
    elif isinstance(value, list | tuple | collections.deque):
        items = list(value)[-20:]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, f.name, None) for f in dataclasses.fields(value)]
    else:
        return ""
    return next((found for item in items if (found := holds(item, depth + 1, seen))), "")


def follow(frame: FrameType, event: str, _arg: Any) -> None:
    code = frame.f_code
    if event != "call" or not code.co_filename.startswith(PACKAGE):
        return
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & VARARGS) + bool(code.co_flags & VARKEYWORDS)
    for name in code.co_varnames[:count]:
        if found := holds(frame.f_locals.get(name)):
            module = code.co_filename.removeprefix(f"{ROOT}/")
            held[module].add(f"{code.co_name} ({found})")
            caller = frame.f_back
            while caller is not None and not caller.f_code.co_filename.startswith(PACKAGE):
                caller = caller.f_back  # (through Textual, asyncio, litellm)
            if caller is not None and (source := caller.f_code.co_filename.removeprefix(f"{ROOT}/")) != module:
                handed.add((source, module))
            return


async def profile(on: bool) -> None:
    sys.setprofile(follow if on else None)


async def one_turn() -> None:
    with FakeLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.push(text("a warm-up reply"), text(f"Hello, {REPLY}."))
        app = server_app(Path(tmp) / "s", server.base_url)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "a warm-up message")
            await pilot.pause(0.5)
            session_thread = chat(pilot).link.controller._thread
            await asyncio.wrap_future(session_thread.submit(profile(True)))
            threading.setprofile(follow)
            sys.setprofile(follow)
            try:
                await send(pilot, USER)
                await pilot.pause(0.5)  # the sidebar and the meter drawn from the last snapshot
            finally:
                sys.setprofile(None)
                threading.setprofile(None)  # type: ignore[arg-type]
                await asyncio.wrap_future(session_thread.submit(profile(False)))


def main() -> None:
    asyncio.run(one_turn())
    passing = {source for source, _ in handed}
    print(f"{len(held)} files hold the message or its reply during one plain turn; {len(passing)} hand it on")
    for module in sorted(held):
        to = sorted(m.removeprefix("ccm_tui/") for s, m in handed if s == module)
        print(f"  {module}" + (f" → {', '.join(to)}" if to else ""))
        if "--calls" in sys.argv:
            print(f"      {', '.join(sorted(held[module]))}")


if __name__ == "__main__":
    main()
