"""Recall and the words that steer a conversation (issue 30): "ok the garden plan is done, conclude it"
recalled another effort's "the pool issue is fixed, we're done with it". Control words are never searched
by recall, in the languages people chat in; a recall needs content words; and what made each recall
(the words it was found by) reaches the inspector."""

from __future__ import annotations

import pytest

from ccm_tui.core.engine.opening import OpenOptions
from ccm_tui.core.search._rare_words import candidate_words
from ccm_tui.core.service.controller import SessionController
from ccm_tui.core.service.run_state import SendMessage
from ccm_tui.core.session.session import Session
from ccm_tui.core.text.words import is_control_word
from ccm_tui.ui.screens.inspector import recall_text
from tests.helpers.openai_server import text
from tests.helpers.sessionkit import concluded_effort, exchange, settings_for


@pytest.mark.parametrize(
    "message",
    [
        "ok the garden plan is done, conclude it",
        "thanks, that's finished — please wrap it up",
        "ok continue",
        "go on, next",
        "let's pause here and resume later",
        "stop. close it. we're done.",
        "fixed! finished, concluded, closed, resolved, solved",
        "great, perfect, awesome, cheers",
        "again please",
        "Merci, c'est terminé, on continue plus tard",
        "Danke, fertig! Weiter bitte, später nochmal",
        "Gracias, listo, continuamos luego",
        "Grazie, fatto, continua dopo",
        "Obrigado, pronto, continuar depois",
        "Díky, hotovo, pokračuj později",
        "Спасибо, готово, продолжим потом",
    ],
)
def test_messages_of_control_words_search_nothing_beyond_their_topic(message):
    left = set(candidate_words(message))
    assert left <= {"garden", "plan"}, left


@pytest.mark.parametrize(
    ("message", "content"),
    [
        ("ok the pgbouncer pool is fixed, conclude it", {"pgbouncer", "pool"}),
        ("thanks! what was the locker code again?", {"locker", "code"}),
        ("c'est terminé pour le jardin potager", {"jardin", "potager"}),
    ],
)
def test_content_words_are_still_searched_beside_control_words(message, content):
    assert content <= set(candidate_words(message))
    assert not any(is_control_word(w) for w in candidate_words(message))


@pytest.mark.parametrize("word", ["Terminé", "FERTIG", "concluding", "wrapped", "stopped", "finishes", "pokračuj"])
def test_control_words_are_read_in_any_case_form_and_accent(word):
    assert is_control_word(word)


@pytest.mark.parametrize("word", ["garden", "pool", "pgbouncer", "tomato", "kyoto", "sort", "thread", "session"])
def test_content_words_are_not_control_words(word):
    assert not is_control_word(word)


def test_the_inspector_text_names_the_words_each_recall_was_found_by():
    from ccm_tui.core.service.controller import RecallSource

    garden = RecallSource("garden lines 1-2", "effort", "garden", (1, 2), ("marzano", "tomato"))
    shown = recall_text((garden,), (), draft=True)
    assert "garden lines 1-2 — found by: marzano, tomato" in shown
    assert "recalls nothing" in recall_text((), (garden,), draft=True)
    assert "The last message recalled:\n  garden lines 1-2" in recall_text((), (garden,), draft=False)


@pytest.fixture
async def controller(tmp_path, llm_server):
    directory = tmp_path / "s"
    with Session.open(directory) as session:
        concluded_effort(
            session,
            "postgres pool",
            exchange("pgbouncer pool_size is 20 and the pool runs out", "Raise it")
            + exchange("the pool issue is fixed, we're done with it", "Good, I'll conclude it."),
            summary="Postgres pool: pgbouncer pool_size raised.",
        )
        concluded_effort(session, "garden", exchange("I grow San Marzano tomatoes", "Lovely"), summary="Garden.")
    made = SessionController(directory, settings_for(llm_server), options=OpenOptions(retry_base=0))
    await made.open()
    yield made
    await made.close()


async def test_the_inspection_carries_the_draft_recall_and_the_last_ones_words(controller, llm_server):
    quiet = await controller.inspect("ok the garden plan is done, conclude it")
    assert quiet.recalled == () and quiet.context.layers["recall"] == 0
    asked = await controller.inspect("which pgbouncer pool_size did we have?")
    (source,) = asked.recalled
    assert source.log == "postgres-pool" and source.label.startswith("postgres-pool line")
    assert set(source.terms) <= {"pgbouncer", "pool_size", "pool", "size"} and "pgbouncer" in source.terms
    assert asked.context.layers["recall"] > 0 and "pgbouncer pool_size is 20" in asked.context.messages[-2]["content"]
    llm_server.push(text("San Marzano."))
    await controller.run(SendMessage("which tomato variety do I grow?"))
    after = await controller.inspect()
    assert after.recalled == () and [s.log for s in after.last_recalled] == ["garden"]
    assert after.last_recalled[0].terms == ("tomato",) or "tomato" in after.last_recalled[0].terms
