"""The core never imports the UI; commands that must start fast do not import litellm."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "ccm_tui"
UI_FREE = ["core", "restore"]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            prefix = "." * node.level
            names.add(prefix + node.module)
    return names


def test_core_and_restore_never_import_textual_or_the_ui():
    offenders = []
    for package in UI_FREE:
        for path in (ROOT / package).rglob("*.py"):
            for name in imported_modules(path):
                if name.split(".")[0] == "textual" or ".ui" in name or name.startswith("ccm_tui.ui"):
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_search_and_status_do_not_import_litellm_or_textual(tmp_path):
    code = (
        "import sys; from ccm_tui.cli import main; "
        f"main(['search', '--session-dir', {str(tmp_path)!r}, '--json', 'x']); "
        f"main(['status', '--session-dir', {str(tmp_path)!r}, '--json']); "
        "bad = [m for m in ('litellm', 'textual', 'openai') if m in sys.modules]; "
        "sys.stderr.write(repr(bad)); sys.exit(1 if bad else 0)"
    )
    (tmp_path / "efforts").mkdir()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
