"""``repair`` under faults: killed mid-way, run on a valid manifest, on a missing or cut event
log, on a hostile manifest (YAML alias bomb)."""

from __future__ import annotations

import time

import pytest

from ccm_tui.core.engine import repair
from tests.helpers.openai_server import call, text, tool_calls


def build_session(ccm) -> None:
    """alpha concluded with a summary, beta open and active."""
    ccm.server.push(tool_calls(call("open_effort", {"name": "alpha"})), text("ok"))
    ccm.send("work on alpha")
    ccm.server.push(tool_calls(call("close_effort", {})), text("Alpha summary."), text("done"))
    ccm.send("alpha is done")
    ccm.server.push(tool_calls(call("open_effort", {"name": "beta"})), text("ok"))
    ccm.send("work on beta")


def rows(ccm) -> dict:
    return {e["id"]: e for e in ccm.status()["efforts"]}


# --------------------------------------------------------------------------- item 4
@pytest.mark.parametrize("dies_in", ["keep_copy", "save_manifest"])
def test_a_repair_killed_at_any_step_leaves_a_manifest(ccm, monkeypatch, dies_in):
    build_session(ccm)
    manifest = ccm.dir / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("status:", "status: [broken", 1))
    before = manifest.read_bytes()
    real = getattr(repair, dies_in)

    def dies(*args, **kwargs):
        if dies_in == "keep_copy":
            real(*args, **kwargs)
        raise SystemExit("killed")  # the process ends here, as a kill -9 would

    monkeypatch.setattr(repair, dies_in, dies)
    with pytest.raises(SystemExit):
        repair.rebuild_manifest(ccm.dir)
    assert manifest.read_bytes() == before  # still there, untouched
    monkeypatch.undo()
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 0, err
    assert rows(ccm)["beta"]["active"] is True


# --------------------------------------------------------------------------- item 5
def test_repair_refuses_a_valid_manifest_without_force(ccm):
    build_session(ccm)
    before = (ccm.dir / "manifest.yaml").read_bytes()
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 1 and "is valid (2 effort(s)); nothing to repair" in err and "--force" in err
    assert err.count("\n") == 1
    assert (ccm.dir / "manifest.yaml").read_bytes() == before


@pytest.mark.parametrize("events", ["missing", "truncated"])
def test_forced_repair_never_downgrades_a_readable_manifest(ccm, events):
    build_session(ccm)
    path = ccm.dir / "events.jsonl"
    if events == "missing":
        path.unlink()
    else:
        path.write_text("".join(path.read_text().splitlines(keepends=True)[:2]))
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir), "--force")
    assert rc == 0, err
    assert "kept as manifest.yaml.before-repair-" in out
    after = rows(ccm)
    assert after["alpha"]["status"] == "concluded" and after["alpha"]["summary"] == "Alpha summary."
    assert after["beta"]["status"] == "open" and after["beta"]["active"] is True


def test_repair_of_a_broken_manifest_keeps_its_readable_entries(ccm):
    build_session(ccm)
    (ccm.dir / "events.jsonl").unlink()  # the event log is gone too: only the manifest knows
    manifest = ccm.dir / "manifest.yaml"
    lines = manifest.read_text().splitlines()
    alpha_status = next(i for i, line in enumerate(lines) if line.strip().startswith("status:"))
    lines[alpha_status] = "    status: [broken"
    manifest.write_text("\n".join(lines) + "\n")
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 0, err
    after = rows(ccm)
    assert after["beta"]["status"] == "open" and after["beta"]["active"] is True  # kept as the manifest said
    assert after["alpha"]["status"] == "concluded" and "summary lost" in after["alpha"]["summary"]


# --------------------------------------------------------------------------- item 8
BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    + ["efforts: []", ""]
)


def test_a_yaml_alias_bomb_is_refused_fast_and_repair_is_offered(ccm):
    build_session(ccm)
    (ccm.dir / "manifest.yaml").write_text(BOMB)
    start = time.monotonic()
    rc, out, err = ccm.run("status", "--session-dir", str(ccm.dir))
    assert time.monotonic() - start < 5
    assert rc == 1 and "aliases are not allowed" in err and "ccm-tui repair" in err and err.count("\n") == 1
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 0, err
    after = rows(ccm)
    assert after["beta"]["active"] is True and after["alpha"]["summary"] == "Alpha summary."
