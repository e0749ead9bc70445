"""Write the README screenshot: the main screen in a rich state, from the offline demo.

python -m tests.helpers.make_screenshot docs/screenshot.svg
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from tests.helpers.tui import SIZE, build, demo_app, ready, settle


async def main(target: Path) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="ccm-shot-"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(scratch / "config"))
    directory = await build(scratch / "demo", 6)  # trip concluded, login test open
    app = demo_app(directory)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one("Sidebar").focus_effort("japan-trip")
        await settle(pilot)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(app.export_screenshot(title="ccm-tui demo"), encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshot.svg")))
