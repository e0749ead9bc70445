"""Ids and names are validated whole: ``$`` matches before a final newline, so ``"abc\\n"`` passed
(issue 25, item 12)."""

from __future__ import annotations

import pytest

from ccm_tui.config import session_dir_for
from ccm_tui.core.manifest.effort import SLUG_RE, ManifestError, effort_from_dict
from ccm_tui.restore.formats import opencode_storage


@pytest.mark.parametrize("bad", ["abc\n", "abc\r\n", "\nabc", "ab c", "-abc"])
def test_an_effort_id_with_a_newline_is_refused(bad):
    assert not SLUG_RE.fullmatch(bad)
    with pytest.raises(ManifestError, match="invalid id"):
        effort_from_dict({"id": bad, "status": "open"}, "manifest.yaml", 0)
    assert effort_from_dict({"id": "abc", "status": "open"}, "manifest.yaml", 0).id == "abc"


def test_an_opencode_id_with_a_newline_is_not_safe():
    assert not opencode_storage._SAFE_ID.fullmatch("ses_1\n")
    assert opencode_storage._SAFE_ID.fullmatch("ses_1")


@pytest.mark.parametrize("bad", ["a\nb", "a\x1bb", "a\x7f"])
def test_a_session_name_with_control_characters_is_refused(bad):
    with pytest.raises(ValueError, match="invalid session name"):
        session_dir_for(bad)
