"""Settings and locations (``ccm_tui.config``): where the files are, the layers and their order, what
the config file and the CCM_* variables may hold, the one-line errors, and the file the settings
screen writes."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from ccm_tui import config
from ccm_tui.config import ConfigError, Settings, load_settings, read_config_file, save_config_file
from ccm_tui.errors import CcmError


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home directory and no location variable: each test sets the ones it is about."""
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "CCM_HOME", "CCM_CONFIG", "CCM_SESSION_DIR"):
        monkeypatch.delenv(var, raising=False)
    for var in config.ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def write_config(tmp_path, monkeypatch, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CCM_CONFIG", str(path))
    return path


# --------------------------------------------------------------------------- locations
def test_without_variables_the_files_are_in_the_xdg_defaults_under_home(home):
    assert config.config_file() == home / ".config" / "ccm-tui" / "config.toml"
    assert config.data_home() == home / ".local" / "share" / "ccm-tui"
    assert config.sessions_dir() == home / ".local" / "share" / "ccm-tui" / "sessions"
    assert config.session_dir() == home / ".local" / "share" / "ccm-tui" / "sessions" / "default"


def test_on_macos_too_the_files_stay_in_the_xdg_locations_the_readme_names(home, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert config.config_file() == home / ".config" / "ccm-tui" / "config.toml"
    assert config.data_home() == home / ".local" / "share" / "ccm-tui"


def test_absolute_xdg_variables_move_the_files(home, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert config.config_file() == tmp_path / "cfg" / "ccm-tui" / "config.toml"
    assert config.data_home() == tmp_path / "data" / "ccm-tui"


@pytest.mark.parametrize("value", ["relative/dir", "./cfg", "~/cfg", ""])
def test_a_relative_or_empty_xdg_variable_is_ignored(home, monkeypatch, value):
    """The XDG spec: a relative path in these variables is invalid and is ignored."""
    monkeypatch.setenv("XDG_CONFIG_HOME", value)
    monkeypatch.setenv("XDG_DATA_HOME", value)
    assert config.config_file() == home / ".config" / "ccm-tui" / "config.toml"
    assert config.data_home() == home / ".local" / "share" / "ccm-tui"


def test_ccm_config_and_ccm_home_win_over_the_xdg_variables(home, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CCM_CONFIG", str(tmp_path / "elsewhere.toml"))
    monkeypatch.setenv("CCM_HOME", "~/ccm")
    assert config.config_file() == tmp_path / "elsewhere.toml"
    assert config.data_home() == home / "ccm"
    assert config.model_facts_file() == home / "ccm" / "models.json"


# --------------------------------------------------------------------------- layers
def test_no_file_and_no_variable_give_the_defaults(home):
    settings = load_settings()
    assert settings == Settings()
    assert settings.sources == {}


def test_each_layer_wins_over_the_one_before_and_says_so(home, tmp_path, monkeypatch):
    write_config(
        tmp_path, monkeypatch, 'model = "file/m"\napi_base = "http://file"\ntoken_budget = 9000\ntheme = "nord"\n'
    )
    monkeypatch.setenv("CCM_MODEL", "env/m")
    monkeypatch.setenv("CCM_TOKEN_BUDGET", "12_000")
    settings = load_settings(model="flag/m", api_base=None, not_a_setting="x")
    assert (settings.model, settings.api_base, settings.token_budget, settings.theme) == (
        "flag/m",
        "http://file",
        12_000,
        "nord",
    )
    assert settings.sources == {
        "model": "command line",
        "api_base": "config file",
        "token_budget": "environment",
        "theme": "config file",
    }
    assert settings.decay_threshold == Settings().decay_threshold


def test_values_are_read_as_their_kind(home, tmp_path, monkeypatch):
    write_config(
        tmp_path,
        monkeypatch,
        'model = "  spaced/model  "\nsummary_model = ""\ndecay_threshold = "4"\nrequest_timeout = 30\n'
        'recall = " OFF "\nrecall_share = "0.25"\nauto_efforts = "yes"\nmax_retries = 0\n',
    )
    settings = load_settings()
    assert settings.model == "spaced/model"
    assert settings.summary_model is None and "summary_model" not in settings.sources  # empty: not set
    assert settings.decay_threshold == 4 and isinstance(settings.decay_threshold, int)
    assert settings.request_timeout == 30.0 and isinstance(settings.request_timeout, float)
    assert (settings.recall, settings.recall_share, settings.auto_efforts, settings.max_retries) == (
        "off",
        0.25,
        True,
        0,
    )


def test_with_overrides_keeps_the_settings_frozen_and_ignores_none():
    base = Settings()
    assert base.with_overrides("command line", model=None) is base
    changed = base.with_overrides("command line", model="m")
    assert (changed.model, changed.sources, base.model) == ("m", {"model": "command line"}, None)
    with pytest.raises(AttributeError):
        changed.model = "other"  # type: ignore[misc]


# --------------------------------------------------------------------------- one-line errors
BAD_FILES = [
    ("tokn_budget = 5", "unknown setting 'tokn_budget'"),
    ("[section]\nmodel = 'x'", "unknown setting 'section'"),
    ("model = 3", "'model' must be a string"),
    ("theme = ['a']", "'theme' must be a string"),
    ("token_budget = 0", "'token_budget' must be a whole number ≥ 1"),
    ("token_budget = 'lots'", "'token_budget' must be a whole number, got 'lots'"),
    ("token_budget = 1.5", "'token_budget' must be a whole number ≥ 1"),
    ("token_budget = true", "'token_budget' must be a whole number ≥ 1"),
    ("summary_max_tokens = 15", "'summary_max_tokens' must be a whole number ≥ 16"),
    ("ambient_window = -1", "'ambient_window' must be a whole number ≥ 0"),
    ("message_max_tokens = '99'", "'message_max_tokens' must be a whole number ≥ 100"),
    ("request_timeout = 'soon'", "'request_timeout' must be a number"),
    ("request_timeout = [1]", "'request_timeout' must be a number"),
    ("request_timeout = 0.5", "'request_timeout' must be ≥ 1.0"),
    ("request_timeout = inf", "'request_timeout' must be a finite number, got inf"),
    ("max_rate_limit_wait = 'nan'", "'max_rate_limit_wait' must be a finite number, got 'nan'"),
    ("max_rate_limit_wait = -1", "'max_rate_limit_wait' must be ≥ 0.0"),
    ("recall_share = 0.6", "'recall_share' must be ≤ 0.5"),
    ("recall = 'sometimes'", "'recall' must be one of auto, off"),
    ("recall = 1", "'recall' must be one of auto, off"),
    ("auto_efforts = 'maybe'", "'auto_efforts' must be true or false"),
    ("auto_efforts = 2", "'auto_efforts' must be true or false"),
]


@pytest.mark.parametrize(("text", "said"), BAD_FILES)
def test_a_bad_value_in_the_file_is_one_line_naming_the_file(home, tmp_path, monkeypatch, text, said):
    path = write_config(tmp_path, monkeypatch, text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value) == f"{path}: {said}"
    assert isinstance(caught.value, CcmError) and isinstance(caught.value, ValueError)


def test_the_first_bad_line_of_the_file_is_the_one_reported(home, tmp_path, monkeypatch):
    path = write_config(tmp_path, monkeypatch, "theme = 'nord'\ndecay_threshold = 0\nbogus = 1\n")
    with pytest.raises(ConfigError, match="^" + str(path) + ": 'decay_threshold' must be a whole number ≥ 1$"):
        read_config_file()


@pytest.mark.parametrize(
    ("text", "said"),
    [("model = ", "Invalid value"), ("model = 'a'\nmodel = 'b'", "Cannot overwrite a value")],
)
def test_a_file_that_is_not_toml_is_one_line(home, tmp_path, monkeypatch, text, said):
    path = write_config(tmp_path, monkeypatch, text)
    with pytest.raises(ConfigError, match=f"^{path}: {said}") as caught:
        load_settings()
    assert "\n" not in str(caught.value)


def test_a_file_that_is_not_utf8_or_not_readable_is_one_line(home, tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_bytes(b"model = '\xff'\n")
    monkeypatch.setenv("CCM_CONFIG", str(path))
    with pytest.raises(ConfigError, match=f"^{path}: not valid UTF-8 text$"):
        load_settings()
    monkeypatch.setenv("CCM_CONFIG", str(tmp_path))  # a directory
    with pytest.raises(ConfigError, match=f"^cannot read {tmp_path}: "):
        load_settings()


@pytest.mark.parametrize(
    ("var", "value", "said"),
    [
        ("CCM_TOKEN_BUDGET", "many", "$CCM_TOKEN_BUDGET: 'token_budget' must be a whole number, got 'many'"),
        ("CCM_TOKEN_BUDGET", "0", "$CCM_TOKEN_BUDGET: 'token_budget' must be a whole number ≥ 1"),
        ("CCM_TOKEN_BUDGET", "2.5", "$CCM_TOKEN_BUDGET: 'token_budget' must be a whole number, got '2.5'"),
    ],
)
def test_a_bad_variable_is_one_line_naming_the_variable(home, monkeypatch, var, value, said):
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value) == said


def test_variables_are_read_with_spaces_and_digit_separators(home, monkeypatch):
    monkeypatch.setenv("CCM_TOKEN_BUDGET", " 16_000 ")
    monkeypatch.setenv("CCM_API_BASE", " http://localhost:11434 ")
    monkeypatch.setenv("CCM_SUMMARY_MODEL", "   ")  # blank: not set
    settings = load_settings()
    assert (settings.token_budget, settings.api_base, settings.summary_model) == (
        16_000,
        "http://localhost:11434",
        None,
    )
    assert settings.sources == {"token_budget": "environment", "api_base": "environment"}


# --------------------------------------------------------------------------- the file the settings screen writes
def test_saving_merges_with_the_file_and_writes_toml_in_settings_order(home, tmp_path, monkeypatch):
    path = write_config(tmp_path, monkeypatch, "theme = 'nord'\ndecay_threshold = 5\n")
    save_config_file({"token_budget": "20_000", "model": 'quote"back\\slash\ttab', "decay_threshold": ""})
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == "# ccm-tui settings (see README: Configuration)"
    assert [line.split(" = ")[0] for line in text.splitlines()[1:]] == ["model", "token_budget", "theme"]
    assert tomllib.loads(text) == {"model": 'quote"back\\slash\ttab', "token_budget": 20_000, "theme": "nord"}
    assert read_config_file() == {"model": 'quote"back\\slash\ttab', "token_budget": 20_000, "theme": "nord"}


def test_saved_values_of_every_kind_read_back_the_same(home, tmp_path, monkeypatch):
    path = tmp_path / "new" / "config.toml"
    values = {
        "model": "a\x01b\u2028c",
        "request_timeout": 30.5,
        "recall_share": 0.06,
        "recall": "off",
        "auto_efforts": True,
        "max_retries": 0,
    }
    assert save_config_file(values, path) == path
    assert read_config_file(path) == values


def test_an_empty_string_in_the_file_survives_saving_another_setting(home, tmp_path, monkeypatch):
    path = write_config(tmp_path, monkeypatch, 'model = ""\n')
    save_config_file({"theme": "nord"})
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {"theme": "nord"}  # not model = "None"


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"tokens": 5}, "unknown setting 'tokens'"),
        ({"token_budget": "abc"}, "settings: 'token_budget' must be a whole number, got 'abc'"),
        ({"recall_share": "1"}, "settings: 'recall_share' must be ≤ 0.5"),
    ],
)
def test_saving_a_bad_value_writes_nothing(home, tmp_path, monkeypatch, values, said):
    path = write_config(tmp_path, monkeypatch, "theme = 'nord'\n")
    with pytest.raises(ConfigError) as caught:
        save_config_file(values)
    assert str(caught.value) == said
    assert path.read_text(encoding="utf-8") == "theme = 'nord'\n"
