"""A manifest entry with fields of the wrong YAML type (a hand edit) is read, never a crash."""

from __future__ import annotations

import json

from ccm_tui.core.manifest.effort_list import load_manifest

HOSTILE = """efforts:
  - id: alpha
    status: open
    active: true
    name: 123
    created: 5
    summary: [1]
    source: "x"
    checkpoint: 7
    concluded_at: {a: 1}
  - id: beta
    status: concluded
    summary: ok
    name: [1]
    created: 2024-01-01
    source: [1, 2]
"""


def test_wrongly_typed_manifest_fields_are_coerced_or_dropped(tmp_path):
    path = tmp_path / "manifest.yaml"
    path.write_text(HOSTILE)
    alpha, beta = load_manifest(path)
    assert (alpha.name, alpha.created, alpha.summary, alpha.source, alpha.checkpoint) == ("123", "5", None, None, "7")
    assert alpha.concluded_at is None and alpha.active is True
    assert (beta.name, beta.created, beta.source) == ("beta", "2024-01-01", None)
    json.dumps([e.to_dict() for e in (alpha, beta)])  # status --json can print them


def test_the_cli_reads_a_hostile_manifest(tmp_path, capsys):
    from ccm_tui.cli import main

    (tmp_path / "efforts").mkdir()
    (tmp_path / "manifest.yaml").write_text(HOSTILE)
    (tmp_path / "efforts" / "alpha.jsonl").write_text('{"role":"user","content":"hi"}\n')
    assert main(["status", "--session-dir", str(tmp_path), "--json"]) == 0
    assert main(["status", "--session-dir", str(tmp_path)]) == 0
