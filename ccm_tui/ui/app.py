"""The Textual application: a thin shell around the chat screen.

``run_app`` is what the CLI calls. The app sets the theme, pushes the chat
screen (which owns the session) and, on a first launch without a model, the
welcome screen. Everything else lives in ``screens/`` and ``widgets/``.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from dataclasses import replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from .. import config, paths
from ..config import (
    ConfigError,
    Settings,
    load_settings,
    read_config_file,
    save_config_file,
)
from . import terminal_keys
from .messages import ChatInputReady, ShowWelcome
from .palette import CcmCommands, EffortSearch
from .screens.chat import ChatScreen
from .startup_keys import StartupKeys, as_text

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from ..core.api import ModelCheck
    from .watch_worker import WatchWorker

DEMO_BUDGET = 6_000
QUIT_GRACE_S = 5.0  # after SIGHUP/SIGTERM: the UI's own quit, then the session's close without it
QUIT_KEY = "ctrl+q"


def stylesheets() -> list[str | PurePath]:
    """Every ``styles/*.tcss`` (absolute paths: found in the checkout and in the installed wheel)."""
    return sorted(paths.styles_dir().glob("*.tcss"))


def demo_settings() -> Settings:
    from ..demo import DEMO_MODEL

    try:
        theme = load_settings().theme
    except ConfigError:
        theme = Settings().theme
    return Settings(model=DEMO_MODEL, token_budget=DEMO_BUDGET, theme=theme)


class CcmApp(App[int]):
    """ccm-tui. ``demo`` runs the offline scripted model in a temporary session."""

    TITLE = "ccm-tui"
    COMMANDS = App.COMMANDS | {CcmCommands}
    BINDINGS = [
        Binding(QUIT_KEY, "quit", "Quit", id="quit", priority=True, tooltip="Quit (a running reply is saved first)"),
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            id="command_palette",
            show=False,
            tooltip="Every command, searchable",
        ),
        Binding("f1", "help", "Keys", id="help", tooltip="This list of keys"),
    ]

    def __init__(
        self,
        settings: Settings | None,
        session_dir: Path,
        *,
        demo: bool = False,
        demo_delay: float = 0.03,
        watch: bool = True,
        warm_up: bool = True,
        autoplay: bool | None = None,
        typed: str = "",
    ) -> None:
        super().__init__(css_path=stylesheets())
        terminal_keys.install()
        self.demo = demo
        self.settings = settings or (demo_settings() if demo else Settings())
        self.session_dir = Path(session_dir)
        self.server_base = self.settings.api_base  # the --api-base server: the picker lists its models
        self.demo_delay = demo_delay
        self.options: dict[str, Any] = {
            "watch": watch,
            "warm_up": warm_up,
            "autoplay": config.demo_autoplay() if autoplay is None else autoplay,
            "typed": typed,
        }
        self.startup_keys = StartupKeys()  # keys typed before the chat input is ready wait there
        self._quit_when_ready = False  # a quit asked while the chat was being built (see action_quit)
        self._exited = threading.Event()  # set when run() returns (see _quit_on_hangup)
        self._stop_watchdog: threading.Thread | None = None
        self.watcher: WatchWorker | None = None  # watch_in_tui: the agents' sessions captured meanwhile

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification is plain text: they carry effort names, file paths, provider errors and
        the user's own words, which Textual would otherwise parse as markup (``[docs]`` vanishes, ``[/]``
        ends the app). ``markup`` is accepted for Textual's callers and ignored."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    @property
    def chat_screen(self) -> ChatScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, ChatScreen):
                return screen
        return None

    def get_default_screen(self) -> Screen[Any]:
        """The chat is the app's first screen (not pushed over a blank one: one screen less to
        compose and style before the first paint)."""
        return self._new_chat()

    def on_mount(self) -> None:
        self.call_after_refresh(gc.enable)  # `ccm-tui` turned it off for the start (commands/tui.py)
        self._quit_on_hangup()
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        if not self.demo and not self.settings.model:
            self.show_welcome()
        if self.settings.watch_in_tui and not self.demo:
            self.call_after_refresh(self._start_watcher)

    def _start_watcher(self) -> None:
        """``watch_in_tui``: the agents' sessions captured while the app is open (a thread)."""
        from .watch_worker import WatchWorker

        self.watcher = WatchWorker(self.settings)
        self.watcher.start()

    async def on_event(self, event: events.Event) -> None:
        """Keys and pastes that come before the chat input is ready wait for it (``startup_keys``)."""
        if self.startup_keys.hold(event):
            return
        await super().on_event(event)

    async def on_chat_input_ready(self, _message: ChatInputReady) -> None:
        """The chat input is ready: the keys held until now go where keys go, in the order they were
        typed, before any key after them: into the input (Enter sends), or to a binding of the chat."""
        held = self.startup_keys.release()
        if self._quit_when_ready:
            await self.action_quit()
            return
        chat = self.chat_screen
        if chat is not None and self.screen is not chat:
            await self._type_behind(chat, held)
            return
        for event in held:
            await super().on_event(event)

    async def _type_behind(self, chat: ChatScreen, held: list[events.Key | events.Paste]) -> None:
        """The welcome screen (a first launch without a model) came up over the chat before the held
        keys could reach its input: their text goes into it (an Enter as a new line: nothing can be
        sent yet), not to the welcome's keys (s, d, q) that no one had seen; a quit still quits, the
        other keys are dropped."""
        for event in held:
            text = as_text(event)
            if isinstance(event, events.Paste):
                chat.prompt.paste(event.text)
            elif text is not None:
                chat.prompt.type_in(text)
            elif event.key == QUIT_KEY:
                await self.action_quit()
                return

    def _new_chat(self) -> ChatScreen:
        llm = None
        if self.demo:
            from ..demo import DemoModel

            llm = DemoModel(delay=self.demo_delay)
        return ChatScreen(self.settings, self.session_dir, demo=self.demo, llm=llm, **self.options)

    def _remember_theme(self, theme: Any) -> None:
        try:
            save_config_file({"theme": self.theme})
        except (ConfigError, OSError) as exc:
            self.notify(f"The theme was not saved: {exc}", severity="warning")

    def show_welcome(self) -> None:
        from .screens.welcome import WelcomeScreen

        self.push_screen(WelcomeScreen(), self._welcome_done)

    def _welcome_done(self, choice: str | None) -> None:
        if choice is None:
            self.exit(0)
        elif choice == "settings" and self.chat_screen is not None:
            self.action_settings()
        elif choice == "demo":
            self.start_demo()

    def start_demo(self) -> None:
        """Leave the real session and run the offline demo in a temporary one."""
        import tempfile

        self._demo_dir = tempfile.TemporaryDirectory(prefix="ccm-demo-")
        self.demo = True
        self.settings = demo_settings()
        self.session_dir = Path(self._demo_dir.name) / "demo"
        if self.chat_screen is not None:
            from ..demo import DemoModel

            self.chat_screen.restart(self.settings, self.session_dir, demo=True, llm=DemoModel(delay=self.demo_delay))

    def action_search_efforts(self) -> None:
        """Ctrl+F: ranked search over every effort and the chat, as you type."""
        from textual.command import CommandPalette

        self.push_screen(
            CommandPalette(providers=[EffortSearch], placeholder="Search all efforts… (* first: every session)")
        )

    def on_show_welcome(self, _message: ShowWelcome) -> None:
        self.show_welcome()

    def action_help(self) -> None:
        from .screens.help import PROMPT_KEYS, HelpScreen
        from .widgets.effort_list import EffortItem

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(
            HelpScreen(
                [
                    ("Chat", [*ChatScreen.BINDINGS, *self.BINDINGS]),
                    ("Writing a message", PROMPT_KEYS),
                    (
                        "The effort list (Ctrl+G; the keys valid for the selected effort show in the footer)",
                        EffortItem.BINDINGS,
                    ),
                ]
            )
        )

    # ---------------------------------------------------------------- settings
    def action_settings(self) -> None:
        from .screens.settings import SettingsScreen

        try:
            saved = read_config_file()
        except ConfigError as exc:
            self.notify(f"{exc}", title="The config file is broken", severity="error", timeout=15)
            return
        self.push_screen(SettingsScreen(self.settings, saved), self._settings_saved)

    def _settings_saved(self, values: dict[str, Any] | None) -> None:
        if not values:
            return
        if values.get("theme"):
            self.theme = values["theme"]
        if self.demo:
            self.notify(
                "Saved. The demo keeps its scripted model; start ccm-tui without 'demo' to use yours.", title="Settings"
            )
            return
        try:
            fresh = load_settings()
        except ConfigError as exc:
            self.notify(f"{exc}", title="The config file is broken", severity="error", timeout=15)
            return
        flags = {
            k: getattr(self.settings, k) for k, source in self.settings.sources.items() if source == "command line"
        }
        self.notify("Settings saved", title="Settings")
        self.server_base = fresh.with_overrides("command line", **flags).api_base
        self.use_settings(fresh.with_overrides("command line", **flags))

    def action_switch_model(self, typed: str = "") -> None:
        if self.demo:
            self.notify("The demo runs its scripted model only.", severity="warning")
            return
        from .screens.model_picker import ModelPicker

        def chosen(picked: tuple[str, ModelCheck, str | None] | None) -> None:
            if picked:  # checked by the picker (off the event loop); a refused id kept it open
                self._switch_checked(*picked)

        picker = ModelPicker(self.settings.model, self.settings.api_base, typed=typed, server=self.server_base)
        self.push_screen(picker, chosen)

    def _switch_checked(self, model: str, check: ModelCheck, api_base: str | None) -> None:
        self.use_settings(replace(self.settings, model=model, api_base=api_base))
        caution = f" — {check.reason}" if check.reason else ""
        self.notify(
            f"Using {model} for this run (save it in Settings to keep it){caution}",
            title="Model",
            severity="warning" if check.reason else "information",
        )

    def use_settings(self, settings: Settings) -> None:
        """The settings of this run from now on: the chat reopens its session with them."""
        if self.chat_screen is None or self.chat_screen.apply_settings(settings):
            self.settings = settings

    def _quit_on_hangup(self) -> None:
        """Closing the terminal (SIGHUP) or being asked to stop (SIGTERM) is a quit, as Ctrl+Q: the session
        is closed cleanly (a running reply written first), so the next start has nothing to recover.

        The handler is a plain signal handler, not the event loop's: once the terminal is gone Textual's
        writer thread dies on its first write, its queue fills, and the loop blocks in a write for good,
        so a handler the loop runs never would (the process stayed, spinning a core, with the session
        open). This one runs even then: it asks the loop to quit and gives it :data:`QUIT_GRACE_S`; a
        loop that does not answer has the session closed from a thread, and the process ends."""
        import signal

        if self.is_headless or threading.current_thread() is not threading.main_thread():
            return  # (tests run the app headless, or off the main thread: the default handlers stay)
        loop = asyncio.get_running_loop()
        for name in ("SIGHUP", "SIGTERM"):
            number = getattr(signal, name, None)
            if number is not None:
                signal.signal(number, lambda _signo, _frame: self._stop_asked_from_signal(loop))

    def _stop_asked_from_signal(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._stop_watchdog is None:
            self._stop_watchdog = threading.Thread(target=self._stop_within_grace, args=(loop,), daemon=True)
            self._stop_watchdog.start()

    def _stop_within_grace(self, loop: asyncio.AbstractEventLoop) -> None:
        """(The watchdog's thread.) Quit through the loop as Ctrl+Q does; past the grace, without it."""
        import os

        try:
            loop.call_soon_threadsafe(self._stop_asked)
        except RuntimeError:
            pass  # the loop has already ended
        if self._exited.wait(QUIT_GRACE_S):
            return
        link = self.chat_screen.link if self.chat_screen is not None else None
        if link is not None:
            link.close_now(QUIT_GRACE_S)  # the running reply cancelled and written, the session closed
        os._exit(0)

    def _stop_asked(self) -> None:
        if not getattr(self, "_stopping", False):
            self._stopping = True
            self.run_worker(self.action_quit(), group="quit", exit_on_error=False)

    async def action_quit(self) -> None:
        """Quit, the session closed first. Asked while the chat screen is still being built (a SIGTERM or
        a hang-up at launch), it waits until the chat is ready: ending the app mid-mount left widgets
        querying children already gone (a NoMatches traceback instead of a quiet exit)."""
        if self.startup_keys.starting:
            self._quit_when_ready = True
            return
        chat = self.chat_screen
        if chat is not None:
            await chat.link.close()  # a running reply is cancelled and written first
        if self.watcher is not None:
            self.watcher.close()
        self.exit(0)


def run_app(
    *, settings: Settings | None = None, session_dir: Path | None = None, demo: bool = False, typed: str = ""
) -> int:
    """Run the TUI until the user quits; returns the exit code (``typed``: keys typed before it started)."""
    if demo or session_dir is None:  # the demo's session lives in a scratch directory
        import tempfile

        with tempfile.TemporaryDirectory(prefix="ccm-demo-") as scratch:
            return _run(CcmApp(settings, Path(scratch) / "demo", demo=True, typed=typed))
    return _run(CcmApp(settings, session_dir, demo=demo, typed=typed))


def _run(app: CcmApp) -> int:
    try:
        result = app.run()
    finally:
        app._exited.set()  # a hang-up's watchdog, if any, has nothing left to do
    return int(result or app.return_code or 0)
