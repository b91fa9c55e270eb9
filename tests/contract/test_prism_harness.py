"""The Prism harness (tests/support/prism.py): documented examples, request validation on the
trimmed + normalized spec, process-group cleanup, and a loud failure without Node."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.mock_spec import example_value, mock_spec_document, normalize
from tests.support.node import NodeSetupError
from tests.support.prism import StartPrism, ensure_prism, group_rss_bytes, run_prism

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = ROOT / "overrides" / "github_issues.yaml"
# three areas of the API: releases, milestones, issues (whose bodies need the normalization)
OPERATIONS = ("repos/list-releases", "repos/get-release", "issues/get-milestone",
              "issues/create-milestone", "issues/create", "issues/update")
R = "/repos/octocat/hello-world"


@pytest.fixture(scope="module")
def mock(prism: StartPrism) -> Any:
    return prism(OPERATIONS, overrides=OVERRIDES)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return mock_spec_document(OPERATIONS, overrides=OVERRIDES)


@pytest.mark.parametrize(
    ("path", "operation_id"),
    [(f"{R}/releases/1", "repos/get-release"), (f"{R}/releases", "repos/list-releases"),
     (f"{R}/milestones/1", "issues/get-milestone")],
)
def test_get_returns_the_documented_example(mock: Any, document: dict[str, Any], path: str,
                                            operation_id: str) -> None:
    response = httpx.get(mock.base_url + path)
    assert response.status_code == 200, response.text
    assert response.json() == example_value(document, operation_id)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", f"{R}/milestones/not-a-number", None),
        ("GET", f"{R}/releases?per_page=many", None),
        ("POST", f"{R}/milestones", {"description": "no title"}),
        ("POST", f"{R}/milestones", {"title": "v1", "state": "half-open"}),
        # without the normalization Prism skips these body checks and answers 201/200
        ("POST", f"{R}/issues", {"body": "no title"}),
        ("PATCH", f"{R}/issues/1", {"state": "bogus"}),
        ("PATCH", f"{R}/issues/1", {"state_reason": "bored"}),
    ],
)
def test_prism_rejects_an_invalid_request_with_422(mock: Any, method: str, path: str,
                                                   body: Any) -> None:
    response = httpx.request(method, mock.base_url + path, json=body)
    assert response.status_code == 422, response.text


def test_valid_writes_pass_including_documented_nulls(mock: Any) -> None:
    created = httpx.post(f"{mock.base_url}{R}/milestones", json={"title": "v1.0"})
    assert created.status_code == 201 and created.json()["title"] == "v1.0"
    for nullable in ("milestone", "state_reason", "title"):
        cleared = httpx.patch(f"{mock.base_url}{R}/issues/1", json={nullable: None})
        assert cleared.status_code == 200, (nullable, cleared.text)


def test_without_normalization_prism_skips_body_checks(tmp_path: Path) -> None:
    """Why mock_spec normalizes; also: the process group dies even when the body fails."""
    raw = mock_spec_document(["issues/create", "issues/update"], normalized=False)
    update = raw["paths"]["/repos/{owner}/{repo}/issues/{issue_number}"]["patch"]
    body = update["requestBody"]["content"]["application/json"]["schema"]
    body["properties"]["state_reason"]["enum"].append(None)  # what openapi-core needs
    spec_path = tmp_path / "raw.json"
    spec_path.write_text(json.dumps(raw))
    with pytest.raises(RuntimeError, match="boom"), run_prism(spec_path) as mock:
        pid = mock.pid
        assert httpx.post(f"{mock.base_url}{R}/issues", json={"body": "no title"}).status_code == 201
        bored = httpx.patch(f"{mock.base_url}{R}/issues/1", json={"state_reason": "bored"})
        assert bored.status_code == 200
        assert (mock.rss_bytes() or 0) > 0
        raise RuntimeError("boom")
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    assert group_rss_bytes(pid) is None


def test_missing_node_is_an_error_not_a_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no node, no npm
    with pytest.raises(NodeSetupError, match="`node` is not on PATH"):
        ensure_prism(tmp_path / "prefix")
    assert not (tmp_path / "prefix").exists()


# the spec the mock serves ------------------------------------------------------------------------


def test_trimmed_spec_keeps_the_operations_and_what_they_reference(document: dict[str, Any]) -> None:
    ops = sorted(op["operationId"] for item in document["paths"].values()
                 for op in item.values() if isinstance(op, dict) and "operationId" in op)
    assert ops == sorted(OPERATIONS)
    schemas = document["components"]["schemas"]
    assert {"release", "release-asset", "milestone", "issue", "simple-user"} <= set(schemas)
    assert "pull-request" not in schemas and len(schemas) < 60
    refs = {v for v in _walk(document) if isinstance(v, str) and v.startswith("#/components/")}
    for ref in refs:
        _, _, section, name = ref.split("/", 3)
        assert name in document["components"][section], ref
    with pytest.raises(KeyError, match="no/such-op"):
        mock_spec_document(["no/such-op"])


def test_override_spec_patches_apply_only_when_given() -> None:
    def add_labels_body(doc: dict[str, Any]) -> dict[str, Any]:
        op = doc["paths"]["/repos/{owner}/{repo}/issues/{issue_number}/labels"]["post"]
        schema: dict[str, Any] = op["requestBody"]["content"]["application/json"]["schema"]
        return schema

    patched = add_labels_body(mock_spec_document(["issues/add-labels"], overrides=OVERRIDES))
    plain = add_labels_body(mock_spec_document(["issues/add-labels"]))
    bare_array = {"type": "array", "minItems": 1, "items": {"type": "string"}}
    assert bare_array in patched["oneOf"] and bare_array not in plain["oneOf"]


def test_normalize_fixes_the_three_quirks_without_touching_its_input() -> None:
    spec = {
        "milestone": {"nullable": True, "oneOf": [{"type": "string"}, {"type": "integer"}]},
        "ref_only": {"nullable": True, "oneOf": [{"$ref": "#/components/schemas/a"}]},
        "state_reason": {"type": "string", "nullable": True, "enum": ["completed", None]},
        "plain_enum": {"type": "string", "enum": ["a", None]},
        "examples": {"default": {"value": {"$ref": "#/components/examples/issue"}},
                     "literal": {"value": {"$ref": "not-an-example"}}},
    }
    before = copy.deepcopy(spec)
    out = normalize(spec)
    assert spec == before
    assert out["milestone"] == {"oneOf": [{"type": "string", "nullable": True}, {"type": "integer"}]}
    assert out["ref_only"] == spec["ref_only"]  # nothing typed to carry `nullable`
    assert out["state_reason"]["enum"] == ["completed"]  # Prism adds null for `nullable`
    assert out["plain_enum"] == spec["plain_enum"]
    assert out["examples"] == {"default": {"$ref": "#/components/examples/issue"},
                               "literal": {"value": {"$ref": "not-an-example"}}}


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)
