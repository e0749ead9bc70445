"""An effort's id: a slug of its name in any script, unique within 64 characters."""

from __future__ import annotations

import pytest

from ccm_tui.core.efforts.names import slugify, unique_slug


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Auth Bug", "auth-bug"),
        ("../../etc/passwd", "etc-passwd"),
        ("Café crème", "cafe-creme"),
        ("", "effort"),
        ("!!!", "effort"),
        ("x" * 100, "x" * 64),
        # Other scripts are transliterated, never collapsed to "effort" (issue 14: names).
        ("日本旅行", "ri-ben-lu-xing"),
        ("Отпуск в Японии", "otpusk-v-yaponii"),
        ("Ελληνικά μαθήματα", "ellinika-mathimata"),
        ("🎉 party", "tada-party"),
    ],
)
def test_slugify(name, slug):
    assert slugify(name) == slug


def test_unique_slug_adds_a_suffix_within_64_chars():
    assert unique_slug("auth bug", {"auth-bug"}) == "auth-bug-2"
    assert unique_slug("auth bug", {"auth-bug", "auth-bug-2"}) == "auth-bug-3"
    long = "y" * 64
    assert unique_slug(long, {long}) == "y" * 62 + "-2"
