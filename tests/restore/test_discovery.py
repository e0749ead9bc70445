"""Which files a restore is about: files as given, directories searched, globs expanded."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccm_tui.restore.discovery import (
    NoTranscriptFound,
    expand_transcripts,
    files_under,
    is_opencode_storage_detail,
    names_a_search,
    single_transcript,
)


def touch(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """An agent's folder: transcripts of every suffix, other files, a hidden folder, a symlink,
    and an opencode storage with its session file and the records that are not sessions."""
    root = tmp_path / "agents"
    for name in ("a.jsonl", "b.JSON", "c.md", "d.markdown", "e.log", "f.txt", "deep/er/g.jsonl"):
        touch(root / name)
    for name in ("settings.toml", "image.png", "noext"):
        touch(root / name)
    touch(root / ".hidden" / "h.jsonl")
    touch(root / "visible" / ".dotfile.jsonl")  # a hidden *file* in a visible folder is kept
    (root / "link.jsonl").symlink_to(root / "a.jsonl")
    storage = root / "opencode" / "storage"
    touch(storage / "session" / "proj" / "ses_1.json")
    for detail in ("message/ses_1/msg_1.json", "part/msg_1/prt_1.json", "project/p.json", "session_diff/d.json"):
        touch(storage / detail)
    touch(storage / "todo" / "t.json")
    return root


def names(paths: list[Path], root: Path) -> list[str]:
    return [path.relative_to(root).as_posix() for path in paths]


def test_a_directory_yields_its_transcript_candidates_sorted(tree: Path) -> None:
    assert names(files_under(tree), tree) == [
        "a.jsonl",
        "b.JSON",
        "c.md",
        "d.markdown",
        "deep/er/g.jsonl",
        "e.log",
        "f.txt",
        "opencode/storage/session/proj/ses_1.json",
        "visible/.dotfile.jsonl",
    ]


def test_opencode_storage_details_are_not_sessions(tmp_path: Path) -> None:
    storage = tmp_path / "share" / "opencode" / "storage"
    assert not is_opencode_storage_detail(storage / "session" / "proj" / "ses_1.json")
    for folder in ("message", "part", "project", "session_diff", "todo"):
        assert is_opencode_storage_detail(storage / folder / "x" / "y.json")
    assert not is_opencode_storage_detail(tmp_path / "message" / "y.json")  # only under a storage folder
    assert not is_opencode_storage_detail(tmp_path / "storage")


def test_files_are_taken_as_given_and_each_file_once(tree: Path) -> None:
    settings = tree / "settings.toml"
    found = expand_transcripts([str(settings), str(tree / "a.jsonl"), str(tree / "deep"), str(tree / "a.jsonl")])
    assert names(found, tree) == ["settings.toml", "a.jsonl", "deep/er/g.jsonl"]
    missing = tree / "missing.jsonl"  # not a glob: the importer will report it
    assert expand_transcripts([str(missing)]) == [missing]


def test_globs_expand_to_files_and_to_the_transcripts_of_matching_directories(tree: Path) -> None:
    found = expand_transcripts([str(tree / "*.md"), str(tree / "de*")])
    assert names(found, tree) == ["c.md", "deep/er/g.jsonl"]
    assert names(expand_transcripts([str(tree / "**" / "*.jsonl")]), tree)[:2] == ["a.jsonl", "deep/er/g.jsonl"]


def test_a_name_that_matches_nothing_is_an_error(tree: Path) -> None:
    with pytest.raises(NoTranscriptFound, match="no transcript found at .*nothing-"):
        expand_transcripts([str(tree / "a.jsonl"), str(tree / "nothing-*.jsonl")])
    empty = tree / "empty-folder"
    empty.mkdir()
    with pytest.raises(NoTranscriptFound):
        expand_transcripts([str(empty)])


def test_one_file_is_a_single_import_anything_else_a_search(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree))
    assert single_transcript([str(tree / "a.jsonl")]) == tree / "a.jsonl"
    assert single_transcript(["~/c.md"]) == tree / "c.md"
    assert single_transcript([str(tree / "missing.jsonl")]) == tree / "missing.jsonl"
    assert single_transcript([str(tree / "a.jsonl"), str(tree / "c.md")]) is None
    assert single_transcript([str(tree)]) is None
    assert single_transcript([str(tree / "*.md")]) is None
    assert names_a_search(str(tree / "deep")) and names_a_search(str(tree / "?.md"))
    literal = touch(tree / "odd[1].md")  # an existing file whose name looks like a glob is a file
    assert not names_a_search(str(literal)) and single_transcript([str(literal)]) == literal
