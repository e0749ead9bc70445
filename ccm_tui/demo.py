"""The offline demo: a scripted model that drives the real core through a short session.

``DemoModel`` is a :class:`ccm_tui.core.models.interface.ChatModel` that answers in
process (``stream_chat`` and ``complete``). It picks
its reply from :data:`SCRIPT` by the user's message, streams it in small pieces
and calls the real effort tools, so the sidebar and the token meter move exactly
as they would with a live model: ambient chat, open, work, an aside, conclude,
expand, auto-collapse and reopen. No key, no network, no litellm import.

The same model is the basis of the UI's snapshot tests (``delay=0``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .core.models.interface import Completion, InProcessChatModel, ToolCall

DEMO_MODEL = "demo/scripted"


@dataclass(frozen=True)
class Round:
    """One model request: some text, then (optionally) tool calls."""

    text: str = ""
    calls: tuple[tuple[str, dict[str, str]], ...] = ()


@dataclass(frozen=True)
class Step:
    user: str
    rounds: tuple[Round, ...]


def _step(user: str, *rounds: Round) -> Step:
    return Step(user, rounds)


def _call(tool: str, /, **args: str) -> tuple[str, dict[str, str]]:
    return (tool, dict(args))


SCRIPT: tuple[Step, ...] = (
    _step(
        "Hi! What is this app?",
        Round(
            "Hello! This is **ccm-tui**, running an *offline scripted model* — no key, no network.\n\n"
            "I manage my memory in **efforts**: focused topics that get *concluded*. A concluded effort "
            "is replaced by a short summary; its full log stays on disk, searchable, and can be expanded "
            "or reopened.\n\n"
            "Watch the sidebar: efforts appear as we open them, and the meter compares what I actually "
            "see with a naive chat that keeps everything."
        ),
    ),
    _step(
        "Let's plan a 10-day trip to Japan in April.",
        Round("Lovely — I'll open an effort for the trip.", (_call("open_effort", name="japan trip"),)),
        Round(
            "Here is a first outline for **10 days in April** (cherry blossom season):\n\n"
            "| Days | Where | Highlights |\n"
            "|---|---|---|\n"
            "| 1–3 | Tokyo | Shinjuku Gyoen, Asakusa, teamLab |\n"
            "| 4 | Hakone | onsen ryokan, Lake Ashi |\n"
            "| 5–8 | Kyoto | Fushimi Inari, Arashiyama, Gion |\n"
            "| 9–10 | Osaka | Dotonbori, Osaka Castle, fly home from KIX |\n\n"
            "**Day by day**\n\n"
            "1. Arrive at Haneda, check in near Shinjuku, evening walk in Omoide Yokocho.\n"
            "2. Shinjuku Gyoen at opening time for the blossoms, then Harajuku and Meiji Jingu.\n"
            "3. Asakusa and Senso-ji early, the Sumida river cruise, teamLab Planets at night.\n"
            "4. Romancecar to Hakone-Yumoto, the Hakone loop (ropeway, Lake Ashi boat), ryokan dinner.\n"
            "5. Shinkansen to Kyoto, Higashiyama walk from Kiyomizu-dera to Gion at dusk.\n"
            "6. Fushimi Inari before 8 am to beat the crowds, then Tofuku-ji.\n"
            "7. Arashiyama bamboo grove, Tenryu-ji garden, the Hozugawa river.\n"
            "8. Philosopher's Path under the cherry trees, Ginkaku-ji, Nishiki market.\n"
            "9. Osaka: castle park, Kuromon market, Dotonbori at night.\n"
            "10. Morning in Nakazakicho, fly home from Kansai (KIX).\n\n"
            "Book the ryokan early: April weekends sell out, and so do the Kyoto hotels around the "
            "blossom peak (usually the first week of April)."
        ),
    ),
    _step(
        "Add a day trip from Kyoto to Nara, and keep the budget under 3,000 euros.",
        Round(
            "Done: **day 6** becomes a Nara day trip (Tōdai-ji, the deer park, Kasuga Taisha) — "
            "45 minutes on the Kintetsu line from Kyoto; Fushimi Inari moves to the morning of day 7, "
            "it is on the way back from Nara anyway.\n\n"
            "Budget per person, roughly:\n\n"
            "| Item | Cost |\n"
            "|---|---|\n"
            "| Flights (Europe–Tokyo, back from Osaka) | 1,050 € |\n"
            "| Hotels, 8 nights business hotel | 880 € |\n"
            "| Ryokan in Hakone, 1 night with dinner | 270 € |\n"
            "| Trains: Romancecar, 2 Shinkansen legs, Kintetsu, IC card | 320 € |\n"
            "| Food (about 35 € a day) | 350 € |\n"
            "| Entries, teamLab, river cruise | 80 € |\n\n"
            "**Total ≈ 2,950 €** — under the cap. A 7-day JR Pass does *not* pay off for this route: "
            "the two Shinkansen legs cost about 170 € as single tickets, the pass about 380 €."
        ),
    ),
    _step(
        "Quick aside: how do I undo my last git commit but keep the changes?",
        Round("", (_call("route_to_ambient"),)),
        Round(
            "Use a soft reset — the commit is undone, your changes stay staged:\n\n"
            "```bash\n"
            "git reset --soft HEAD~1\n"
            "```\n\n"
            "(This aside goes to the ambient log; the trip effort is untouched.)"
        ),
    ),
    _step(
        "The itinerary looks good — we're done with the trip plan.",
        Round("", (_call("close_effort"),)),
        Round(
            "Concluded. From now on I keep only a short summary of the trip in memory; the whole "
            "conversation stays on disk and I can expand or reopen it any time."
        ),
    ),
    _step(
        "New topic: our login test is flaky in CI, about one run in ten fails.",
        Round("Let's track that down in its own effort.", (_call("open_effort", name="flaky login test"),)),
        Round(
            "One failure in ten usually means a **race** or leaked state between tests. Three things to "
            "try, cheapest first:\n\n"
            "1. Reproduce it locally in a loop, with the same worker count as CI:\n\n"
            "```bash\n"
            "for i in $(seq 50); do pytest tests/test_login.py -x -q -p xdist -n 4 || break; done\n"
            "```\n\n"
            "2. Run it alone and in random order (`pytest -p random_order`), to tell a race from "
            "order-dependent state.\n"
            "3. Turn on asyncio debug mode (`PYTHONASYNCIODEBUG=1`): it reports coroutines that were "
            "never awaited and slow callbacks.\n\n"
            "What does the failing run print — an assertion, or a timeout?"
        ),
    ),
    _step(
        "Remind me: which day did we put Nara on, in the Japan trip?",
        Round("", (_call("expand_effort", id="japan-trip"), _call("route_to_ambient"))),
        Round(
            "I loaded the trip's full log back into context: **Nara is day 6**, a day trip from Kyoto "
            "on the Kintetsu line. (An aside: it goes to the ambient log, and the expansion collapses by "
            "itself after a few turns without mention.)"
        ),
    ),
    _step(
        "Back to the test: the failure is a timeout while waiting for the session fixture.",
        Round(
            "Then the fixture is probably not ready when the test starts. How does it start the server? "
            "If it creates a task and yields right away, the first request can race the startup."
        ),
    ),
    _step(
        "Found it: the fixture starts the server without awaiting it.",
        Round(
            "That's the race. Await the startup before yielding:\n\n"
            "```python\n"
            "@pytest.fixture\n"
            "async def server():\n"
            "    srv = TestServer(app)\n"
            "    await srv.start()          # was: asyncio.create_task(srv.start())\n"
            "    yield srv\n"
            "    await srv.close()\n"
            "```"
        ),
    ),
    _step(
        "That fixed it, 200 green runs in a row. Close the login test effort.",
        Round("", (_call("close_effort"),)),
        Round("Concluded — nice catch. The summary keeps the cause and the fix."),
    ),
    _step(
        "Let's reopen the Japan trip: we want two nights in Hiroshima.",
        Round("", (_call("reopen_effort", id="japan-trip"),)),
        Round(
            "Reopened — the whole earlier plan is back. Two nights in **Hiroshima** fit best after Kyoto:\n\n"
            "- days 1–3 Tokyo, day 4 Hakone, days 5–7 Kyoto (Nara on day 6)\n"
            "- **days 8–9 Hiroshima** + Miyajima, by Shinkansen from Kyoto (1 h 40)\n"
            "- day 10 Osaka, fly home from KIX\n\n"
            "With the extra train the total is about **3,060 €**: drop one Kyoto dinner out to stay under 3,000 €."
        ),
    ),
)

FALLBACK = Round(
    "I'm the **offline demo model**, so I can only follow my script. Press **Enter** to send the next "
    "scripted message (it is already in the input box), or press **F6** to let the demo play by itself."
)

SUMMARIES = {
    "japan": (
        "Japan trip, 10 days in April: Tokyo (days 1-3), Hakone onsen ryokan (day 4), Kyoto (days 5-8) "
        "with a Nara day trip on day 6, Osaka (days 9-10, fly home from KIX). Budget about 2,950 euros "
        "per person, under the 3,000 cap; a JR Pass does not pay off."
    ),
    "japan-hiroshima": (
        "Japan trip, 10 days in April, revised: Tokyo (1-3), Hakone (4), Kyoto (5-7, Nara day trip on "
        "day 6), Hiroshima and Miyajima (8-9), Osaka (10). About 3,060 euros; one dinner out dropped to "
        "stay under 3,000."
    ),
    "login": (
        "Flaky CI login test (1 run in 10 timed out): the session fixture started the test server "
        "without awaiting it, so requests raced the startup. Fixed by awaiting srv.start() before "
        "yielding; 200 green runs in a row."
    ),
}


def script_messages() -> list[str]:
    """The user's side of the script, in order."""
    return [step.user for step in SCRIPT]


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


_BY_USER = {_normal(step.user): step for step in SCRIPT}


def _pieces(text: str) -> list[str]:
    """Word-sized pieces (keeping whitespace), as a real model streams them."""
    return re.findall(r"\S+\s*|\s+", text)


class DemoModel(InProcessChatModel):
    """A scripted :class:`~ccm_tui.core.models.interface.ChatModel` (offline, deterministic)."""

    def __init__(self, *, delay: float = 0.03, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.model = DEMO_MODEL
        self.delay = delay
        self._sleep = sleep
        self._calls = 0

    def _round(self, messages: list[dict[str, Any]]) -> Round:
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        if last_user < 0:
            return FALLBACK
        step = _BY_USER.get(_normal(str(messages[last_user].get("content") or "")))
        if step is None:
            return FALLBACK
        done = sum(1 for m in messages[last_user + 1 :] if m.get("role") == "assistant" and m.get("tool_calls"))
        return step.rounds[min(done, len(step.rounds) - 1)]

    async def stream_chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[str], Any] | None = None,
    ) -> Completion:
        chosen = self._round(messages)
        for piece in _pieces(chosen.text):
            if self.delay:
                await self._sleep(self.delay)
            if on_delta is not None:
                result = on_delta(piece)
                if asyncio.iscoroutine(result):
                    await result
        calls = []
        for name, args in chosen.calls if tools else ():
            self._calls += 1
            calls.append(ToolCall(id=f"call_demo_{self._calls}", name=name, arguments=json.dumps(args)))
        if self.delay and calls:
            await self._sleep(self.delay * 8)
        return Completion(content=chosen.text, tool_calls=calls, finish_reason="tool_calls" if calls else "stop")

    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        """Summaries (and compaction checkpoints), picked by what the transcript is about."""
        body = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user").casefold()
        title = body.split("\n", 1)[0]  # "effort: <name>" heads the summarizer's request
        if self.delay:
            await self._sleep(self.delay * 10)
        if "japan" in title:
            text = SUMMARIES["japan-hiroshima" if "hiroshima" in body else "japan"]
        elif "login" in title or "fixture" in body:
            text = SUMMARIES["login"]
        else:
            text = "A short exchange in the offline demo; nothing was decided."
        return Completion(content=text, finish_reason="stop")
