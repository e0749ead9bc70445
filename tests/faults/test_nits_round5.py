"""Issue 42, item 8: a FIFO or a deeply nested config.toml, a broken manifest found before the model
library is imported, a quoted empty id, a cut reply's banners that agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ccm_tui.core.api import SlashError, parse
from tests.helpers.cli_session import open_auth_bug


def run_cli(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # a hang fails on the timeout
        [sys.executable, "-m", "ccm_tui.cli", *argv],
        capture_output=True,
        text=True,
        timeout=40,
        env={**os.environ, "PYTHONPATH": os.getcwd(), **env},
    )


def test_a_fifo_config_file_is_refused_in_one_line_not_waited_on(tmp_path):
    config = tmp_path / "config.toml"
    os.mkfifo(config)
    done = run_cli("status", "--session-dir", str(tmp_path / "s"), CCM_CONFIG=str(config))
    assert done.returncode != 0
    assert "not a regular file" in done.stderr and str(config) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_deeply_nested_config_file_is_named_and_the_reason_said(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    done = run_cli("status", "--session-dir", str(tmp_path / "s"), CCM_CONFIG=str(config))
    assert done.returncode != 0
    assert str(config) in done.stderr and "nested too deeply" in done.stderr
    assert "RecursionError" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_send_says_a_broken_manifest_before_importing_the_model_library(ccm):
    open_auth_bug(ccm)
    (ccm.dir / "manifest.yaml").write_text("efforts: [unclosed\n")
    probe = (
        "import sys; from ccm_tui.cli import main; rc = main(sys.argv[1:]); "
        "print('litellm' in sys.modules, file=sys.stderr); sys.exit(rc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *ccm.send_argv("hello")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and "manifest.yaml" in lines[0]
    assert lines[-1] == "False"  # the model library was never imported


@pytest.mark.parametrize("typed", ["/switch ''", '/switch ""', "/switch '  '"])
def test_a_quoted_empty_id_is_a_missing_id(typed):
    with pytest.raises(SlashError, match="needs an effort id"):
        parse(typed)
    assert parse("/switch 'auth-bug'").argument == "auth-bug"
    assert parse('/search "exact words"').argument == '"exact words"'  # a query keeps its quotes


def test_a_cut_reply_gets_one_figure_not_two(ccm):
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ccm-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("message_max_tokens = 100\nreply_max_tokens = 600\n", encoding="utf-8")
    from tests.helpers.openai_server import text

    ccm.server.push(text(" ".join(f"word{i}" for i in range(3000))))
    out = ccm.send("write a lot")
    assert out.get("cut") is True
    cut = [b for b in out["banners"] if "cut at" in b]
    capped = [b for b in out["banners"] if "later requests carry" in b]
    assert len(cut) == 1 and len(capped) == 1
    assert re.findall(r"[\d,]+ tokens", capped[0]) == ["100 tokens"]  # no second count of the same reply
