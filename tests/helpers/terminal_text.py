"""Text heavy in what a terminal acts on (escapes and their parts, C1 and bidirectional controls), and the
checks that none is left."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
FORBIDDEN = frozenset([chr(c) for c in (*range(0, 9), *range(11, 32), *range(0x7F, 0xA0))] + list(BIDI))
# Text heavy in what a terminal acts on: escapes and their parts, C1, bidi controls, and anything else.
hostile = st.lists(
    st.one_of(
        st.sampled_from(["\x1b", "\x1b[", "\x1b]", "\x1bP", "\x07", "\x9b", "\x9d", "\x9c", "\x1b\\", "52;c;", "2J"]),
        st.sampled_from(sorted(FORBIDDEN)),
        st.text(max_size=8),
    ),
    max_size=30,
).map("".join)
SOME = settings(max_examples=400, deadline=None)


def clean_of(text: str) -> bool:
    """No forbidden character left (newlines and tabs are allowed)."""
    return not FORBIDDEN.intersection(text)


def strings(value):
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
