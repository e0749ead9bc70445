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

import re
from typing import Any

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
    r")(?![A-Za-z0-9])"
)
_SECRET_WORDS = (
    r"password|passwd|pwd|passphrase|(?<=[_\-.])pass|(?<![A-Za-z])pw|secret|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|(?-i:_KEY)"
    r"|secret[_\-]?key|client[_\-]?secret|account[_\-]?key|master[_\-]?key|signing[_\-]?key|encryption[_\-]?key"
    r"|auth[_\-]?key|session[_\-]?key|credentials?|auth|authorization|cookie|_authtoken"
)
# key = value, key: value, "key": "value", key => value, export KEY=value: a name that ends in a secret
# word (matched from the word: a scan from every position for the name's start is 10 times slower).
_ASSIGNMENT = re.compile(
    r"(?P<key>(?:" + _SECRET_WORDS + r")(?:[_\-]?(?:base|value|hash|b64|raw))?[\"']?)"
    r"(?P<sep>[ \t]*(?:=>|:=|=|:)[ \t]*)"
    r"(?P<value>\$\{\{[^}\n]*\}\}|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|`[^`\n]*`|[^\s,;'\"`)}\]]+)",
    re.I,
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
_EXPRESSION = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+$|[(\[]")
_NOT_SECRETS = frozenset(
    """none null nil true false undefined yes no on off required optional str string int bool bytes any
    object number secret password token env environ getenv self this new""".split()
)


def redact_text(text: str) -> str:
    """``text`` with every secret-looking value replaced by ``[redacted]`` (line count kept)."""
    if not text:
        return text
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(_private_key_block, text)
    text = redact_credentials(text)
    text = _TOKENS.sub(MARK, text)
    text = _assignments(text)
    text = _XML_ELEMENT.sub(lambda m: m.group(1) + MARK + m.group(4), text)
    text = _CLI_FLAG.sub(lambda m: m.group(1) + MARK, text)
    text = _CLI_USER_PASSWORD.sub(lambda m: m.group(1) + MARK, text)
    text = _MYSQL_PASSWORD.sub(lambda m: m.group(1) + MARK, text)
    text = _PGPASS_LINE.sub(lambda m: m.group(1) + MARK, text)
    text = _HTPASSWD_LINE.sub(lambda m: m.group(1) + MARK, text)
    return _NETRC_LINE.sub(lambda m: _NETRC_FIELD.sub(lambda f: f.group(1) + f.group(2) + MARK, m.group(0)), text)


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
_ASSIGNMENT_TRIGGERS = ("pass", "pw", "secret", "token", "key", "cred", "auth", "cookie")


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
    quote = value[0] if value[0] in "\"'`" and len(value) >= 2 and value[-1] == value[0] else ""
    return match.group("key") + match.group("sep") + quote + MARK + quote


def _key_name(match: re.Match[str]) -> str:
    """The whole name the secret word ends (``AWS_SECRET_ACCESS_KEY``, ``self.token``' ``token``)."""
    text, start = match.string, match.start()
    begin = start
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] in "_-"):
        begin -= 1
    return text[begin:start] + match.group("key")


def _keeps(value: str, key: str) -> bool:
    """Whether an assigned value is no secret: empty, a reference, a literal, an expression."""
    inner = value[1:-1] if len(value) >= 2 and value[0] in "\"'`" and value[-1] == value[0] else value
    stripped = inner.strip()
    if not stripped or stripped == MARK or set(stripped) <= set("*x•.-_ "):
        return True
    if _REFERENCE.match(stripped) or stripped.lower() in _NOT_SECRETS:
        return True
    if inner is value:  # unquoted: code (an attribute, a call, a subscript, the same name) is no value
        if _EXPRESSION.search(stripped) or stripped.lower() == key.strip("\"'").lower():
            return True
        if stripped in ("|", ">", "|-", ">-", "{", "[") or stripped.isdigit() and len(stripped) < 4:
            return True
    return False
