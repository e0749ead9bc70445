"""Where an export writes: a file path as typed, or a file named for the export inside a directory — one
that exists, or one written with a trailing ``/`` (created, never a file of that name: issue 38)."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.core.views.markdown_export import export_conversation, export_path


def test_a_trailing_slash_means_a_directory_even_when_it_does_not_exist(tmp_path: Path) -> None:
    assert export_path(f"{tmp_path}/new/", "trip.md") == tmp_path / "new" / "trip.md"


def test_an_existing_directory_takes_the_file_name_and_a_file_path_is_kept(tmp_path: Path) -> None:
    assert export_path(tmp_path, "trip.md") == tmp_path / "trip.md"
    assert export_path(str(tmp_path / "notes.md"), "trip.md") == tmp_path / "notes.md"
    assert export_path(str(tmp_path / "plain"), "trip.md") == tmp_path / "plain"  # no slash: a file


def test_the_conversation_exported_to_a_new_directory_lands_inside_it(tmp_path: Path) -> None:
    raw = tmp_path / "raw.jsonl"
    raw.write_text('{"role": "user", "content": "hello there"}\n', encoding="utf-8")
    written = export_conversation("chat", raw, [], f"{tmp_path}/exports/")
    assert written == tmp_path / "exports" / "chat.md"
    assert (tmp_path / "exports").is_dir() and "hello there" in written.read_text(encoding="utf-8")
