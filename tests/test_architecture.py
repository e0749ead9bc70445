"""The core never imports the UI; commands that must start fast do not import litellm."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "ccm_tui"
UI_FREE = ["core", "restore", "replay", "memory_server"]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            prefix = "." * node.level
            names.add(prefix + node.module)
    return names


def test_core_and_libraries_never_import_textual_or_the_ui():
    offenders = []
    for package in UI_FREE:
        for path in (ROOT / package).rglob("*.py"):
            for name in imported_modules(path):
                if name.split(".")[0] == "textual" or ".ui" in name or name.startswith("ccm_tui.ui"):
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_search_and_status_do_not_import_litellm_or_textual(tmp_path):
    code = (
        "import sys; from ccm_tui.cli import main; "
        f"main(['search', '--session-dir', {str(tmp_path)!r}, '--json', 'x']); "
        f"main(['status', '--session-dir', {str(tmp_path)!r}, '--json']); "
        "bad = [m for m in ('litellm', 'textual', 'openai') if m in sys.modules]; "
        "sys.stderr.write(repr(bad)); sys.exit(1 if bad else 0)"
    )
    (tmp_path / "efforts").mkdir()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_no_import_cycles_anywhere():
    """Module-level, lazy and annotation-only (TYPE_CHECKING) imports alike: no module needs,
    even for its type hints, a module that needs it."""
    import grimp

    graph = grimp.build_graph("ccm_tui", exclude_type_checking_imports=False)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                cycles.append(" -> ".join((module, *chain)))
    assert cycles == []


def test_only_the_settings_module_reads_the_environment():
    offenders = []
    for path in ROOT.rglob("*.py"):
        if path.name == "config.py" and path.parent == ROOT:
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("os.environ.get", "os.getenv", "environ["):
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert offenders == []


def test_every_documented_environment_variable_is_in_the_readme():
    from ccm_tui.config import ENVIRONMENT

    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    assert [name for name in ENVIRONMENT if name not in readme] == []


# What the UI, the commands and the MCP server may import from the core: its one public module.
CORE_DOORS = {"api"}


def test_the_ui_and_the_commands_reach_the_core_only_through_its_doors():
    offenders = []
    for package in ("ui", "commands", "memory_server"):
        for path in (ROOT / package).rglob("*.py"):
            for name in imported_modules(path):
                module = name.lstrip(".").split(".")
                if "core" in module and module.index("core") + 1 < len(module):
                    door = module[module.index("core") + 1]
                    if door not in CORE_DOORS:
                        offenders.append(f"{path.relative_to(ROOT)} imports core.{door}")
    assert offenders == []


def test_text_drawn_from_python_uses_no_color_that_needs_css_to_resolve():
    """``$text-muted`` is "auto 60%": CSS blends it with the background, but a Content style made in
    Python resolves "auto" alone, to white — muted text came out brighter than the text around it.
    ``$foreground-muted`` is a plain colour and renders dim in both."""
    offenders = [
        f"{path.relative_to(ROOT.parent)}:{n}"
        for path in sorted((ROOT / "ui").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"[\"'][^\"']*\$text-(muted|disabled)\b", line)
    ]
    assert not offenders, offenders


def test_every_declared_dependency_is_imported():
    """A dependency in pyproject.toml that no module imports is weight every install pays for nothing
    (platformdirs was declared for months while config.py resolved XDG paths by hand)."""
    import tomllib
    from importlib.metadata import packages_distributions

    def normal(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    pyproject = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {normal(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0]) for spec in pyproject["project"]["dependencies"]}
    imported = {name.split(".")[0] for path in ROOT.rglob("*.py") for name in imported_modules(path)}
    imported_distributions = {
        normal(dist) for module, dists in packages_distributions().items() if module in imported for dist in dists
    }
    assert sorted(declared - imported_distributions) == []


def test_the_readme_and_architecture_list_every_package_as_its_docstring_says():
    """The layout in README.md and the package table in docs/ARCHITECTURE.md are generated from the
    packages' docstrings (docs/layout.py); a package added or re-described without regenerating them,
    or a package the generator does not place, fails here."""
    done = subprocess.run(
        [sys.executable, str(ROOT.parent / "docs" / "layout.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    table = (ROOT.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    for init in ROOT.rglob("__init__.py"):
        package = init.parent.relative_to(ROOT).as_posix()
        if package != ".":
            assert f"| `ccm_tui/{package}/` |" in table
            assert f" {package.rsplit('/', 1)[-1]}/ " in readme


def test_every_package_says_what_it_may_import():
    """Each core package's docstring names what it may import (the layers contract enforces it)."""
    for init in (ROOT / "core").glob("*/__init__.py"):
        text = " ".join(init.read_text(encoding="utf-8").split())
        assert "Imports " in text or "imports only" in text, init.parent.name
