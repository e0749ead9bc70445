"""Secrets in every shape stay home (issue 42, item 2): 49 of these 77 shapes left the value readable,
in a file or in a JSONL transcript record (where a quote is ``\\"``); two renamed credential files were read."""

from __future__ import annotations

import pytest

from ccm_tui.restore import evidence as ev
from ccm_tui.restore.redaction import redact_text
from tests.helpers.secret_shapes import shapes, transcript_record, write_renamed

SHAPES = shapes()


@pytest.mark.parametrize("shape", SHAPES, ids=[s.label for s in SHAPES])
def test_a_value_in_this_shape_is_redacted_in_a_file_and_in_a_transcript(shape):
    assert shape.value not in redact_text(shape.text)
    assert shape.value not in redact_text(transcript_record(shape))


def test_there_are_at_least_72_shapes():
    assert len(SHAPES) >= 72 and len({s.value for s in SHAPES}) == len(SHAPES)


def test_a_transcript_line_stays_json_after_redaction():
    import json

    for shape in SHAPES[:20]:
        json.loads(redact_text(transcript_record(shape)))


def test_renamed_credential_files_are_refused_by_their_content(tmp_path):
    files = ev.FileAccess(tmp_path, f"--root {tmp_path}")
    for path in write_renamed(tmp_path):
        with pytest.raises(ev.ToolError, match=r"^refused: "):
            files.open(path)
    (tmp_path / "renamed" / "deploy-notes.txt").write_text("machine ci.example.com\npassword hunter22\n")
    with pytest.raises(ev.ToolError, match=r"holds a \.netrc"):
        files.open("renamed/deploy-notes.txt")
    (tmp_path / "renamed" / "build.sh").write_text("cd app\ngit pull\nls\ndocker build .\n")
    assert files.open("renamed/build.sh").text.startswith("cd app")  # a script is code, not a history


@pytest.mark.parametrize(
    "line",
    [
        "password = get_password()",
        "db_password = config.db.password",
        "api_key = os.getenv('API_KEY')",
        "def login(password: str, token: Optional[str] = None):",
        "primary_key=True",
        "const token: string = process.env.TOKEN;",
    ],
)
def test_code_that_names_a_secret_stays(line):
    assert redact_text(line) == line
