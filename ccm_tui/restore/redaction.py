"""Secret-looking values out of what the evidence search returns to the model.

The file allow-list (:mod:`.file_policy`) keeps credential files away; this catches what
ordinary files and the transcript still carry: a key pasted into a source file, a
``DATABASE_URL`` with its password, a token echoed in a tool result the agent saw. It builds
on :func:`ccm_tui.core.storage.eventlog.redact` (the configured credentials by value, URL userinfo,
``?key=`` queries, auth headers, ``sk-``/``AIza`` keys) and adds what files hold: provider
tokens by their shape (AWS, GitHub, GitLab, Slack, Stripe, Google, Hugging Face, npm, PyPI,
Vault …), JWTs, private key blocks, ``password=`` / ``secret:`` / ``"api_key": "…"`` style
assignments, ``<password>`` elements, ``--password X`` flags, and the lines of ``.pgpass``,
``.netrc`` and ``.htpasswd`` files. A private key block keeps its line count, so line
numbers stay true.

Over-redaction is the cheap error here (the model loses a value it never needed); what only
names a value (``$DB_PASSWORD``, ``config["TOKEN"]``, ``None``, ``args.api_key``) stays.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ccm_tui.config import secret_values
from ccm_tui.core.storage.eventlog import redact as redact_credentials

MARK = "[redacted]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)
# Tokens known by their shape: replaced whole.
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}"  # AWS key ids
    r"|gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255}"  # GitHub
    r"|gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat)-[A-Za-z0-9_\-]{20,}"  # GitLab
    r"|xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[A-Za-z0-9\-]{10,}"  # Slack
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,}"  # Stripe
    r"|sk-[A-Za-z0-9_\-]{16,}"  # OpenAI (sk-proj-…), Anthropic (sk-ant-…), DeepSeek …
    r"|AIza[0-9A-Za-z_\-]{30,}|ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[A-Za-z0-9_\-]{20,}"  # Google
    r"|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_\-]{50,}"  # Hugging Face, npm, PyPI
    r"|hv[sbr]\.[A-Za-z0-9_\-]{20,}|dop_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"  # Vault, DO, Shopify
    r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}|AC[0-9a-f]{32}|SK[0-9a-f]{32}"  # SendGrid, Twilio
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"  # JWT
    r"|hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"
    r"|key-[0-9a-f]{32}|[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}"  # Mailgun, Telegram bots
    r")(?![A-Za-z0-9])"
)
# Key files in other shapes: PuTTY's private lines and MAC, OpenVPN's static key (line counts kept).
_PUTTY = re.compile(r"(?m)^(Private-Lines:[ \t]*\d+[ \t]*\n)((?:[A-Za-z0-9+/=]+[ \t]*(?:\n|\Z))+)")
_PUTTY_MAC = re.compile(r"(?m)^(Private-(?:MAC|Hash):[ \t]*)(\S+)")
_STATIC_KEY = re.compile(r"-----BEGIN OpenVPN Static key V1-----.*?(?:-----END OpenVPN Static key V1-----|\Z)", re.S)
# A secret-named key whose value is a YAML block (``password: |``): its more indented lines.
_BLOCK_SCALAR = re.compile(
    r"(?mi)^([ \t]*)([\w.\-\"']*(?:" + r"password|passwd|secret|token|key|credential|cert|auth" + r")[\w.\-\"']*"
    r"[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*(?:#.*)?\n)((?:(?:\1[ \t]+\S[^\n]*|[ \t]*)(?:\n|\Z))+)"
)
# Directives that take a secret without "=": Redis, OpenLDAP, keepalived, WPA, a .netrc field on its own line.
_DIRECTIVE = re.compile(
    r"(?mi)^([ \t]*(?:requirepass|masterauth|masterpassword|rootpw|bindpw|auth_pass|wpa_passphrase|psk|password"
    r"|passwd|secret|client_secret|api_key|token)[ \t]+)(?![=:])(\S+)(?=[ \t]*$)"
)
_SSHPASS = re.compile(r"((?<![\w-])sshpass\b(?:[ \t]+-[a-zA-Z])*?[ \t]+-p[ \t]*)(\"[^\"\n]*\"|'[^'\n]*'|\S+)")

_SECRET_WORDS = (
    r"password|passwd|pwd|passphrase|(?<=[_\-.])pass|(?<![A-Za-z])pw|secret|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key"
    r"|secret[_\-]?key|client[_\-]?secret|account[_\-]?key|master[_\-]?key|signing[_\-]?key|encryption[_\-]?key"
    r"|auth[_\-]?key|session[_\-]?key|credentials?|auth|authorization|cookie|_authtoken"
    r"|(?<![A-Za-z])psk|preshared[_\-]?key|key[_\-]data|tls\.key|dockerconfigjson|dockercfg|_key"
)
# key = value, key: value, "key": "value", key => value, export KEY=value: a name that ends in a secret
# word (matched from the word: a scan from every position for the name's start is 10 times slower).
_ASSIGNMENT = re.compile(
    r"(?P<key>(?:" + _SECRET_WORDS + r")(?:[_\-]?(?:base|value|hash|b64|raw|data))?(?:\\?[\"'](?:\])?)?)"
    r"(?P<sep>"
    r"[ \t]*:[ \t]*&?(?:'static[ \t]+)?[A-Za-z_][\w.]*(?:<[\w<>, ]*>|\[[\w\[\], .|]*\])?\??[ \t]*=[ \t]*"  # name: Type = (TS, Kotlin, Rust, Swift)
    r"|[ \t]+(?:string|\[\]byte)[ \t]*=[ \t]*"  # Go: var name string =
    r"|[ \t]*(?:=>|:=|=|:)(?:[ \t]*\n[ \t]*(?=\\?[\"']))?[ \t]*"  # (a JSON value on the next line)
    r")"
    r"(?P<value>\$\{\{[^}\n]*\}\}|\\\"(?:[^\"\\\n]|\\[^\"\n])*\\\"|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|`[^`\n]*`"
    r"|(?:[^\s,;'\"`()}\]]|\([^\s()]*\))+(?:[ \t]+[^\s,;'\"`()}\]#](?:[^\s,;'\"`()}\]]|\([^\s()]*\))*)*)",
    re.I,
)
# A call that sets a secret-named value: define('DB_PASSWORD', '…'), os.Setenv("API_TOKEN", "…") …
_CALL = re.compile(
    r"(\(\s*\\?[\"'][\w.\-]*(?:" + _SECRET_WORDS + r")[\w.\-]*\\?[\"']\s*,\s*)"
    r"(\\\"(?:[^\"\\\n]|\\[^\"\n])*\\\"|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*')",
    re.I,
)
# fish's ``set -gx API_TOKEN value``; .NET's ``<add key="ApiKey" value="…" />``
_FISH_SET = re.compile(
    r"((?<![\w-])set[ \t]+(?:-[a-zA-Z]+[ \t]+)+[\w]*(?:" + _SECRET_WORDS + r")[\w]*[ \t]+)(\S+)", re.I
)
_KEY_VALUE_ATTR = re.compile(
    r"((?:key|name)=\"[\w.\-:]*(?:" + _SECRET_WORDS + r")[\w.\-:]*\"[ \t]+value=\")([^\"\n]*)(\")", re.I
)
_XML_ELEMENT = re.compile(r"(<(" + _SECRET_WORDS + r")>)([^<\n]+)(</\2>)", re.I)
_CLI_FLAG = re.compile(
    r"((?<![\w-])--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|access-key)(?:=|\s+))"
    r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']{3,})",
    re.I,
)
_CLI_USER_PASSWORD = re.compile(r"((?<![\w-])(?:-u|--user)(?:=|\s+)[^\s:\"']+:)([^\s\"']+)")
_MYSQL_PASSWORD = re.compile(r"((?<![\w-])mysql(?:dump)?\b[^\n]*?\s-p)([^\s\"']+)")
_PGPASS_LINE = re.compile(r"(?:^|(?<=\s))([A-Za-z0-9_.\-*]+:(?:\d+|\*):[^\s:]+:[^\s:]+:)(\S+)", re.M)
_HTPASSWD_LINE = re.compile(r"^([\w.@\-]+:)(\$(?:apr1|2[abxy]?|1|5|6|y)\$\S+|\{SHA\}\S+|[./0-9A-Za-z]{13})$", re.M)
_NETRC_LINE = re.compile(r"(?:\bmachine[ \t]+\S+|^[ \t]*default\b).*$", re.M)  # also quoted: "[result] machine …"
_NETRC_FIELD = re.compile(r"\b(password|passwd|login|account)([ \t]+)(\S+)")

# Values that name a secret without being one: references, literals, types, expressions.
_REFERENCE = re.compile(r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\{\{.*\}\}|\{\{.*\}\}|%\([A-Za-z_]+\)s|<[^<>]*>)$")
_NOT_SECRETS = frozenset(
    """none null nil true false undefined yes no on off required optional str string int bool bytes any
    object number secret password token env environ getenv self this new""".split()
)


def redact_text(text: str) -> str:
    """``text`` with every secret-looking value replaced by ``[redacted]`` (line count kept). A line
    that is a JSON object (a transcript's record) is also redacted decoded: its strings read as the
    agent saw them (``\\"`` a quote, ``\\n`` a line break), then encoded again."""
    return redact_texts([text])[0]


def redact_texts(texts: list[str]) -> list[str]:
    """:func:`redact_text` of each of ``texts``, the environment's credentials read once for all."""
    values = secret_values()
    out = []
    for text in texts:
        if text and ('{"' in text or '{ "' in text):
            text = _json_lines(text, values)
        out.append(_redact_plain(text, values) if text else text)
    return out


# Each pattern runs only where a cheap test says it may match: ``in`` over the text (or its
# case-folded copy for the case-insensitive ones) and regexes that begin with a literal, which the
# regex engine finds by a scan, not a match tried at every position. Most of a transcript holds none.
_TOKEN_HINTS = tuple(
    re.compile(hint)
    for hint in (
        r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|Iza|C[0-9a-f]{32})", r"gh(?:[pousr]_|ithub_pat_)",
        r"gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat)-", r"x(?:ox[abposre]|app)-", r"_(?:live|test)_", "whsec_", "sk-",
        r"ya29\.", "GOCSPX-", "hf_", "npm_", "pypi-", r"hv[sbr]\.", "dop_v1_", r"shp(?:at|ss|ca|pa)_", r"SG\.",
        r"SK[0-9a-f]{32}", "eyJ", r"hooks\.slack\.com/", "key-", ":AA",
    )
)  # fmt: skip
_BLOCK_HINT = re.compile(r":[ \t]*[|>]")
_PGPASS_HINT = re.compile(r":(?:\d+|\*):[^\s:]+:[^\s:]+:\S")
_CLI_USER_HINT = re.compile(r"-u(?:ser)?(?:=|\s+)[^\s:\"']+:")
_MACHINE_HINT = re.compile(r"machine[ \t]+\S")
_CLI_FLAG_HINTS = ("--pass", "--token", "--api", "--secret", "--client", "--access")
_DIRECTIVE_HINTS = ("pass", "rootpw", "bindpw", "masterauth", "psk", "secret", "api_key", "token")


def _redact_plain(text: str, values: list[str] | None = None) -> str:
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(_private_key_block, text)
    if "OpenVPN Static key" in text:
        text = _STATIC_KEY.sub(lambda m: MARK + f"\n{MARK}" * m.group(0).count("\n"), text)
    if "Private-" in text:
        text = _PUTTY.sub(lambda m: m.group(1) + _each_line(m.group(2)), text)
        text = _PUTTY_MAC.sub(lambda m: m.group(1) + MARK, text)
    if ("|" in text or ">" in text) and _BLOCK_HINT.search(text):
        text = _BLOCK_SCALAR.sub(lambda m: m.group(1) + m.group(2) + _each_line(m.group(3)), text)
    text = redact_credentials(text, values)
    if any(hint.search(text) for hint in _TOKEN_HINTS):
        text = _TOKENS.sub(MARK, text)
    if "(" in text:
        text = _CALL.sub(lambda m: m.group(1) + _quoted_mark(m.group(2)), text)
    return _flags_and_lines(_assignments(text))


def _flags_and_lines(text: str) -> str:
    """The second half of :func:`_redact_plain`: elements, command-line flags, directives, key-file lines."""
    low = text.casefold()
    if "<" in text:
        text = _XML_ELEMENT.sub(lambda m: m.group(1) + MARK + m.group(4), text)
    if "--" in text and any(hint in low for hint in _CLI_FLAG_HINTS):
        text = _CLI_FLAG.sub(lambda m: m.group(1) + MARK, text)
    if "-u" in text and _CLI_USER_HINT.search(text):
        text = _CLI_USER_PASSWORD.sub(lambda m: m.group(1) + MARK, text)
    if "mysql" in text:
        text = _MYSQL_PASSWORD.sub(lambda m: m.group(1) + MARK, text)
    if "sshpass" in text:
        text = _SSHPASS.sub(lambda m: m.group(1) + MARK, text)
    if "set -" in text:
        text = _FISH_SET.sub(lambda m: m.group(1) + (m.group(2) if _keeps(m.group(2), "") else MARK), text)
    if "value=" in text:
        text = _KEY_VALUE_ATTR.sub(
            lambda m: m.group(1) + (m.group(2) if _keeps(m.group(2), "") else MARK) + m.group(3), text
        )
    text = _directives(text, low)
    if ":" in text:
        if _PGPASS_HINT.search(text):
            text = _PGPASS_LINE.sub(lambda m: m.group(1) + MARK, text)
        text = _HTPASSWD_LINE.sub(lambda m: m.group(1) + MARK, text)
    if _MACHINE_HINT.search(text) or _default_line(text):
        text = _NETRC_LINE.sub(lambda m: _NETRC_FIELD.sub(lambda f: f.group(1) + f.group(2) + MARK, m.group(0)), text)
    return text


def _directive(match: re.Match[str]) -> str:
    return match.group(1) + (match.group(2) if _keeps(match.group(2), "") else MARK)


def _directives(text: str, low: str) -> str:
    """:data:`_DIRECTIVE` applied to the lines that hold one of its words (a line-anchored regex
    tried over a whole text costs a match at every position)."""
    if len(low) != len(text):  # a character whose case-folded form is longer: positions would not match
        return _DIRECTIVE.sub(_directive, text) if any(hint in low for hint in _DIRECTIVE_HINTS) else text
    lines: set[tuple[int, int]] = set()
    for word in _DIRECTIVE_HINTS:
        at = low.find(word)
        while at >= 0:
            end = low.find("\n", at)
            end = len(low) if end < 0 else end
            lines.add((low.rfind("\n", 0, at) + 1, end))
            at = low.find(word, end)
    if not lines:
        return text
    parts: list[str] = []
    done = 0
    for start, end in sorted(lines):
        parts += [text[done:start], _DIRECTIVE.sub(_directive, text[start:end])]
        done = end
    parts.append(text[done:])
    return "".join(parts)


def _default_line(text: str) -> bool:
    """Whether a line of ``text`` begins with ``default`` (a .netrc's default entry)."""
    at = text.find("default")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if not text[start:at].strip(" \t"):
            return True
        at = text.find("default", at + 7)
    return False


def _each_line(block: str) -> str:
    """Every line of ``block`` that holds something, as its indentation and the mark."""
    return re.sub(r"(?m)^([ \t]*)\S[^\n]*", lambda m: m.group(1) + MARK, block)


def _quoted_mark(value: str) -> str:
    for quote in ('\\"', '"', "'"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return quote + MARK + quote
    return MARK


def _json_lines(text: str, values: list[str] | None = None) -> str:
    """The lines of ``text`` that are JSON objects, redacted as decoded values (the others as they are)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not (stripped.startswith("{") and stripped.endswith("}")) or not _hinted(stripped):
            continue
        try:
            record = json.loads(stripped)
        except ValueError:
            continue
        redacted = _redact_decoded(record, values)
        if redacted != record:
            lines[i] = line[: len(line) - len(line.lstrip())] + json.dumps(redacted, ensure_ascii=False)
    return "\n".join(lines)


# What a decoded string must hold for the decoded pass to find more than the pass over the line did
# (a token by its shape reads the same escaped; an assignment, a directive or a block needs its word).
_HINT_WORDS: tuple[str, ...] = (
    *("pass", "pw", "secret", "token", "key", "cred", "auth", "cookie", "psk", "docker", "machine", "default"),
    *("private-", "openvpn", "begin"),
)


def _hinted(text: str) -> bool:
    low = text.lower()
    return any(word in low for word in _HINT_WORDS)


def _redact_decoded(value: Any, values: list[str] | None = None) -> Any:
    if isinstance(value, str):
        return _redact_plain(value, values) if len(value) > 6 and _hinted(value) else value
    if isinstance(value, dict):
        return {key: _redact_decoded(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_decoded(item, values) for item in value]
    return value


def redact_value(value: Any) -> Any:
    """A tool result with every string in it redacted (dicts and lists walked)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    return value


# Substrings every secret word of an assignment holds (lowercase): lines without any are skipped.
_ASSIGNMENT_TRIGGERS = ("pass", "pw", "secret", "token", "key", "cred", "auth", "cookie", "psk", "docker")


def _assignments(text: str) -> str:
    """:data:`_ASSIGNMENT` applied to the lines that hold a secret word: the regex alone reads
    5 MB/s, and most lines of a transcript hold none."""
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer: positions would not match
        return _ASSIGNMENT.sub(_assignment, text)
    spans: list[tuple[int, int]] = []
    for word in _ASSIGNMENT_TRIGGERS:
        at = low.find(word)
        while at >= 0:
            start = low.rfind("\n", 0, at) + 1
            end = low.find("\n", at)
            if end >= 0 and low[at:end].rstrip().endswith(":"):  # a JSON value may follow on the next line
                end = low.find("\n", end + 1)
            end = len(low) if end < 0 else end
            spans.append((start, end))
            at = low.find(word, end)
    if not spans:
        return text
    parts: list[str] = []
    done = 0
    for start, end in sorted(set(spans)):
        if start < done:  # the same line, found by another word
            continue
        parts.append(text[done:start])
        parts.append(_ASSIGNMENT.sub(_assignment, text[start:end]))
        done = end
    parts.append(text[done:])
    return "".join(parts)


def _private_key_block(match: re.Match[str]) -> str:
    lines = match.group(0).count("\n")
    return f"[redacted {match.group(1).lower()} block]" + f"\n{MARK}" * lines  # no BEGIN line: it stays redacted


def _assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if _keeps(value, _key_name(match)):
        return match.group(0)
    return match.group("key") + match.group("sep") + _quoted_mark(value)


def _key_name(match: re.Match[str]) -> str:
    """The whole name the secret word ends (``AWS_SECRET_ACCESS_KEY``, ``self.token``' ``token``)."""
    text, start = match.string, match.start()
    begin = start
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] in "_-"):
        begin -= 1
    return text[begin:start] + match.group("key")


# Where code reads a secret from (``settings.DB_PASSWORD``, ``process.env.TOKEN``): a dotted value that
# starts so is a reference; any other dotted word (``my.secret.pass``) may be the secret itself.
_CODE_ROOTS = frozenset(
    """self this cls args config cfg conf settings os env environ process options opts params kwargs request req
    ctx context app secrets vault creds credentials props data user form values body payload keys auth client
    window document import module exports""".split()
)
_CALLED = re.compile(r"^[A-Za-z_][\w.]*[(\[]")  # a call or a subscript begins here


def _inner(value: str) -> str:
    for quote in ('\\"', '"', "'", "`"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return value[len(quote) : -len(quote)]
    return value


def _keeps(value: str, key: str) -> bool:
    """Whether an assigned value is no secret: empty, a reference, a literal, an expression."""
    inner = _inner(value)
    stripped = inner.strip()
    if not stripped or stripped == MARK or set(stripped) <= set("*x•.-_ "):
        return True
    if _REFERENCE.match(stripped) or stripped.lower() in _NOT_SECRETS:
        return True
    if inner is value:  # unquoted: code (an attribute, a call, a subscript, the same name) is no value
        if stripped.lower() == key.strip("\"'\\]").lower() or _is_code(stripped):
            return True
        if stripped in ("|", ">", "|-", ">-", "{", "[") or stripped.isdigit() and len(stripped) < 4:
            return True
    return False


def _is_code(value: str) -> bool:
    """An unquoted value that reads as code: a call of a lower-case or dotted name (``getpass()``,
    ``config.get(``), a subscript, an attribute of a known root (``settings.DB_PASSWORD``)."""
    called = _CALLED.match(value)
    if called:
        if called.group(0).endswith("["):
            return True
        name = called.group(0)[:-1]
        return "." in name or "_" in name or name.islower()
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value):
        return value.split(".", 1)[0].lower() in _CODE_ROOTS
    return False
