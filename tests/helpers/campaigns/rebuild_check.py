"""After a kill: does the derived index rebuild the same? A copy of the session without
``derived.sqlite`` (rebuilt from the record when opened) must give the same ``status --json`` and the
same ``search --json`` answers as the session with the file the killed process left."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any


def _cli_json(*argv: str) -> tuple[int, Any, str]:
    from ccm_tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    try:
        data = json.loads(out.getvalue()) if rc == 0 else None
    except ValueError:
        data = out.getvalue()
    return rc, data, err.getvalue()


def _answers(session: Path, queries: tuple[str, ...]) -> dict[str, Any]:
    rc, status, err = _cli_json("status", "--session-dir", str(session), "--json")
    if rc != 0:
        return {"status failed": err.strip()}
    status.pop("session_dir", None)
    found = {}
    for query in queries:
        rc, data, err = _cli_json("search", "--session-dir", str(session), "--json", "--limit", "50", query)
        found[query] = data if rc == 0 else f"search failed: {err.strip()}"
    return {"status": status, "search": found}


def rebuilt_differs(session: Path, queries: tuple[str, ...]) -> str | None:
    """None when the session answers the same with its derived file and with one rebuilt from the record;
    else what differs (one line). The copy is taken first: it holds what the kill left."""
    with tempfile.TemporaryDirectory(prefix="ccm-rebuild-") as tmp:
        copy = Path(tmp) / "session"
        shutil.copytree(session, copy, symlinks=True)
        for derived in copy.glob("derived.sqlite*"):
            derived.unlink()
        kept, rebuilt = _answers(session, queries), _answers(copy, queries)
    if kept == rebuilt:
        return None
    if kept.get("status") != rebuilt.get("status"):
        a, b = kept.get("status") or kept, rebuilt.get("status") or rebuilt
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        return f"status differs after a rebuild of derived.sqlite: {', '.join(keys)}"
    return "search differs after a rebuild of derived.sqlite: " + ", ".join(
        q for q in queries if kept["search"].get(q) != rebuilt["search"].get(q)
    )
