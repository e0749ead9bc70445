"""SVG snapshots (pytest-textual-snapshot) of every screen at 150x45, with the demo's scripted model.

Sessions are built straight through the engine (no UI) so the states are exact and fast
to reach; the app then opens them. Update with ``pytest tests/ui --snapshot-update``.
"""

from __future__ import annotations

import pytest

from tests.helpers.tui import SIZE, build_session, demo_app, ready, settle, wait_until


@pytest.fixture(autouse=True)
def _fixed_config_path(monkeypatch):
    # the welcome and settings screens show the config path: keep it the same on every machine
    monkeypatch.setenv("CCM_CONFIG", "/home/user/.config/ccm-tui/config.toml")


async def _main(pilot, focus: str | None = None):
    screen = await ready(pilot)
    if focus:
        await wait_until(pilot, lambda: screen.query_one("Sidebar").focus_effort(focus))
    await settle(pilot)


def test_main_empty(snap_compare, tmp_path):
    assert snap_compare(demo_app(tmp_path / "s"), terminal_size=SIZE, run_before=_main)


def test_main_open_effort(snap_compare, tmp_path):
    app = demo_app(build_session(tmp_path / "s", 3))
    assert snap_compare(app, terminal_size=SIZE, run_before=_main)


def test_main_concluded(snap_compare, tmp_path):
    app = demo_app(build_session(tmp_path / "s", 6))
    assert snap_compare(app, terminal_size=SIZE, run_before=lambda p: _main(p, "japan-trip"))


def test_main_expanded_with_decay_counter(snap_compare, tmp_path):
    app = demo_app(build_session(tmp_path / "s", 8))
    assert snap_compare(app, terminal_size=SIZE, run_before=lambda p: _main(p, "japan-trip"))


def test_main_evicted(snap_compare, tmp_path):
    directory = build_session(tmp_path / "s", 6, summary_eviction_threshold=1)
    app = demo_app(directory, summary_eviction_threshold=1)
    assert snap_compare(app, terminal_size=SIZE, run_before=lambda p: _main(p, "japan-trip"))


def test_main_full_demo(snap_compare, tmp_path):
    app = demo_app(build_session(tmp_path / "s", 11))
    assert snap_compare(app, terminal_size=SIZE, run_before=_main)


def test_effort_menu(snap_compare, tmp_path):
    async def run_before(pilot):
        await _main(pilot, "japan-trip")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: pilot.app.screen.query("ChoiceDialog") or type(pilot.app.screen).__name__ == "ChoiceDialog"
        )
        await settle(pilot)

    app = demo_app(build_session(tmp_path / "s", 6))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_inspector(snap_compare, tmp_path):
    async def run_before(pilot):
        await _main(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "InspectorScreen")
        await pilot.press("down", "down")
        await settle(pilot)

    app = demo_app(build_session(tmp_path / "s", 8))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_log_viewer(snap_compare, tmp_path):
    async def run_before(pilot):
        screen = await ready(pilot)
        screen.efforts.run("japan-trip", "log")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "EffortLogScreen")
        await settle(pilot)

    app = demo_app(build_session(tmp_path / "s", 6))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_first_run(snap_compare, tmp_path):
    from ccm_tui.config import Settings
    from ccm_tui.ui.app import CcmApp

    async def run_before(pilot):
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "WelcomeScreen")
        await settle(pilot)

    app = CcmApp(Settings(), tmp_path / "s", watch=False, warm_up=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_settings(snap_compare, tmp_path):
    async def run_before(pilot):
        await _main(pilot)
        await pilot.press("f4")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "SettingsScreen")
        await settle(pilot)

    assert snap_compare(demo_app(tmp_path / "s"), terminal_size=SIZE, run_before=run_before)


def test_help_keys(snap_compare, tmp_path):
    async def run_before(pilot):
        await _main(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: pilot.app.screen.query(".help-rows"))
        await settle(pilot)

    assert snap_compare(demo_app(tmp_path / "s"), terminal_size=SIZE, run_before=run_before)


def test_main_narrow_80x24(snap_compare, tmp_path):
    app = demo_app(build_session(tmp_path / "s", 3))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_main)


def test_main_medium_100x30(snap_compare, tmp_path):
    app = demo_app(build_session(tmp_path / "s", 3))
    assert snap_compare(app, terminal_size=(100, 30), run_before=_main)


@pytest.fixture
def small_model_map(monkeypatch):
    """A few entries of litellm's bundled map (tests/fixtures/model_map_small.json: chat models of
    three providers, an embedding, an image model, a fine-tune template), so that the picker's
    snapshot does not move with litellm's releases; the OpenAI, Anthropic and DeepSeek keys are set."""
    from pathlib import Path

    from ccm_tui.config import PROVIDER_KEYS
    from ccm_tui.core.models import capabilities as model_facts
    from ccm_tui.core.models import id_check as model_check

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "model_map_small.json"
    monkeypatch.setattr(model_facts, "bundled_model_map", lambda: fixture)
    for names in PROVIDER_KEYS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.setenv(name, "sk-test-fake")
    model_facts.model_map.cache_clear()
    model_check.known_providers.cache_clear()
    yield
    model_facts.model_map.cache_clear()
    model_check.known_providers.cache_clear()


def test_model_picker(snap_compare, tmp_path, llm_server, small_model_map):
    from tests.helpers.tui import server_app

    llm_server.serve_models("fake-model")
    llm_server.serve_models("qwen2.5-coder-32b-instruct", max_model_len=32_768)
    llm_server.serve_models("llama-3.1-8b-instruct", max_model_len=131_072)

    async def run_before(pilot):
        await ready(pilot)
        await settle(pilot)  # the chat's own input stops blinking too: it shows under the dialog
        pilot.app.action_switch_model()
        await wait_until(
            pilot,
            lambda: (
                type(pilot.app.screen).__name__ == "ModelPicker"
                and pilot.app.screen.map_loaded
                and not any("asking" in g.note for g in pilot.app.screen.server)
            ),
        )
        await settle(pilot)

    assert snap_compare(server_app(tmp_path / "s", llm_server.base_url), terminal_size=SIZE, run_before=run_before)
