"""Every numeric option is a finite number in its range: ``--wait nan`` was accepted (issue 33, hole 10)."""

from __future__ import annotations

import pytest

from ccm_tui.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["send", "--wait", "nan", "hi"], "must be a number of seconds from 0 to 86400, got 'nan'"),
        (["send", "--wait", "inf", "hi"], "got 'inf'"),
        (["send", "--wait", "-1", "hi"], "got '-1'"),
        (["send", "--wait", "soon", "hi"], "'soon' is not a number of seconds"),
        (["mcp", "--wait", "nan"], "got 'nan'"),
        (["mcp", "--wait", "1e400"], "got '1e400'"),
        (["mcp", "--wait", "-0.5"], "got '-0.5'"),
        (["search", "--limit", "0", "x"], "must be from 1 to 10,000, got 0"),
        (["search", "--limit", "100000000000000000000", "x"], "got 100000000000000000000"),
        (["search", "--limit", "nan", "x"], "'nan' is not a whole number"),
        (["restore", "--max-turns", "100000000000000000000", "t.jsonl"], "must be from 1 to 10,000,000, got 1"),
        (["restore", "--max-turns", "0", "t.jsonl"], "must be from 1 to 10,000,000, got 0"),
        (["restore", "--max-searches", "10000000000000000000", "t.jsonl"], "must be from 0 to 1,000, got 1"),
        (["restore", "--max-searches", "-1", "t.jsonl"], "got -1"),
        (["restore", "--max-calls", "0", "t.jsonl"], "must be from 1 to 1,000,000, got 0"),
        (["restore", "--max-calls", "1e9", "t.jsonl"], "'1e9' is not a whole number"),
    ],
)
def test_a_number_that_is_not_finite_or_in_range_is_a_usage_error(argv, said, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([argv[0], "--session-dir", str(tmp_path / "s"), *argv[1:]])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert not (tmp_path / "s").exists()  # refused before anything was made


@pytest.mark.parametrize("wait", ["0", "2.5", "86400"])
def test_a_number_in_range_is_taken(wait):
    from ccm_tui.commands.common import seconds

    assert seconds(wait) == float(wait)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_config_number_that_is_not_finite_is_refused(value, tmp_path, monkeypatch):
    from ccm_tui.config import ConfigError, load_settings

    path = tmp_path / "config.toml"
    path.write_text(f'request_timeout = "{value}"\n', encoding="utf-8")
    monkeypatch.setenv("CCM_CONFIG", str(path))
    with pytest.raises(ConfigError, match="must be a finite number"):
        load_settings()


def test_a_retry_base_that_is_not_finite_falls_back(monkeypatch):
    from ccm_tui.config import retry_base_seconds

    monkeypatch.setenv("CCM_RETRY_BASE_SECONDS", "inf")
    assert retry_base_seconds() == 1.0
