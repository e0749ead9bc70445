"""The installed MCP SDK is one the project pins and has what the server uses; the server imports the SDK's
types as ``mcp.types`` and no distribution that pyproject.toml does not name (pydantic and anyio are declared as well: the
SDK's own requirements, through which its API is spelled)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions, version

from tests.helpers.mcp_session import ROOT

SERVER_SOURCES = [*sorted((ROOT / "ccm_tui" / "memory_server").glob("*.py")), ROOT / "ccm_tui" / "commands" / "mcp.py"]
THROUGH_MCP: set[str] = set()  # pydantic and anyio, which the server imports directly, are declared too


def numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def satisfies(installed: str, spec: str) -> bool:
    checks = {">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b}
    have = numbers(installed)
    for clause in spec.split(","):
        op, wanted = re.fullmatch(r"\s*(>=|<=|<|>)\s*([\d.]+)\s*", clause).groups()  # type: ignore[union-attr]
        want = numbers(wanted)
        width = max(len(have), len(want))
        if not checks[op](have + (0,) * (width - len(have)), want + (0,) * (width - len(want))):
            return False
    return True


def declared() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]


def test_the_installed_mcp_sdk_is_within_the_pinned_range_and_has_mcp_server():
    pin = next(d for d in declared() if re.match(r"mcp\s*[<>=]", d))
    spec = pin[len("mcp") :]
    assert satisfies(version("mcp"), spec), f"mcp {version('mcp')} installed, pyproject pins {pin}"
    assert satisfies("2.3.0", ">=2.3,<3") and not satisfies("3.0.0", ">=2.3,<3") and not satisfies("2.2.9", ">=2.3")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, JSONRPCError, ToolAnnotations

    server = MCPServer("probe")
    lowlevel = server._lowlevel_server  # the server runs it over its filtered stdio streams (wire.py)
    assert callable(lowlevel.run) and callable(lowlevel.create_initialization_options)
    assert callable(stdio_server) and SessionMessage and ToolAnnotations and JSONRPCError
    assert (PARSE_ERROR, INVALID_REQUEST) == (-32700, -32600)


def test_the_server_imports_only_declared_distributions():
    names = {re.split(r"[<>=!~\s\[;]", d, maxsplit=1)[0].lower().replace("_", "-") for d in declared()}
    owners = packages_distributions()
    undeclared = []
    for path in SERVER_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in ("ccm_tui", "__future__") or top in THROUGH_MCP:
                    continue
                dists = {d.lower().replace("_", "-") for d in owners.get(top, [top])}
                if not dists & names:
                    undeclared.append(f"{path.name}: {module} ({', '.join(sorted(dists))})")
    assert not undeclared, undeclared
