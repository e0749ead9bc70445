"""Settings, layered: defaults → config.toml → environment → command-line flags.

This is the one module that reads environment variables (:data:`ENVIRONMENT`
lists them all) and knows where ccm-tui keeps its files (XDG locations, from
platformdirs). What a layer sets is checked by pydantic-core against the
:class:`Settings` fields, and the settings screen's file is written by tomli-w;
both load only when there is something to check or write.
"""

from __future__ import annotations

import importlib.util
import math
import os
import stat
import typing
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .atomic_file import atomic_write_text
from .errors import CcmError

if TYPE_CHECKING:
    from platformdirs.unix import Unix
    from pydantic_core import SchemaValidator

APP_DIR = "ccm-tui"
DEFAULT_SESSION = "default"
DEFAULT_BUDGET_CAP = 16_000
BUDGET_WINDOW_FRACTION = 0.75
MIN_BUDGET = 1_000

ENVIRONMENT: dict[str, str] = {
    "CCM_MODEL": "the chat model (litellm id), over the config file",
    "CCM_SUMMARY_MODEL": "a cheaper model for summaries",
    "CCM_API_BASE": "API base URL passed to litellm",
    "CCM_TOKEN_BUDGET": "the hard token budget of the working context",
    "CCM_SESSION_DIR": "the session directory, when no --session/--session-dir is given",
    "CCM_HOME": "where sessions live (default $XDG_DATA_HOME/ccm-tui)",
    "CCM_CONFIG": "the config file (default $XDG_CONFIG_HOME/ccm-tui/config.toml)",
    "CCM_RETRY_BASE_SECONDS": "first back-off delay after a provider fault (tests set 0)",
    "CCM_DEMO_AUTOPLAY": "the demo types and sends by itself (1)",
    "XDG_CONFIG_HOME": "base of the config location",
    "XDG_DATA_HOME": "base of the data location",
    "TIKTOKEN_CACHE_DIR": "tiktoken's encodings (default: the files litellm ships)",
    "LITELLM_LOCAL_MODEL_COST_MAP": "litellm reads its bundled model map, never the network (set to True)",
    "OPENAI_API_KEY": "read by litellm; unset with --api-base and an openai/ model means a keyless local server",
    "NO_COLOR": "set (non-empty): no bold in the output of ccm-tui search on a terminal (no-color.org)",
    "TERM": "'dumb': no bold in the output of ccm-tui search",
}


def env(name: str) -> str | None:
    """An environment variable ccm-tui knows (see :data:`ENVIRONMENT`); empty counts as unset."""
    if name not in ENVIRONMENT:
        raise KeyError(f"undocumented environment variable {name}")
    return os.environ.get(name) or None


def terminal_styles() -> bool:
    """Whether a command may write styles (bold) to a terminal: not with ``NO_COLOR``, nor on a dumb one."""
    return not env("NO_COLOR") and env("TERM") != "dumb"


# --------------------------------------------------------------------------- locations
def _user_dirs() -> Unix:
    """platformdirs' XDG locations on every system: ``Unix``, not ``PlatformDirs``, which would move a
    macOS user's files to ~/Library, away from where the README says they are. A relative or empty
    ``XDG_*`` value is ignored, as the XDG spec asks (platformdirs ≥ 4.11.8)."""
    from platformdirs.unix import Unix  # (textual has loaded it already when the TUI starts)

    return Unix(appname=APP_DIR)


def config_file() -> Path:
    """``$CCM_CONFIG`` or ``$XDG_CONFIG_HOME/ccm-tui/config.toml``."""
    override = env("CCM_CONFIG")
    if override:
        return Path(override).expanduser()
    return _user_dirs().user_config_path / "config.toml"


def data_home() -> Path:
    """``$CCM_HOME`` or ``$XDG_DATA_HOME/ccm-tui``."""
    override = env("CCM_HOME")
    if override:
        return Path(override).expanduser()
    return _user_dirs().user_data_path


def model_facts_file() -> Path:
    """What ccm-tui learned about models on this machine (e.g. which ones cannot use tools)."""
    return data_home() / "models.json"


def bundled_model_map() -> Path | None:
    """litellm's bundled model map (windows, prices, capabilities), located without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model_prices_and_context_window_backup.json"
    return path if path.is_file() else None


# Provider keys are litellm's to read; ccm-tui only asks which are set, so that the model picker
# lists those providers' models (litellm's provider names → its variables, the first set one wins).
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY",),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
}


def configured_providers() -> dict[str, str]:
    """The providers whose API key is in the environment, each with the variable that holds it
    (in :data:`PROVIDER_KEYS` order). Only whether a key is set matters here; its value stays litellm's."""
    found = {}
    for provider, names in PROVIDER_KEYS.items():
        name = next((n for n in names if (os.environ.get(n) or "").strip()), None)
        if name:
            found[provider] = name
    return found


def sessions_dir() -> Path:
    return data_home() / "sessions"


SESSION_NAME_MAX = 64  # characters (and a file name holds at most 255 bytes)


def _control(c: str) -> bool:
    """C0, DEL and C1 controls, and the Unicode line and paragraph separators."""
    return c < " " or "\x7f" <= c <= "\x9f" or c in "\u2028\u2029"


def _invisible(c: str) -> bool:
    """A format character (Unicode Cf: zero-width spaces, tags, soft hyphens …) or a blank filler, but the
    joiners emoji and some scripts need (core/text/terminal.py's INVISIBLE, without importing the core)."""
    return (unicodedata.category(c) == "Cf" and c not in "\u200c\u200d") or c in "\u034f\u115f\u1160\u3164\uffa0"


def session_name(name: str) -> str:
    """A session name as typed (stripped), or ValueError: names are plain words, never paths
    (no '/' or '\\', no control characters, not '.' or '..', at most 64 characters)."""
    clean = name.strip()
    if not clean or clean in {".", ".."} or any(c in "/\\" or _control(c) for c in clean):
        raise ValueError(
            f"invalid session name {name!r}: a name is a plain word, not a path (no '/', '\\', control character, "
            "'.' or '..')"
        )
    if hidden := next((c for c in clean if _invisible(c)), None):
        raise ValueError(
            f"invalid session name: it holds an invisible character (U+{ord(hidden):04X}); type the name without it"
        )
    if len(clean) > SESSION_NAME_MAX or len(clean.encode("utf-8")) > 255:
        raise ValueError(f"invalid session name {clean[:20]!r}…: at most {SESSION_NAME_MAX} characters")
    return clean


def session_dir_for(name: str) -> Path:
    """The directory of a named session (``--session NAME``)."""
    return sessions_dir() / session_name(name)


def session_dir(explicit: Path | None = None, name: str | None = None) -> Path:
    """``explicit`` (--session-dir), else ``$CCM_SESSION_DIR``, else the named (or default) session."""
    if explicit:
        return Path(explicit).expanduser()
    from_env = env("CCM_SESSION_DIR")
    if from_env:
        return Path(from_env).expanduser()
    return session_dir_for(name or DEFAULT_SESSION)


def retry_base_seconds() -> float:
    """The first back-off delay after a transient provider fault (doubling after that)."""
    try:
        seconds = float(env("CCM_RETRY_BASE_SECONDS") or "1")
    except ValueError:
        return 1.0
    return max(0.0, seconds) if math.isfinite(seconds) else 1.0


def demo_autoplay() -> bool:
    return (env("CCM_DEMO_AUTOPLAY") or "0") != "0"


def prepare_offline_libraries() -> None:
    """No network at start-up: litellm reads its bundled model map, and tiktoken the encodings
    litellm ships (unless the user chose a cache directory)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if env("TIKTOKEN_CACHE_DIR"):
        return
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return
    bundled = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    if bundled.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)


# --------------------------------------------------------------------------- settings


class ConfigError(CcmError, ValueError):
    """The config file or an environment variable holds something unusable."""


def _setting(default: Any, *, ge: float | None = None, le: float | None = None, choices: tuple[str, ...] = ()) -> Any:
    """A setting's default with the bounds (``ge``, ``le``) or the ``choices`` a layer's value must meet."""
    rule: dict[str, Any] = {"choices": choices} if choices else {}
    if ge is not None:
        rule["ge"] = ge
    if le is not None:
        rule["le"] = le
    return field(default=default, metadata=rule)


@dataclass(frozen=True)
class Settings:
    """What a session runs with. Each field's type, bounds and choices are what the config file and the
    CCM_* variables may set it to (:func:`checked`); flags are typed by the command line already."""

    model: str | None = None
    summary_model: str | None = None  # defaults to the chat model
    api_base: str | None = None
    token_budget: int | None = _setting(None, ge=1)  # None: min(16,000, 75% of the model's input window)
    decay_threshold: int = _setting(3, ge=1)
    summary_eviction_threshold: int = _setting(20, ge=1)
    ambient_window: int = _setting(10, ge=0)
    max_tool_rounds: int = _setting(8, ge=1)
    summary_max_tokens: int = _setting(150, ge=16)
    # one reply's length (the model's own output limit when lower): asked and enforced
    reply_max_tokens: int = _setting(8192, ge=16)
    message_max_tokens: int | None = _setting(None, ge=100)  # one logged message's share of the context; None: budget/4
    reply_max_seconds: float = _setting(600.0, ge=1.0)  # one reply's streaming time, first piece to last: then cut
    request_timeout: float = _setting(120.0, ge=1.0)
    max_retries: int = _setting(3, ge=0)  # transient provider errors (5xx, timeouts)
    max_rate_limit_wait: float = _setting(900.0, ge=0.0)  # seconds a paused session waits before giving up
    # auto: put the logged lines that answer a message into its request; off
    recall: str = _setting("auto", choices=("auto", "off"))
    recall_share: float = _setting(0.06, ge=0.0, le=0.5)  # the most of the budget recalled lines may take
    auto_efforts: bool = False  # open and conclude efforts at topic changes when the model does not
    theme: str = "textual-dark"
    # `ccm-tui watch`: folders to watch besides the agents' own stores (project roots: aider histories,
    # SpecStory folders), agents and projects never captured — each a comma-separated list
    watch_roots: str = ""
    watch_exclude_agents: str = ""
    watch_exclude_projects: str = ""
    capture_redact: bool = True  # secret-looking values in captured sessions become [redacted]
    capture_max_mb: int = _setting(128, ge=1)  # a bigger session file is not captured (one line says so)
    watch_in_tui: bool = False  # the TUI runs the watcher as a worker while it is open
    search_captures: bool = False  # /search lists hits in the captured agents' sessions too (after this session's)
    # model summaries of captured sessions (newest first): at most this many calls per hour / per day
    capture_summary_calls_per_hour: int = _setting(0, ge=0)
    capture_summary_calls_per_day: int = _setting(0, ge=0)
    # where the values came from, for the settings screen and error messages
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def effective_summary_model(self) -> str | None:
        return self.summary_model or self.model

    def with_overrides(self, source: str, **values: Any) -> Settings:
        clean = {k: v for k, v in values.items() if v is not None}
        if not clean:
            return self
        sources = dict(self.sources)
        sources.update({k: source for k in clean})
        return replace(self, sources=sources, **clean)


CONFIG_KEYS = tuple(f.name for f in fields(Settings) if f.name != "sources")


@cache
def _rules() -> dict[str, tuple[type, Mapping[str, Any]]]:
    """Each setting's kind (str, int, float or bool: its type without None) and its bounds or choices."""
    hints = typing.get_type_hints(Settings)

    def kind(name: str) -> type:
        return next(t for t in (typing.get_args(hints[name]) or (hints[name],)) if t is not type(None))

    return {f.name: (kind(f.name), f.metadata) for f in fields(Settings) if f.name in CONFIG_KEYS}


@cache
def _validator() -> SchemaValidator:
    """pydantic-core's validator of the settings one layer sets (any subset of them, nothing else).

    Built and imported only when a layer sets something: pydantic-core takes ~15 ms to load, a
    pydantic model ~120 ms, and the settings are read before the TUI's first frame."""
    from pydantic_core import SchemaValidator
    from pydantic_core import core_schema as cs

    def value_or_text(schema: Callable[..., cs.CoreSchema]) -> cs.CoreSchema:
        """The value of its kind (never a bool for a number) or text spelling it ("16_000", "yes")."""
        text = cs.str_schema(strict=True, strip_whitespace=True)
        return cs.union_schema([schema(strict=True), cs.chain_schema([text, schema()])], mode="left_to_right")

    def schema_of(kind: type, rule: Mapping[str, Any]) -> cs.CoreSchema:
        if "choices" in rule:
            text = cs.str_schema(strict=True, strip_whitespace=True, to_lower=True)
            return cs.chain_schema([text, cs.literal_schema(list(rule["choices"]))])
        if kind is bool:
            return value_or_text(cs.bool_schema)
        if kind is int:
            return cs.chain_schema([value_or_text(cs.int_schema), cs.int_schema(ge=rule.get("ge"))])
        if kind is float:  # (nan passes every comparison; inf would wait forever)
            return cs.float_schema(ge=rule.get("ge"), le=rule.get("le"), allow_inf_nan=False)
        return cs.str_schema(strict=True, strip_whitespace=True)

    schema = {
        name: cs.typed_dict_field(schema_of(kind, rule), required=False) for name, (kind, rule) in _rules().items()
    }
    return SchemaValidator(cs.typed_dict_schema(schema, extra_behavior="forbid"))


def checked(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The settings ``values`` set (text stripped, blank text setting nothing), or a one-line
    :class:`ConfigError` about the first bad one, naming ``where`` it was (a file, a variable)."""
    if not values:
        return {}
    from pydantic_core import ValidationError

    try:
        clean = _validator().validate_python(dict(values))
    except ValidationError as exc:
        problems: dict[str, set[str]] = {}
        for error in exc.errors():
            problems.setdefault(str(error["loc"][0]), set()).add(error["type"])
        key = next((k for k in values if k in problems), next(iter(values)))
        raise ConfigError(f"{where}: {_problem(key, values[key], problems[key])}") from None
    return {k: clean[k] for k in values if clean[k] != ""}


def _problem(key: str, value: Any, errors: set[str]) -> str:
    """What ``key`` must be, in words, given the kinds of error pydantic-core found in ``value``."""
    if "extra_forbidden" in errors:
        return f"unknown setting '{key}'"
    kind, rule = _rules()[key]
    if "choices" in rule:
        return f"'{key}' must be one of {', '.join(rule['choices'])}"
    if kind is bool:
        return f"'{key}' must be true or false"
    if kind is int:
        if "int_parsing" in errors:
            return f"'{key}' must be a whole number, got {value!r}"
        return f"'{key}' must be a whole number ≥ {rule['ge']}"
    if kind is float:
        if "finite_number" in errors:
            return f"'{key}' must be a finite number, got {value!r}"
        if "greater_than_equal" in errors:
            return f"'{key}' must be ≥ {rule['ge']}"
        if "less_than_equal" in errors:
            return f"'{key}' must be ≤ {rule['le']}"
        return f"'{key}' must be a number"
    return f"'{key}' must be a string"


MAX_CONFIG_BYTES = 1 << 20  # a config.toml larger than this is not one


def read_config_file(path: Path | None = None) -> dict[str, Any]:
    """The settings in config.toml (unknown keys are an error, so typos are caught). A FIFO or a device
    in its place is refused, never waited on; so is a file nested too deeply to read."""
    path = path or config_file()
    try:
        raw = _read_regular(path)
    except FileNotFoundError:
        return {}  # (no file: the TOML parser is not even imported — it weighs on every start)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    import tomllib

    try:
        return checked(tomllib.loads(raw.decode("utf-8")), str(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8 text") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read (arrays or tables inside one another)") from None


def _read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file of reasonable size (OSError otherwise; opening a
    FIFO does not wait for a writer)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file (a FIFO, a device or a directory)")
        if info.st_size > MAX_CONFIG_BYTES:
            raise OSError(f"{path.name} is {info.st_size:,} bytes; a config file is at most {MAX_CONFIG_BYTES:,}")
        return fh.read(MAX_CONFIG_BYTES + 1)


ENV_VARS = {
    "CCM_MODEL": "model",
    "CCM_SUMMARY_MODEL": "summary_model",
    "CCM_API_BASE": "api_base",
    "CCM_TOKEN_BUDGET": "token_budget",
}


def load_settings(**flags: Any) -> Settings:
    """Defaults, then the config file, then CCM_* variables, then flags (None = not given)."""
    settings = Settings()
    settings = settings.with_overrides("config file", **read_config_file())
    from_env: dict[str, Any] = {}
    for var, key in ENV_VARS.items():
        value = env(var)
        if value:
            from_env.update(checked({key: value}, f"${var}"))
    settings = settings.with_overrides("environment", **from_env)
    settings = settings.with_overrides("command line", **{k: v for k, v in flags.items() if k in CONFIG_KEYS})
    note_url_secrets(settings.api_base)
    return settings


def save_config_file(values: dict[str, Any], path: Path | None = None) -> Path:
    """Write the given settings to config.toml (merged with what is there; None or blank removes one),
    atomically, in the order of :class:`Settings`."""
    path = path or config_file()
    current = read_config_file(path)
    for key, value in values.items():
        if key not in CONFIG_KEYS:
            raise ConfigError(f"unknown setting '{key}'")
        if value is None or (isinstance(value, str) and not value.strip()):
            current.pop(key, None)
        else:
            current.update(checked({key: value}, "settings"))
    import tomli_w

    text = tomli_w.dumps({k: current[k] for k in CONFIG_KEYS if k in current})
    atomic_write_text(path, "# ccm-tui settings (see README: Configuration)\n" + text)
    return path


def default_budget(input_window: int | None = None) -> int:
    """The budget when none is configured: min(16,000, 75% of the model's input window)."""
    if not input_window or input_window <= 0:
        return DEFAULT_BUDGET_CAP
    return max(MIN_BUDGET, min(DEFAULT_BUDGET_CAP, int(input_window * BUDGET_WINDOW_FRACTION)))


# --------------------------------------------------------------------------- secrets
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY", "_PASSWORD")
MIN_SECRET_CHARS = 8  # shorter values are redacted only as whole words (see eventlog.redact)
MIN_SHORT_SECRET_CHARS = 4  # "1", "yes" are never taken for a credential
NOT_SECRETS = frozenset({"true", "false", "none", "null", "test", "dummy", "empty", "unset", "fake"})
_URL_SECRETS: set[str] = set()  # passwords and keys found in an API base URL (--api-base), this process


def note_url_secrets(url: str | None) -> None:
    """Remember the credentials an API base URL carries (``http://user:PASSWORD@host``,
    ``?key=VALUE``) so that they are redacted wherever they appear, not only inside the URL."""
    from urllib.parse import parse_qsl, urlsplit

    if not url:
        return
    try:
        parts = urlsplit(url)
        found = [parts.password or "", *(value for _, value in parse_qsl(parts.query))]
    except ValueError:
        return
    _URL_SECRETS.update(v for v in found if len(v) >= MIN_SHORT_SECRET_CHARS and v.lower() not in NOT_SECRETS)


def secret_values() -> list[str]:
    """The values of every credential variable in the environment (``*_API_KEY``, ``*_TOKEN``,
    ``*_SECRET``, …), longest first, so that text bound for the screen or the disk can be
    redacted by value as well as by pattern: a key without a known prefix that a provider echoes
    back is caught too. The config file holds no credentials. (This scan is separate from
    :func:`env`, which reads only the documented variables.)"""
    values = {
        value.strip()
        for name, value in os.environ.items()
        if name.upper().endswith(SECRET_SUFFIXES)
        and len(value.strip()) >= MIN_SHORT_SECRET_CHARS
        and value.strip().lower() not in NOT_SECRETS
    }
    return sorted(values | _URL_SECRETS, key=len, reverse=True)
