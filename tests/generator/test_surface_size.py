"""What keeps every generated server's tools/list small without losing the contract (issue 12):
no sentence repeated in every tool description, one compact error branch per outputSchema that
still names the envelope's fields, no spec enum in output rows, and every tool's error codes
reachable through the error-catalog resource the capability summary names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ghmcp_runtime.core.errors import ENVELOPE_SCHEMA
from tests.support.servers import SERVERS

GENERATED = Path(__file__).resolve().parents[2] / "generated"
PACKAGES = sorted(p.name for p in GENERATED.iterdir() if (p / "tools.json").is_file())


def _read(package: str, name: str) -> Any:
    return json.loads((GENERATED / package / name).read_text(encoding="utf-8"))


def _nodes(schema: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out = []
    if isinstance(schema, dict):
        out.append((path, schema))
        for key, value in schema.items():
            if key == "properties":
                out += [n for name, sub in value.items() for n in _nodes(sub, f"{path}.{name}")]
            elif isinstance(value, (dict, list)):
                out += _nodes(value, f"{path}/{key}")
    elif isinstance(schema, list):
        out += [n for k, item in enumerate(schema) for n in _nodes(item, f"{path}[{k}]")]
    return out


def test_every_server_is_checked() -> None:
    assert sorted(s.package for s in SERVERS) == PACKAGES


@pytest.mark.parametrize("package", PACKAGES)
def test_no_sentence_is_repeated_in_every_tool_description(package: str) -> None:
    tools = _read(package, "tools.json")["tools"]
    sentences = [{s for s in re.split(r"(?<=\.)\s+|\n", t["description"]) if s and not s.startswith("Example:")}
                 for t in tools]
    shared = set.intersection(*sentences)
    assert not shared, f"said once in the summary, not {len(tools)} times: {shared}"


@pytest.mark.parametrize("package", PACKAGES)
def test_the_error_branch_names_the_envelope_fields_and_nothing_more(package: str) -> None:
    for tool in _read(package, "tools.json")["tools"]:
        schema = tool["outputSchema"]
        assert schema["type"] == "object"
        success, error = schema["oneOf"]
        assert error == {"required": ENVELOPE_SCHEMA["required"]}, tool["name"]
        envelope = {"code": "rate_limited", "message": "m", "temporary": True, "retry_after_ms": 10,
                    "request_id": "r", "fingerprint": "f", "details": {"reason": "x"},
                    "repair": {"next_step": "retry", "tool": tool["name"], "arguments": {}}}
        assert not list(Draft202012Validator(ENVELOPE_SCHEMA).iter_errors(envelope))
        assert not list(Draft202012Validator(schema).iter_errors(envelope)), tool["name"]
        assert list(Draft202012Validator(success).iter_errors(envelope)), "must match one branch only"


@pytest.mark.parametrize("package", PACKAGES)
def test_output_rows_carry_no_spec_enum(package: str) -> None:
    """GitHub adds values (author_association did); a validating client would reject them. The
    server's own values may be enums: lockdown's reason, why a preview is empty, a batch item's outcome,
    why it stopped."""
    for tool in _read(package, "tools.json")["tools"]:
        for path, node in _nodes(tool["outputSchema"]["oneOf"][0]):
            if "enum" in node:
                assert path.endswith((".withheld", ".preview_empty", ".items/items.outcome", ".stopped.reason")), (
                    tool["name"], path, node["enum"])


@pytest.mark.parametrize("package", PACKAGES)
def test_every_tools_codes_are_in_the_catalog_the_summary_names(package: str) -> None:
    manifest = _read(package, "MANIFEST.json")
    catalog = _read(package, "errors.json")
    summary = (GENERATED / package / "summary.md").read_text(encoding="utf-8")
    uri = re.search(r"`([A-Za-z][A-Za-z0-9+.-]*://server/errors)`", summary)  # RFC 3986 scheme
    assert uri, "the summary lists the error-catalog resource"
    assert f"error catalog ({uri.group(1)})" in summary.split("## Tools")[0], \
        "the rules part (also the instructions) points at the catalog"
    listed = {(tool, c["code"]) for c in catalog["codes"] for tool in c["tools"]}
    for tool, codes in manifest["error_codes"].items():
        for code in codes:
            assert (tool, code) in listed, (tool, code)


# github-mcp-server's 8 tools doing what these do (search_issues, issue_read, issue_write,
# add_issue_comment, list_label, get_label, label_write, list_issues; its __toolsnaps__ at
# 64a49f34): 11,380 B of name, description and inputSchema, compact (issue 24)
GITHUB_MCP_SERVER_COMPARABLE_BYTES = 11_380


def test_what_a_model_reads_of_the_issues_tools_is_no_more_than_the_official_servers() -> None:
    from bench.surfaces import BEYOND_GHMCP
    from generator.build.wire import compact_bytes, model_visible

    tools = [t for t in _read("github_issues_mcp", "tools.json")["tools"] if t["name"] not in BEYOND_GHMCP]
    assert len(tools) == 9
    assert compact_bytes(model_visible(tools)) <= GITHUB_MCP_SERVER_COMPARABLE_BYTES


@pytest.mark.parametrize("package", PACKAGES)
def test_a_pattern_kept_from_the_model_is_checked_by_the_server(package: str) -> None:
    """checks.json carries exactly the patterns tools.json leaves out, and the server's
    validators check them."""
    import importlib

    from ghmcp_runtime.guards.validation import with_checks

    wire = {t["name"]: t for t in _read(package, "tools.json")["tools"]}
    checks = _read(package, "checks.json")["tools"]
    for name, params in checks.items():
        for param, extra in params.items():
            published = wire[name]["inputSchema"]["properties"][param]
            assert "pattern" not in published and "pattern" not in published.get("items", {})
            assert extra.get("pattern") or extra.get("items", {}).get("pattern")
    server = importlib.import_module(package).SERVER
    for tool in server.tools:
        checked = with_checks(wire[tool.name]["inputSchema"], checks.get(tool.name, {}))
        assert with_checks(tool.input_schema, tool.input_checks or {}) == checked


def test_each_pull_request_repository_and_context_tool_reads_no_more_than_the_official_servers() -> None:
    """Issue 33: name, description and inputSchema of each tool, against github-mcp-server's
    comparable tool at 64a49f34 (its vendored snapshots)."""
    from bench.peer_surface import comparison

    report = comparison()
    over = {ours: row for ours, row in report["per_tool"].items() if row["ours"] > row["theirs"]}
    assert len(report["per_tool"]) == 17 and not over, over


def test_github_mcps_default_surface_reads_no_more_than_the_official_servers_default() -> None:
    from bench.peer_surface import comparison

    default = comparison()["default"]
    assert default["theirs_tools"] == 43 and default["ours"] <= default["theirs"], default
