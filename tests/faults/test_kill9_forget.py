"""A forget stopped at any moment: the session opens, the same forget again completes it, no other line
changes. In-process, at each of its file writes (what a kill -9 leaves: the writes before it done,
each whole, a temporary file half written); and real kill -9 at random moments (benchmarks/kill9.py
runs more)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ccm_tui.core.engine import forget as forget_module
from ccm_tui.core.engine.forget import PENDING_FILE, ForgetRequest, forget
from tests.helpers.campaigns.kill9_forget import SECRET, ForgetCampaign, build_session, check_after, run_forget_campaign


class Killed(BaseException):
    """The process died here."""


def test_a_forget_stopped_at_each_write_opens_and_completes_when_run_again(tmp_path, monkeypatch):
    base = tmp_path / "base"
    build_session(base, efforts=14)
    real_write = forget_module.atomic_write_bytes
    writes: list[Path] = []

    def counting(path: Path, data: bytes) -> None:
        writes.append(path)
        real_write(path, data)

    monkeypatch.setattr(forget_module, "atomic_write_bytes", counting)
    shutil.copytree(base, tmp_path / "whole")
    forget(tmp_path / "whole", ForgetRequest.of_text(SECRET))
    assert len(writes) >= 5  # a log, the ambient log, the history, the manifest, the journal
    report = ForgetCampaign()
    real_scrub = forget_module.scrub_index
    for stop in range(len(writes) + 2):  # (+1: in the index's scrub; +2: before the pending record goes)
        copy = tmp_path / f"stop-{stop}"
        shutil.copytree(base, copy)
        done = 0

        def dying(path: Path, data: bytes, stop: int = stop) -> None:
            nonlocal done
            if done == stop:
                (path.parent / f".{path.name}.dead.tmp").write_bytes(data[: len(data) // 2])  # torn temp
                raise Killed
            done += 1
            real_write(path, data)

        def dying_index(*_args: object, stop: int = stop) -> None:
            if stop == len(writes):
                raise Killed
            if stop == len(writes) + 1:
                real_scrub(*_args)
                raise Killed

        monkeypatch.setattr(forget_module, "atomic_write_bytes", dying)
        monkeypatch.setattr(forget_module, "scrub_index", dying_index)
        with pytest.raises(Killed):
            forget(copy, ForgetRequest.of_text(SECRET))
        monkeypatch.setattr(forget_module, "atomic_write_bytes", real_write)
        monkeypatch.setattr(forget_module, "scrub_index", real_scrub)
        assert (copy / PENDING_FILE).exists()
        report.kills += 1
        check_after(base, copy, report, f"stopped before write {stop}")
        assert not (copy / PENDING_FILE).exists()
    assert report.kills == len(writes) + 2
    assert report.unopenable == []
    assert report.half_done == []
    assert report.unrelated_lost == []
    assert report.corrupt == []


@pytest.mark.slow
def test_real_kill9_during_forget(tmp_path):
    report = run_forget_campaign(tmp_path, kills=4, seed=3, efforts=20, log=lambda *_: None)
    assert report.kills == 4 and report.violations == []
    assert report.unopenable == [] and report.half_done == [] and report.unrelated_lost == [] and report.corrupt == []


def test_forgetting_a_captured_effort_tells_watch_not_to_capture_it_again(tmp_path):
    import yaml

    from ccm_tui.core.engine.forget import CAPTURES_FILE

    session = tmp_path / "s"
    build_session(session, efforts=6)
    manifest = session / "manifest.yaml"
    text = manifest.read_text()
    head, body = text.split("\n", 1)
    document = yaml.safe_load(body)
    document["efforts"][2]["capture"] = {"agent": "claude-code", "source_id": "abc-123"}
    manifest.write_text(head + "\n" + yaml.safe_dump(document, sort_keys=False, allow_unicode=True))

    forget(session, ForgetRequest.of_effort("e-002"))
    forget(session, ForgetRequest.of_effort("e-004"))  # (not captured: nothing added)

    assert (session / CAPTURES_FILE).read_text() == "claude-code:abc-123\n"
    assert not (session / "efforts" / "e-002.jsonl").exists()
    assert "e-002" not in manifest.read_text()
