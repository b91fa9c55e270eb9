"""The vendored Forgejo description: provenance, the pinned conversion reproduced byte for byte,
and how an override file picks the description it is built on (`server.spec`)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from generator.pipeline.generate import load_inputs
from generator.review.update_spec import FORGEJO_TEMPLATE, convert, git_blob, sha256, substitute
from generator.spec.pinned import (
    SPEC_DIR,
    declared_spec,
    load_pinned_spec,
    read_document_bytes,
    spec_dir,
)

FORGEJO = SPEC_DIR / "forgejo"


def pinned() -> dict[str, object]:
    data: dict[str, object] = json.loads((FORGEJO / "PINNED.json").read_text(encoding="utf-8"))
    return data


def test_the_original_template_is_the_pinned_release_file() -> None:
    meta = pinned()
    original = read_document_bytes(FORGEJO / str(meta["original_file"]))
    assert sha256(original) == meta["original_sha256"]
    assert git_blob(original) == meta["source_git_blob"]  # `git rev-parse v11.0.1:templates/...`
    assert b'"version": "{{AppVer | JSEscape}}"' in original
    assert json.loads(original.replace(b"{{AppVer | JSEscape}}", b"x").replace(
        b"{{AppSubUrl | JSEscape}}", b""))["info"]["title"] == "Forgejo API"


def test_the_converted_document_loads_verified_and_is_openapi_3() -> None:
    loaded = load_pinned_spec(FORGEJO)
    doc = loaded.document
    assert doc["openapi"].startswith("3.0") and doc["info"]["version"] == "11.0.1"
    assert doc["servers"] == [{"url": "/api/v1"}]
    ops = {op["operationId"] for item in doc["paths"].values() for op in item.values()
           if isinstance(op, dict) and "operationId" in op}
    # the design's open question: org get-one exists in the pinned release (no list-and-filter)
    assert {"orgGetLabel", "issueGetLabel", "orgListRepos", "issueListIssues"} <= ops
    assert "/orgs/{org}/labels/{id}" in doc["paths"]


def test_the_pinned_converter_reproduces_the_vendored_document() -> None:
    """`make update-spec FORGE=forgejo` on the vendored template gives the vendored bytes."""
    meta = pinned()
    original = read_document_bytes(FORGEJO / str(meta["original_file"]))
    converted = convert(substitute(original, str(meta["version"])))
    assert sha256(converted) == meta["sha256"]
    assert gzip.decompress((FORGEJO / str(meta["vendored_file"])).read_bytes()) == converted


def test_an_unknown_placeholder_stops_the_update() -> None:
    template = b'{\n  "swagger": "2.0",\n  "host": "{{AppHost}}"\n}\n'
    with pytest.raises(SystemExit, match=f"{FORGEJO_TEMPLATE}: an unknown template placeholder on line 3"):
        substitute(template, "v11.0.1")


def test_server_spec_picks_the_description(tmp_path: Path) -> None:
    text = "server:\n  name: x\n  spec: forgejo\n"
    assert declared_spec(text) == "forgejo"
    assert declared_spec("server: [unclosed") is None
    assert declared_spec("server:\n  spec: ../escape\n") is None  # not a name: the real parse says so
    assert spec_dir("forgejo") == FORGEJO and spec_dir(None) == SPEC_DIR
    overrides = tmp_path / "x.yaml"
    overrides.write_text(text, encoding="utf-8")
    assert load_inputs(overrides).spec.pinned.package == "forgejo/forgejo"
    overrides.write_text("server:\n  name: x\n", encoding="utf-8")
    assert load_inputs(overrides).spec.pinned.package == "@octokit/openapi"
