"""Commands that must start fast stay off litellm (seconds of import), even with a model set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def test_opening_a_session_with_a_model_reads_the_budget_without_importing_litellm(tmp_path):
    code = (
        "import sys, json; from ccm_tui.config import Settings; from ccm_tui.core.engine.opening import open_engine; "
        f"e = open_engine({str(tmp_path / 's')!r}, Settings(model='ollama/llama2')); "
        "print(json.dumps({'budget': e.budget, 'source': e.budget_source, 'litellm': 'litellm' in sys.modules})); "
        "e.close()"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    # llama2's 4,096-token window (litellm's bundled map) → 75 % of it
    assert json.loads(done.stdout) == {"budget": 3072, "source": "model", "litellm": False}


def test_status_and_search_with_a_model_configured_never_import_litellm(tmp_path):
    session = tmp_path / "s"
    code = (
        "import sys; from ccm_tui.cli import main; "
        f"main(['status', '--session-dir', {str(session)!r}, '--json']); "
        f"main(['search', '--session-dir', {str(session)!r}, '--json', 'auth']); "
        "bad = [m for m in ('litellm', 'openai', 'textual') if m in sys.modules]; "
        "sys.stderr.write(repr(bad)); sys.exit(1 if bad else 0)"
    )
    (session / "efforts").mkdir(parents=True)
    done = run_python(code, {"CCM_MODEL": "anthropic/claude-3-5-sonnet-20240620"})
    assert done.returncode == 0, done.stderr
