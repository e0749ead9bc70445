"""The model picker ("Switch model…", issue 23): filter by typing, Enter switches to the highlighted
model, a typed id that is not listed is checked first (refused: the reason, and the dialog stays
with the text), Escape closes. Against the fake OpenAI server's /models and litellm's real map."""

from __future__ import annotations

import socket

import pytest
from textual.widgets import Input

from ccm_tui.config import PROVIDER_KEYS, Settings
from ccm_tui.core.api import CatalogEntry
from ccm_tui.ui.app import CcmApp
from ccm_tui.ui.screens.model_picker import ModelPicker, PickerList
from tests.helpers.tui import SIZE, ready, server_app, wait_until


@pytest.fixture(autouse=True)
def _openai_key_only(monkeypatch):
    for names in PROVIDER_KEYS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fake")


def screen_rows(app) -> list[str]:
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


def listed(picker: ModelPicker) -> list[str]:
    return [row.id for row in picker.rows if isinstance(row, CatalogEntry)]


async def open_picker(pilot) -> ModelPicker:
    await ready(pilot)
    app = pilot.app
    app.action_switch_model()
    return await wait_until(
        pilot,
        lambda: isinstance(app.screen, ModelPicker) and app.screen.map_loaded and listed(app.screen) and app.screen,
        what="the picker and its lists",
    )


async def wait_for_server(pilot, picker: ModelPicker) -> None:
    await wait_until(pilot, lambda: not any("asking" in g.note for g in picker.server), what="the server's list")
    await pilot.pause()


async def test_typing_filters_and_enter_switches_to_the_highlighted_model(tmp_path, llm_server):
    llm_server.serve_models("fake-model", "qwen2.5-7b-instruct", "llama-3.1-8b-instruct")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await wait_for_server(pilot, picker)
        assert listed(picker)[:3] == ["openai/fake-model", "openai/qwen2.5-7b-instruct", "openai/llama-3.1-8b-instruct"]
        assert "openai/gpt-4o-mini" in listed(picker)  # the OpenAI key is set: its chat models too
        assert picker.highlighted_row() == CatalogEntry("openai/fake-model", "server")  # the current one

        await pilot.press(*"qwen")
        assert listed(picker) == ["openai/qwen2.5-7b-instruct"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, ModelPicker), what="the picker to close")
        assert pilot.app.settings.model == "openai/qwen2.5-7b-instruct"
        await wait_until(pilot, lambda: "model  openai/qwen2.5-7b-instruct" in screen_rows(pilot.app)[0])


async def test_arrow_keys_move_the_highlight_and_the_rows_show_windows_and_tools(tmp_path):
    app = CcmApp(Settings(model="openai/gpt-4o"), tmp_path / "s", watch=False, warm_up=False)  # no --api-base
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        assert not picker.server and "openai/gpt-4o" in listed(picker)
        await pilot.press(*"gpt-4o-mini")
        assert picker.highlighted_row() == CatalogEntry("openai/gpt-4o-mini", "openai", 128_000, True)
        rows = screen_rows(pilot.app)
        row = next(r for r in rows if "openai/gpt-4o-mini " in r)
        assert "128k" in row and "tools" in row
        assert any("openai/gpt-4o-mini · 128,000-token window · calls tools (litellm" in r for r in rows)
        await pilot.press("down")
        chosen = picker.highlighted_row()
        assert isinstance(chosen, CatalogEntry) and chosen.id.startswith("openai/gpt-4o-mini-")
        await pilot.press("enter")
        await wait_until(pilot, lambda: pilot.app.settings.model == chosen.id, what="the switch")


async def test_a_typed_unknown_id_is_refused_with_the_reason_and_the_dialog_stays(tmp_path, llm_server):
    llm_server.serve_models("fake-model")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"openai/gpt-nonexistent")
        assert listed(picker) == []
        await pilot.press("enter")
        status = picker.query_one("#model-status")
        await wait_until(pilot, lambda: "Not switched" in str(status.render()), what="the refusal")
        reason = str(status.render())
        assert "does not serve “gpt-nonexistent”" in reason and "fake-model" in reason
        assert pilot.app.screen is picker and picker.query_one(Input).value == "openai/gpt-nonexistent"
        assert pilot.app.settings.model == "openai/fake-model"

        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, ModelPicker), what="Escape to close")
        assert pilot.app.settings.model == "openai/fake-model"


async def test_a_providers_model_goes_to_the_provider_and_a_servers_model_back_to_the_server(tmp_path, llm_server):
    llm_server.serve_models("fake-model")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"gpt-4o-mini", "enter")  # listed under openai (its key is set): not the server's
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, ModelPicker), what="the switch")
        assert (pilot.app.settings.model, pilot.app.settings.api_base) == ("openai/gpt-4o-mini", None)

        picker = await open_picker(pilot)  # the server's models are still offered
        await wait_until(pilot, lambda: "openai/fake-model" in listed(picker), what="the server's list")
        await pilot.press(*"fake-model", "enter")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, ModelPicker), what="the switch back")
        assert (pilot.app.settings.model, pilot.app.settings.api_base) == ("openai/fake-model", llm_server.base_url)


async def test_an_id_that_is_not_listed_but_usable_is_checked_and_taken(tmp_path, llm_server):
    llm_server.serve_models("fake-model")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await wait_for_server(pilot, picker)
        llm_server.serve_models("served-after-the-list")  # the list is older than the server
        await pilot.press(*"openai/served-after-the-list")
        assert listed(picker) == [] and picker.highlighted_row() == "typed"
        await pilot.press("enter")
        await wait_until(pilot, lambda: pilot.app.settings.model == "openai/served-after-the-list", what="the switch")


async def test_a_server_that_does_not_answer_is_said_inline_and_the_map_is_still_listed(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with server_app(tmp_path / "s", f"http://127.0.0.1:{port}/v1").run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await wait_for_server(pilot, picker)
        assert any("server not answering" in row for row in screen_rows(pilot.app))
        assert "openai/gpt-4o" in listed(picker)
        await pilot.press(*"gpt")  # the note stays while filtering
        assert any("server not answering" in row for row in screen_rows(pilot.app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, ModelPicker))


async def test_the_list_never_takes_the_keyboard(tmp_path, llm_server):
    llm_server.serve_models("fake-model")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await pilot.click(PickerList)
        assert isinstance(picker.focused, Input)


async def test_switch_model_refuses_an_unknown_id_and_says_why(tmp_path, llm_server):
    from textual.widgets import Input

    from ccm_tui.ui.screens.model_picker import ModelPicker

    llm_server.serve_models("fake-model")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await ready(pilot)
        app = pilot.app
        app.action_switch_model()
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, ModelPicker) and app.screen.query(Input) and app.screen
        )
        picker.query_one(Input).value = "openai/gpt-nonexistent"
        await pilot.pause()
        await pilot.press("enter")
        status = picker.query_one("#model-status")
        await wait_until(pilot, lambda: "Not switched" in str(status.render()), what="the refusal")
        assert "gpt-nonexistent" in str(status.render())
        assert app.settings.model == "openai/fake-model"
        assert app.screen is picker and picker.query_one(Input).value == "openai/gpt-nonexistent"  # to correct it
        await pilot.press("escape")
