"""Recall: a model that never calls a tool still gets the logged line that answers a question, forty
turns later, within its share of the budget; recall=off leaves it out."""

from __future__ import annotations

import json

import pytest

from tests.helpers.openai_server import text


def chat(ccm, message: str) -> dict:
    ccm.server.push(text("Noted."))
    return ccm.send(message)


def concluded(ccm, name: str, line: str, summary: str) -> None:
    """An effort ``name`` that holds ``line``, concluded with ``summary``."""
    ccm.send(f"/open {name}")
    chat(ccm, line)
    ccm.server.push(text(summary))
    ccm.send("/done")


def test_a_fact_that_left_the_window_is_recalled_into_the_request(ccm):
    chat(ccm, "My locker code at the climbing gym is 4729.")
    for i in range(40):
        chat(ccm, f"small talk {i}: the weather and the tea")
    assert "4729" not in ccm.last_context_text()
    out = chat(ccm, "What was my locker code at the climbing gym?")
    system = ccm.chat_requests()[-1]["messages"][-2]["content"]  # the context note
    assert "4729" in system and "Recalled for this message" in system
    assert any(b.startswith("Recalled: ambient chat line") for b in out["banners"])
    request = out["request"]
    assert 0 < request["layers"]["recall"] <= 0.06 * request["budget"]
    started = [e for e in ccm.events("turn_start") if e.get("recalled")]
    assert started[-1]["recalled"]["source"] == "ambient" and started[-1]["recalled"]["lines"][0] == 1


def test_a_detail_of_a_concluded_effort_is_recalled_and_open_ones_are_not(ccm):
    concluded(ccm, "Japan trip", "We stay at the Hanaya ryokan in Kyoto, room 204.", "Japan trip: a ryokan in Kyoto.")
    out = chat(ccm, "Which room number did we get at Hanaya?")
    assert "room 204" in ccm.chat_requests()[-1]["messages"][-2]["content"]
    assert "Recalled: japan-trip lines" in " ".join(out["banners"])
    ccm.send("/reopen japan-trip")  # open again: its log is in the context, nothing to recall
    out = chat(ccm, "Which room number did we get at Hanaya?")
    assert not any(b.startswith("Recalled") for b in out["banners"])


def test_common_words_alone_recall_nothing(ccm):
    for i in range(45):
        chat(ccm, f"the weather is nice today {i}")
    out = chat(ccm, "how is the weather today?")
    assert not any(b.startswith("Recalled") for b in out["banners"])


def test_recall_off_leaves_it_out(ccm, monkeypatch, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('recall = "off"\n')
    monkeypatch.setenv("CCM_CONFIG", str(config))
    chat(ccm, "My locker code at the climbing gym is 4729.")
    for i in range(12):
        chat(ccm, f"small talk {i}")
    out = chat(ccm, "What was my locker code at the climbing gym?")
    assert "4729" not in ccm.chat_requests()[-1]["messages"][-2]["content"]
    assert out["request"]["layers"]["recall"] == 0


def is_chat(body: dict) -> bool:
    """A request for a reply: it carries the context note (a summary's or a checkpoint's does not)."""
    return any("[Context note" in str(m.get("content")) for m in body["messages"])


def rambling(body: dict):
    """A small local model that never calls a tool and answers at length; its summaries are short."""
    if not is_chat(body):  # a summary or a checkpoint
        return text("Checkpoint: talk about the garden.")
    return text("Gardening is a wonderful hobby. " + "Plants need sun and care. " * 20)


def last_chat_request(ccm) -> dict:
    """The last request for a reply (not a summary's or a checkpoint's)."""
    return [b for b in ccm.server.chat_requests() if is_chat(b)][-1]


def last_chat_system(ccm) -> str:
    """The system message and the context note (where the recalled lines are) of the last chat request."""
    messages = last_chat_request(ccm)["messages"]
    return "\n".join(
        str(m["content"]) for m in messages if m["role"] == "system" or "[Context note" in str(m["content"])
    )


def test_the_checkpointed_part_of_an_open_effort_is_recalled(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "2450")
    ccm.server.responder = rambling
    ccm.send("/open garden")
    ccm.send("My tomato plants: I grow San Marzano this year.")
    for question in ["basil pests", "garlic planting", "raised beds", "mulch", "pruning", "seedlings"]:
        ccm.send(f"What about {question} in the garden?")
    assert ccm.effort("garden")["checkpoint_upto"] >= 2  # the fact's lines left the context
    assert "San Marzano" not in ccm.last_context_text()
    out = ccm.send("Which tomato variety do I grow this year?")
    assert "San Marzano" in last_chat_system(ccm)
    assert "Recalled: garden lines 1-2" in out["banners"]
    assert not ccm.events("recall_revised")  # found before the request: nothing was looked for again


def test_a_line_the_context_cuts_to_the_message_cap_is_recalled_around_the_words_asked_for(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "4000")  # a logged message shows at most 1,000 tokens
    ccm.send("/open allotment")
    notes = "the paths need weeding. " * 150 + "The gate code of the tool shed is 8861. " + "prune the hedge. " * 150
    chat(ccm, "Notes from the allotment meeting: " + notes)
    chat(ccm, "Anything else for the allotment?")
    assert "8861" not in ccm.last_context_text()  # the middle of the pasted notes is cut
    out = chat(ccm, "What is the gate code of the tool shed?")
    recalled = last_chat_system(ccm).split("Recalled for this message")[1]
    assert "The gate code of the tool shed is 8861." in recalled
    assert "Recalled: allotment line" in " ".join(out["banners"])
    assert out["request"]["layers"]["recall"] <= 0.06 * 4000


def test_a_long_line_of_the_ambient_window_cut_to_the_message_cap_is_recalled(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "4000")
    notes = "the paths need weeding. " * 150 + "The gate code of the tool shed is 8861. " + "prune the hedge. " * 150
    chat(ccm, "Notes from the allotment meeting: " + notes)
    chat(ccm, "Anything else for the allotment?")  # the notes are still in the ambient window, cut
    assert "8861" not in ccm.last_context_text()
    out = chat(ccm, "What is the gate code of the tool shed?")
    assert "The gate code of the tool shed is 8861." in last_chat_system(ccm)
    assert "Recalled: ambient chat lines 1-2" in out["banners"]


@pytest.mark.parametrize("where", ["a concluded effort", "the open effort"])
def test_a_fact_is_in_every_request_that_asks_for_it_while_the_context_is_compacted(ccm, monkeypatch, where):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "2900")
    ccm.server.responder = rambling
    if where == "a concluded effort":
        ccm.send("/open taxes")
        ccm.send("My tax id number is DE-339-881.")
        ccm.send("/done")
        ccm.send("/open garden")
    else:
        ccm.send("/open garden")
        ccm.send("My tax id number is DE-339-881.")
    missed, compacted_when_asked = [], 0
    for i in range(10):  # the context grows to the budget and is compacted, again and again
        ccm.send(f"What about the garden bed number {i}?")
        out = ccm.send("What is my tax id number?")
        assert out["request"]["total"] <= 3000
        compacted_when_asked += any(b.startswith("AUTO-COMPACTION") for b in out["banners"])
        if "DE-339-881" not in "\n".join(str(m["content"]) for m in last_chat_request(ccm)["messages"]):
            missed.append((i, out["request"], out["banners"]))
    assert not missed
    assert compacted_when_asked  # some asks made room for the recall, or found it again after a checkpoint


def test_lines_that_the_asking_request_itself_checkpoints_are_recalled(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "3000")
    ccm.server.responder = rambling
    ccm.send("/open garden")
    ccm.send("My tax id number is DE-339-881.")
    for i in range(20):  # up to just under the budget: one more exchange fits
        if ccm.send(f"What about the garden bed number {i}?")["context"]["total"] > 2500:
            break
    assert not ccm.effort("garden").get("checkpoint_upto")
    out = ccm.send("What is my tax id number? " + "I need it for the forms of this year. " * 50)
    assert ccm.effort("garden")["checkpoint_upto"] >= 2  # this request's compaction took the fact out
    assert "DE-339-881" in last_chat_system(ccm)
    assert "Recalled: garden lines 1-2" in out["banners"]
    revised = ccm.events("recall_revised")  # the recall looked for again after the compaction is logged too
    assert revised and revised[-1]["next_turn"] == out["turn"] and "garden" in str(revised[-1]["recalled"])


def test_words_any_message_may_use_recall_nothing_in_a_short_session(ccm):
    concluded(ccm, "sourdough", "How long should the sourdough rise before baking?", "Sourdough: rising times.")
    out = chat(ccm, "How long should I keep all the receipts?")
    assert not any(b.startswith("Recalled") for b in out["banners"])
    out = chat(ccm, "How long should the sourdough rise?")  # a word of its own finds it
    assert "Recalled: sourdough line" in " ".join(out["banners"])


# A session like the real-model benchmark's, with its own topics and facts: a model that never calls a
# tool and rambles, efforts from slash commands and from taking the app's proposals, a 6,000-token budget
# passed on the way. ("chat", text), ("slash", command), ("take", "") the latest proposal as Ctrl+Y would,
# ("ask", fact) a question whose answer is the fact.
TOOLLESS_SESSION = [
    ("chat", "We are moving house in June and I need a plan for the move."),
    ("chat", "The moving van is booked with Hertz, reservation HZ-58812."),
    ("chat", "Which rooms should we pack first for the move?"),
    ("chat", "How many moving boxes does a two-bedroom flat need?"),
    ("chat", "Our new address after the move is 14 Linden Row."),
    ("slash", "/open bike repair"),
    ("chat", "My bike chain skips on the small cog; it is a KMC X11 chain."),
    ("chat", "How do I check bike chain wear?"),
    ("chat", "The bike tyres should be pumped to 80 psi."),
    ("chat", "Could the rear derailleur hanger of the bike be bent?"),
    ("slash", "/done"),
    ("chat", "I have to give the wedding speech for my brother."),
    ("chat", "The wedding is at Harrow Hall and the speech must stay under four minutes."),
    ("chat", "How do I open a wedding speech with a joke?"),
    ("take", ""),
    ("chat", "My brother's best friend from school, for the wedding speech, is Tobias Wren."),
    ("chat", "Should the wedding speech thank the bride's family?"),
    ("chat", "How long should I rehearse the wedding speech?"),
    ("chat", "Car insurance renews next month; the policy number is PX-4410-77."),
    ("chat", "Is car insurance cheaper with a higher excess?"),
    ("chat", "Does a dashcam lower the car insurance premium?"),
    ("take", ""),
    ("chat", "How much more is car insurance with a second driver?"),
    ("chat", "Is a car insurance no-claims bonus transferable?"),
    ("chat", "Thanks, that is it for the car insurance for now."),
    ("ask", "HZ-58812", "What was the reservation number of the moving van?"),
    ("ask", "14 Linden Row", "What is our new address after the move?"),
    ("ask", "KMC X11", "Which chain is on my bike?"),
    ("ask", "80 psi", "What pressure should the bike tyres have?"),
    ("ask", "Harrow Hall", "Where is the wedding?"),
    ("ask", "Tobias Wren", "What is the name of my brother's best friend from school?"),
    ("ask", "PX-4410-77", "What is my car insurance policy number?"),
]


def echoing_rambler(body: dict):
    """Never calls a tool; answers at length, repeating the user's words (as small models do)."""
    messages = body["messages"]
    if not is_chat(body):  # a summary or a checkpoint
        return text("Brief: the conversation so far, in general terms.")
    asked = str(messages[-1]["content"]).rstrip("?.")
    return text(f"About {asked.lower()}: " + "there are many things to consider here, and it depends. " * 18)


def test_a_model_that_never_calls_a_tool_gets_every_planted_fact_when_asked(ccm, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "6000")
    ccm.server.responder = echoing_rambler
    proposals: list[dict] = []
    asked = {}
    for step in TOOLLESS_SESSION:
        kind, *rest = step
        if kind == "slash":
            ccm.send(rest[0])
        elif kind == "take" and proposals:
            latest = proposals[-1]
            if latest["conclude"]:
                ccm.send("/done")
            ccm.send(f"/open {latest['name']}")
        elif kind in ("chat", "ask"):
            before = len(ccm.server.chat_requests())
            out = ccm.send(rest[-1])
            proposals += out.get("suggestions", [])
            assert out["request"]["total"] <= 6000
            if kind == "ask":
                sent = json.dumps(ccm.server.chat_requests()[before:])
                recalled = [b for b in out["banners"] if b.startswith("Recalled")]
                asked[rest[0]] = ("recalled" if recalled else "in the context") if rest[0] in sent else "MISSED"
    assert "MISSED" not in asked.values(), asked
    assert "recalled" in asked.values()  # the budget was passed: some facts had left the context
    assert ccm.status()["context"]["total"] <= 6000


def test_words_that_steer_the_conversation_recall_nothing(ccm):
    """Issue 30: "ok the garden plan is done, conclude it" recalled postgres-pool's "the pool issue is
    fixed, we're done with it": the words that matched were the conversation's, not its content's."""
    ccm.send("/open postgres pool")
    chat(ccm, "The connection pool runs out under load; pgbouncer pool_size is 20.")
    ccm.server.push(text("Good: I'll conclude the effort, the pool issue is finished."))
    ccm.send("the pool issue is fixed, we're done with it")
    ccm.server.push(text("Postgres pool: pgbouncer pool_size raised from 20 to 50."))
    ccm.send("/done")
    ccm.send("/open garden")
    chat(ccm, "Let's plan the vegetable beds.")
    for message in [
        "ok the garden plan is done, conclude it",
        "thanks, that's finished, please wrap it up",
        "ok continue",
        "go on, next one",
        "let's pause and resume later",
        "stop, close it, we're done",
        "fixed! finished, concluded, closed.",
        "merci, c'est terminé, on continue",
        "danke, fertig, weiter bitte",
        "gracias, listo, continuamos luego",
        "díky, hotovo, pokračuj",
    ]:
        out = chat(ccm, message)
        assert not any(b.startswith("Recalled") for b in out["banners"]), message
    out = chat(ccm, "what pool_size did pgbouncer end up with?")  # content words still recall
    assert "Recalled: postgres-pool lines" in " ".join(out["banners"])


def test_a_fact_the_stepped_ambient_window_no_longer_shows_is_recalled(ccm):
    """The request shows the ambient window from a step on its grid (a full window drops a third of
    itself at once): an exchange still among the last ``ambient_window`` (10) but before that step is
    not in the request, so it is recallable like any line that left the window."""
    chat(ccm, "small talk 0: the weather and the tea")
    chat(ccm, "My locker code at the climbing gym is 4729.")
    for i in range(1, 10):
        chat(ccm, f"small talk {i}: the weather and the tea")
    chat(ccm, "What was my locker code at the climbing gym?")  # the fact is the 10th exchange back
    *before, note, _message = ccm.chat_requests()[-1]["messages"]
    assert not any("4729" in str(m.get("content")) for m in before)  # the step left it out of the window
    assert "4729" in note["content"]  # recalled into the context note
