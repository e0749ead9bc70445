"""Slash commands through ``ccm-tui send``: efforts managed without the model, answers without a request."""

from __future__ import annotations

from tests.helpers.openai_server import fault, text


def test_open_then_a_message_is_logged_to_the_effort_and_no_model_was_asked_to_open(ccm):
    opened = ccm.send("/open Japan trip")
    assert opened["command"] == "/open Japan trip" and opened["banners"] == ["--- Opened effort: japan-trip ---"]
    assert opened["active_effort"] == "japan-trip" and not ccm.server.chat_requests()
    ccm.server.push(text("April is cherry-blossom season."))
    reply = ccm.send("When should we go?")
    assert reply["logged_to"] == "japan-trip"
    assert [m["content"] for m in ccm.lines("efforts/japan-trip.jsonl")][-2:] == [
        "When should we go?",
        "April is cherry-blossom season.",
    ]


def test_done_asks_the_summary_model_and_search_and_status_answer_without_a_request(ccm):
    ccm.send("/open Japan trip")
    ccm.server.push(text("The locker code at Kyoto station is 4729."))
    ccm.send("Where do we leave the bags?")
    ccm.server.push(text("Japan trip: Kyoto station locker 4729 for the bags."))
    done = ccm.send("/done")
    assert "--- Concluded effort: japan-trip ---" in done["banners"]
    assert ccm.effort("japan-trip")["summary"] == "Japan trip: Kyoto station locker 4729 for the bags."
    assert len(ccm.summary_requests()) == 1
    before = len(ccm.server.chat_requests())
    found = ccm.send("/search locker code")
    assert found["result"]["results"][0]["id"] == "japan-trip" and "4729" in found["reply"]
    status = ccm.send("/status")
    assert "japan-trip" in status["reply"] and status["result"]["efforts"][0]["status"] == "concluded"
    assert len(ccm.server.chat_requests()) == before  # answered from the session, not by the model


def test_a_failing_summary_model_still_concludes_with_an_extracted_summary(ccm):
    ccm.send("/open Japan trip")
    ccm.server.push(text("Kyoto first, then Osaka; the locker code is 4729."))
    ccm.send("Plan the route")
    ccm.server.push(*[fault(500)] * 6)
    done = ccm.send("/conclude japan-trip")
    assert any("extracted from the log" in b for b in done["banners"])
    summary = ccm.effort("japan-trip")["summary"]
    assert ccm.effort("japan-trip")["status"] == "concluded" and "Kyoto" in summary


def test_unknown_commands_and_missing_arguments_are_one_line_usage_errors(ccm):
    rc, out, err = ccm.run(*ccm.send_argv("/frob"))
    assert rc == 2 and "unknown command /frob" in err and "Traceback" not in err
    rc, out, err = ccm.run(*ccm.send_argv("/reopen"))
    assert rc == 2 and "/reopen needs an effort id" in err


def test_a_refused_command_fails_in_plain_words(ccm):
    ccm.send("/open trip")
    rc, out, err = ccm.run(*ccm.send_argv("/expand trip"))
    assert rc == 1 and "is open, its log is already in context" in err


def test_a_double_slash_sends_the_literal_message(ccm):
    ccm.server.push(text("That is a path."))
    reply = ccm.send("//etc/hosts is a file")
    assert reply["reply"] == "That is a path."
    assert ccm.chat_requests()[-1]["messages"][-1]["content"] == "/etc/hosts is a file"


def test_open_of_a_name_an_effort_has_switches_to_it_or_says_it_is_concluded(ccm):
    ccm.send("/open vegetable garden")
    ccm.send("/open tax return")
    again = ccm.send("/open Vegetable_Garden")
    assert again["banners"] == ["--- Switched to effort: vegetable-garden ---"]
    assert "already open" in again["reply"] and again["active_effort"] == "vegetable-garden"
    ccm.server.push(text("Tax return: receipts gathered."))
    ccm.send("/done tax-return")
    refused = ccm.send("/open tax returns", expect=1)
    assert "concluded effort tax-return" in refused["error"] and "/reopen tax-return" in refused["error"]
    assert sorted(e["id"] for e in ccm.manifest()["efforts"]) == ["tax-return", "vegetable-garden"]
