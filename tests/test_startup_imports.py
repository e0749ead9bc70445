"""The TUI paints before the core loads: what its start-up imports is the screen and the vocabulary it
draws, never the session machinery (YAML, SQLite, the manifest, search, litellm) or the other commands'
modules, which load in a thread once the first frame is up (issue 23, first paint)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "yaml",
    "sqlite3",
    "markdown_it",
    "litellm",
    "tiktoken",
    "urllib.request",
    "ccm_tui.core.session.session",
    "ccm_tui.core.service.controller",
    "ccm_tui.core.search",
    "ccm_tui.commands.send",
    "ccm_tui.commands.restore",
    "ccm_tui.commands.mcp",
)


def loaded_after(code: str) -> list[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout.splitlines()[-1])


def test_the_tuis_start_path_loads_no_session_machinery():
    modules = loaded_after(
        "from ccm_tui.commands import build_parser, names_a_command, runner\n"
        "argv = ['--session-dir', '/tmp/x', '--model', 'openai/gpt-4o-mini']\n"
        "build_parser(commands=names_a_command(argv)).parse_args(argv)\n"
        "runner(None)\n"
        "import ccm_tui.ui.app"
    )
    assert [m for m in HEAVY if m in modules] == []


def test_a_command_word_still_loads_its_module_and_help_lists_every_command():
    from ccm_tui.commands import build_parser, names_a_command

    assert names_a_command(["send", "hi"]) and names_a_command(["--model", "m", "status"])
    assert names_a_command(["--help"]) and names_a_command(["sned"])  # a typo: the full parser explains it
    assert not names_a_command(["--session", "send", "--debug"])  # 'send' here is a session's name
    help_text = build_parser().format_help()
    assert all(name in help_text for name in ("send", "status", "search", "restore", "replay", "repair", "mcp"))
