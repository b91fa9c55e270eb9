"""README.md cannot go stale: every client configuration in it is valid for its client's documented
format and starts a server with flags and variables that server has; the toolset table is
github-mcp's TOOLS.md, its dynamic row what the official client lists at start; the surface table
is what bench/surfaces.py measures now; the limits table shows the runtime's defaults; the
five-line toolset summary names the default set the server serves."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from bench.surfaces import rows
from bench.toolsets import measure
from ghmcp_runtime.calls.http_cache import Limits
from ghmcp_runtime.core.concurrent import DEFAULT_INFLIGHT_PER_CALLER, MAX_CONCURRENT
from ghmcp_runtime.core.forges import FORGES
from ghmcp_runtime.serving import app
from ghmcp_runtime.serving.environment import variables
from ghmcp_runtime.stores.setting import DEFAULT_KEYS_PER_CALLER, DEFAULT_SHARED_KEYS
from tests.support.readme import README, number, table_rows
from tests.support.servers import FORGE_SERVERS, ROOT, SERVERS

BY_NAME = {s.name: s for s in [*SERVERS, *FORGE_SERVERS]}
UVX_OPTIONS = {"--find-links", "--from", "--with", "--python", "--index"}
STRINGS = {"type": "array", "items": {"type": "string"}}
ENV = {"type": "object", "additionalProperties": {"type": "string"}}
# Claude Desktop: claude_desktop_config.json, https://modelcontextprotocol.io/quickstart/user
CLAUDE_DESKTOP = {
    "type": "object", "required": ["mcpServers"], "additionalProperties": False,
    "properties": {"mcpServers": {"type": "object", "minProperties": 1, "additionalProperties": {
        "type": "object", "required": ["command"], "additionalProperties": False,
        "properties": {"command": {"type": "string"}, "args": STRINGS, "env": ENV}}}}}
# Cursor: mcp.json, https://docs.cursor.com/context/mcp (stdio: command, args, env, envFile;
# remote: url, headers)
CURSOR = {
    "type": "object", "required": ["mcpServers"], "additionalProperties": False,
    "properties": {"mcpServers": {"type": "object", "minProperties": 1, "additionalProperties": {
        "type": "object", "additionalProperties": False,
        "oneOf": [{"required": ["command"]}, {"required": ["url"]}],
        "properties": {"type": {"enum": ["stdio", "http", "sse"]}, "command": {"type": "string"},
                       "args": STRINGS, "env": ENV, "envFile": {"type": "string"},
                       "url": {"type": "string"}, "headers": ENV}}}}}
# VS Code: .vscode/mcp.json, https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
VSCODE = {
    "type": "object", "required": ["servers"], "additionalProperties": False,
    "properties": {
        "inputs": {"type": "array", "items": {
            "type": "object", "required": ["type", "id", "description"], "additionalProperties": False,
            "properties": {"type": {"const": "promptString"}, "id": {"type": "string"},
                           "description": {"type": "string"}, "password": {"type": "boolean"}}}},
        "servers": {"type": "object", "minProperties": 1, "additionalProperties": {"oneOf": [
            {"type": "object", "required": ["type", "command"], "additionalProperties": False,
             "properties": {"type": {"const": "stdio"}, "command": {"type": "string"}, "args": STRINGS,
                            "env": ENV, "envFile": {"type": "string"}}},
            {"type": "object", "required": ["type", "url"], "additionalProperties": False,
             "properties": {"type": {"enum": ["http", "sse"]}, "url": {"type": "string"},
                            "headers": ENV}}]}}}}


def _json_blocks() -> list[dict[str, Any]]:
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", README, re.S)]


def _configs() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in _json_blocks():
        if "mcpServers" in block:
            out += [("claude-desktop", block), ("cursor", block)]
        elif "servers" in block:
            out.append(("vscode", block))
    return out


def test_the_readme_shows_a_configuration_for_each_client() -> None:
    assert {client for client, _ in _configs()} == {"claude-desktop", "cursor", "vscode"}
    assert any("inputs" in b for b in _json_blocks())  # VS Code's secret prompt


@pytest.mark.parametrize(("client", "config"), _configs(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_client_configuration_is_valid_and_starts_a_server_it_names(client: str, config: dict[str, Any]) -> None:
    schema = {"claude-desktop": CLAUDE_DESKTOP, "cursor": CURSOR, "vscode": VSCODE}[client]
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(config)]
    assert not errors, errors
    for entry in (config.get("mcpServers") or config["servers"]).values():
        if "command" not in entry:
            continue
        args = list(entry.get("args", []))
        if entry["command"] == "uvx":
            while args[0] in UVX_OPTIONS:  # uvx's own, each with its value
                del args[:2]
            name = args.pop(0)
        else:
            name = entry["command"].rsplit("/", 1)[-1]
        server = BY_NAME[name]
        help_text = _help(importlib.import_module(f"{server.package}.server").SERVER)
        for flag in (a for a in args if a.startswith("--")):
            assert re.search(rf"(^|\s){re.escape(flag)}\b", help_text), (name, flag)
        known = {v.name for v in variables(FORGES[server.forge])}
        assert set(entry.get("env", {})) <= known, (name, entry["env"])


def _help(spec: Any) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        app.run(spec, ["--help"])
    return out.getvalue()


def test_the_toolset_table_is_github_mcps_tools_md() -> None:
    tools_md = (ROOT / "generated" / "github_mcp" / "TOOLS.md").read_text(encoding="utf-8")
    current = {r[0]: (r[1], r[2], number(r[3]), number(r[4])) for r in table_rows(tools_md, "toolset")}
    shown = table_rows(README, "toolset")
    checked = [r for r in shown if r[0] in current]
    assert len(checked) == len(current) - 1  # every row but "all"
    for row in checked:
        assert (row[1], row[2], number(row[3]), number(row[4])) == current[row[0]], row


def test_the_surface_table_is_what_bench_surfaces_measures() -> None:
    shown = table_rows(README, "server")
    assert shown
    for server_name, flags, tools, size, share in shown:
        spec = importlib.import_module(f"{BY_NAME[server_name].package}.server").SERVER
        measured = {label: row for label, *row in rows(spec)}
        label = "(no flags)" if flags == "(none)" else flags.strip("`")
        assert [number(tools), number(size), int(share.rstrip(" %"))] == list(measured[label]), (
            server_name, flags)


def test_the_five_lines_name_the_default_toolsets() -> None:
    github_mcp = importlib.import_module("github_mcp.server").SERVER
    line = next(x for x in README.splitlines() if x.startswith("uvx github-mcp  ") and "default" in x)
    named = tuple(re.split(r",\s*", line.split("default toolsets:")[1].strip()))
    assert named == github_mcp.default_toolsets


@pytest.mark.anyio
async def test_the_dynamic_row_is_what_the_client_lists_at_start() -> None:
    measured = (await measure())["rows"]["--dynamic-toolsets at start"]
    (row,) = [r for r in table_rows(README, "toolset") if r[0] == "`--dynamic-toolsets` at start"]
    assert (number(row[3]), number(row[4])) == (measured["tools"], measured["model_visible_bytes"])


def _amount(cell: str) -> int:
    """`1,000`, `4 MiB`, `16 MiB (2,048 entries …)` as a number."""
    amount, _, unit = cell.split(" (")[0].partition(" ")
    return number(amount) * (1024 * 1024 if unit == "MiB" else 1)


def test_the_limits_table_shows_the_runtimes_defaults() -> None:
    defaults = {
        "GHMCP_IDEMPOTENCY_KEYS_PER_CALLER": DEFAULT_KEYS_PER_CALLER,
        "GHMCP_IDEMPOTENCY_SHARED_KEYS": DEFAULT_SHARED_KEYS,
        "GHMCP_HTTP_CACHE_MAX_BYTES_PER_CALLER": Limits().max_bytes_per_caller,
        "GHMCP_HTTP_CACHE_MAX_BYTES": Limits().max_bytes,
        "GHMCP_MAX_INFLIGHT_PER_CALLER": DEFAULT_INFLIGHT_PER_CALLER,
        "GHMCP_MAX_CONCURRENT": MAX_CONCURRENT,
    }
    shown = {re.findall(r"`(GHMCP_[A-Z_]+)`", r[3])[0]: r[1] for r in table_rows(README, "what")}
    assert set(shown) == set(defaults)
    assert {k: _amount(v) for k, v in shown.items()} == defaults
    assert f"{Limits().max_entries:,} entries in memory" in shown["GHMCP_HTTP_CACHE_MAX_BYTES"]
