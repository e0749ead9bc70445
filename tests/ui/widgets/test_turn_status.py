"""The status line of a running turn: what it says while the client loads and once the model is asked."""

from __future__ import annotations


async def test_the_status_label_leaves_loading_the_client_once_the_model_is_asked():
    from textual.app import App, ComposeResult

    from ccm_tui.core.turn import events as te
    from ccm_tui.ui.turn_presenter import TurnPresenter
    from ccm_tui.ui.widgets.chat_log import ChatLog

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

    async with Host().run_test() as pilot:
        presenter = TurnPresenter(pilot.app.query_one(ChatLog), lambda _: None, lambda *a, **k: None)
        presenter.begin("hi")
        steps = [
            te.TurnStarted(turn=1, user="hi"),
            te.Waiting(turn=1, reason="loading the model client…", cause="model"),
            te.Asking(turn=1, attempt=1),
            te.Banner(turn=1, text="provider hiccup (503); retrying in 4.5 s", kind="info"),
            te.Waiting(turn=1, reason="retrying in 4.5 s", cause="retry"),
            te.Asking(turn=1, attempt=2),
        ]
        labels = [await presenter.apply(event) for event in steps]
        assert labels == [
            "Thinking",
            "Loading the model client…",
            "Thinking",
            None,
            "Retrying in 4.5 s",
            "Thinking (attempt 2)",
        ]
