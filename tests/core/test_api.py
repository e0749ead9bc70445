"""``core/api.py`` keeps one list of names (its ``_LAZY`` table): the imports mypy reads name exactly those,
each is a name (no whole module, no second name for the same thing), and ``ui/``, ``commands/`` and
``memory_server/`` together use every one of them and nothing else (issue 43, item 5)."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

from ccm_tui.core import api

PACKAGE = Path(api.__file__).resolve().parents[1]
USERS = ("ui", "commands", "memory_server")


def typing_imports() -> dict[str, str]:
    """The names the ``if TYPE_CHECKING:`` block of api.py imports -> the module each comes from."""
    tree = ast.parse(Path(api.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    names: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom), ast.unparse(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: import it as itself (``as {alias.name}``)"
            names[alias.name] = "." * node.level + (node.module or "")
    return names


def used_names(source: str) -> set[str]:
    """What one module takes from the api: ``from ..core.api import X`` and ``api.X`` after
    ``from ..core import api``."""
    tree = ast.parse(source)
    used: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.endswith("core.api"):
                used |= {alias.name for alias in node.names}
            elif node.module.endswith("core") or node.module == "core":
                modules |= {alias.asname or alias.name for alias in node.names if alias.name == "api"}
        elif isinstance(node, ast.Import):
            modules |= {alias.asname for alias in node.names if alias.name.endswith("core.api") and alias.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            used.add(node.attr)
    return used


def test_the_table_is_the_one_list() -> None:
    assert api.__all__ == list(api._LAZY)
    assert typing_imports() == api._LAZY


def test_usage_parser_sees_both_forms() -> None:
    source = "from ..core.api import A, B as C\nfrom ...core import api as core\ncore.D\nfrom ..core import x\nx.E\n"
    assert used_names(source) == {"A", "B", "D"}


def test_the_ui_the_commands_and_the_mcp_server_use_every_name_and_nothing_else() -> None:
    used: set[str] = set()
    for user in USERS:
        for path in sorted((PACKAGE / user).rglob("*.py")):
            used |= used_names(path.read_text(encoding="utf-8"))
    exported = set(api._LAZY)
    assert sorted(used - exported) == [], "used but not exported"
    assert sorted(exported - used) == [], "exported but used by none of ui/, commands/, memory_server/"


@pytest.mark.parametrize("name", sorted(api._LAZY))
def test_each_name_is_a_name_not_a_module(name: str) -> None:
    assert not isinstance(getattr(api, name), types.ModuleType)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'repair'"):
        api.repair  # noqa: B018
