"""Is a line only a date and/or time? The metadata line exporters write above or under a heading.

Exporters write it in many ways: ``2025-06-01 10:32:07``, ``*10:32 AM*``,
``**[2025-07-02 20:06:59]**``, ``_Jun 1, 2025, 10:32 AM_``, ``*1 June 2025 10:36*``,
``Sunday, June 1, 2025 at 10:33``, ``> 2025-06-01 10:35``, ``🕐 2025-06-01 10:37:00``,
``Time: 2025-06-01T10:32:07Z``. The line is read as words: once markup, an emoji and
a ``time:``/``date:`` label are set aside, every word must be a date or time word
(numbers, ISO dates, ``2025年6月1日``, clock times, English month and weekday names,
``at``, ``AM``, time zones), and there must be a clock time or a full date among them. So
``fix 10 tests`` or ``June was hot`` are text.
"""

from __future__ import annotations

import re

_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_WEEKDAY = r"mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?"
_ISO = r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
_WORD = re.compile(
    rf"(?P<iso>{_ISO})|(?P<date>\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}|(?:\d{{4}}年)?\d{{1,2}}月\d{{1,2}}日)|"
    r"(?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)|"
    rf"(?P<month>(?:{_MONTH})\.?)(?![a-z])|(?P<weekday>(?:{_WEEKDAY})\.?)(?![a-z])|"
    r"(?P<number>\d{1,4}(?:st|nd|rd|th)?)(?![\w:])|(?P<filler_cjk>[（）(]?[日月火水木金土][曜]?日?[）)]?)|(?P<filler>at|on|[ap]\.?m\.?|utc|gmt|z)(?![a-z])|"
    r"(?P<zone>[A-Z]{2,5}|[+-]\d{2}:?\d{2})(?![\w])|(?P<gap>[\s,()\[\]|·•–—-]+)",
    re.IGNORECASE,
)
_ZONE_ONLY = re.compile(r"[A-Z]{2,5}")
_MARKUP = re.compile(r"^[\s*_`>#]*|[\s*_`]*$")
_SYMBOL = re.compile(r"^[^\w\s\[(]{1,4}\s*")
_LABEL = re.compile(r"^(?:time(?:stamp)?|date|sent|created|at)\s*[:：]\s*", re.IGNORECASE)
_MAX_LENGTH = 80


def is_timestamp(line: str) -> bool:
    """Is ``line`` only a date and/or time (a message's metadata line)?"""
    text = _MARKUP.sub("", line)
    if not text or len(text) > _MAX_LENGTH:
        return False
    text = _LABEL.sub("", _SYMBOL.sub("", text))
    kinds: set[str] = set()
    position = 0
    while position < len(text):
        match = _WORD.match(text, position)
        if match is None or match.end() == position:
            return False
        kind = match.lastgroup or "gap"
        if kind == "zone" and match.group()[0] not in "+-" and not _ZONE_ONLY.fullmatch(match.group()):
            return False
        kinds.add(kind)
        position = match.end()
    full_date = "iso" in kinds or "date" in kinds or ("month" in kinds and "number" in kinds)
    return "time" in kinds or full_date
