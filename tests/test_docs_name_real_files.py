"""Every file or module a docstring, a comment or a doc names exists (issue 43: sixteen references
named modules that had moved or gone). A path such as ``core/turn/_record.py`` may be written from
the repository, from ``ccm_tui/`` or from ``ccm_tui/core/``; a dotted ``ccm_tui.x.y`` must start with
a real module (what follows it may be an attribute)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ccm_tui"
DOCS = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
DIRS = r"(?:ccm_tui|core|ui|commands|restore|replay|memory_server|tests|benchmarks|docs|prompts|styles)/"
PATH = re.compile(rf"(?<![\w/.-])({DIRS}[\w/.-]*\.(?:py|md|tcss|toml|json|yaml|tsv))")
DOTTED = re.compile(r"(?<![\w.])(ccm_tui(?:\.\w+)+)")
BARE = re.compile(r"(?<![\w/.-])([a-z_]\w*\.(?:py|tcss))\b")
EXAMPLES = {"a.py", "docs/x.md", "main.py"}  # example values (a parser's docstring, recall's identifier parts)


def _files() -> set[str]:
    skip = {".git", ".venv", ".ci-venv", "__pycache__", "node_modules"}
    return {p.relative_to(REPO).as_posix() for p in REPO.rglob("*") if not skip.intersection(p.parts)}


def _modules() -> set[str]:
    found = {p.relative_to(REPO).with_suffix("").as_posix().replace("/", ".") for p in PACKAGE.rglob("*.py")}
    return found | {m.removesuffix(".__init__") for m in found}


def _texts() -> Iterator[tuple[str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield str(path.relative_to(REPO)), doc
        for number, line in enumerate(source.splitlines(), 1):
            if "#" in line:
                yield f"{path.relative_to(REPO)}:{number}", line.split("#", 1)[1]
    for path in DOCS:
        yield str(path.relative_to(REPO)), path.read_text(encoding="utf-8")


def test_every_named_file_and_module_exists():
    files, modules = _files(), _modules()
    names = {Path(f).name for f in files}
    stale = []
    for where, text in _texts():
        for ref in PATH.findall(text):
            ref = ref.rstrip(".")
            if ref not in EXAMPLES and not any(base + ref in files for base in ("", "ccm_tui/", "ccm_tui/core/")):
                stale.append(f"{where}: {ref}")
        for ref in DOTTED.findall(text):
            parts = ref.split(".")
            if not any(".".join(parts[:n]) in modules for n in range(len(parts), 1, -1)):
                stale.append(f"{where}: {ref}")
        stale += [f"{where}: {ref}" for ref in BARE.findall(text) if ref not in names and ref not in EXAMPLES]
    assert stale == []
