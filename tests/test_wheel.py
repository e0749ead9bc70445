"""The built wheel (not the checkout) carries its prompts and styles and runs a turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_installed_wheel_finds_prompts_and_styles_and_runs_a_turn(tmp_path, llm_server):
    from tests.helpers.openai_server import text

    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(dist.glob("ccm_tui-*.whl"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    llm_server.push(text("Hello from the wheel."))
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(target)!r})
        import ccm_tui
        from ccm_tui import paths
        from ccm_tui.cli import main
        assert ccm_tui.__file__.startswith({str(target)!r}), ccm_tui.__file__
        print(json.dumps({{"prompts": str(paths.prompts_dir()), "styles": str(paths.styles_dir()),
                           "tcss": sorted(p.name for p in paths.styles_dir().glob("*.tcss"))}}))
        sys.exit(main(["send", "--session-dir", {str(tmp_path / "s")!r}, "--model", "openai/fake-model",
                       "--api-base", {llm_server.base_url!r}, "hi"]))
    """)
    env = dict(os.environ, PYTHONPATH="")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    first, *rest = done.stdout.splitlines()
    found = json.loads(first)
    assert found["prompts"].startswith(str(target)) and found["styles"].startswith(str(target))
    assert found["tcss"], "no stylesheets in the wheel"
    assert "Hello from the wheel." in "\n".join(rest)
