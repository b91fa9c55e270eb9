"""The pinned spec cut down for a Prism mock: the given operations, the components they reach
(transitively), an override file's spec patches, and normalizations for quirks that make Prism
skip request-body validation silently (it then answers 2xx to any body).

* `nullable: true` beside `oneOf`/`anyOf` with no `type` (issues/create `milestone`, ...):
  `nullable` moves onto the first typed branch.
* `nullable: true` with an `enum` that lists null (the override file adds null to
  `issue.state_reason` for openapi-core, whose checks need it): Prism appends null to nullable
  enums itself, and a second null breaks the whole body schema, so null is taken out again.
  Null still validates.
* media-type examples written as `{"value": {"$ref": "#/components/examples/X"}}`: Prism would
  serve the wrapper as the body; they become a plain Example `$ref`.

Measured on the full pinned spec (Prism 5.14.2, a string sent as the body of each of the 287
operations whose JSON body is an object): unmodified, 7 operations accept it (issues/create,
issues/update, ...); normalized with null appended to nullable enums, 4; normalized as here, 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

EXAMPLES = "#/components/examples/"


def normalize(node: Any) -> Any:
    """A normalized copy of a spec (sub)tree; the input is not modified."""
    if isinstance(node, list):
        return [normalize(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: normalize(v) for k, v in node.items()}
    combinator = next((k for k in ("oneOf", "anyOf") if k in out), None)
    if out.get("nullable") is True and "type" not in out and combinator:
        branches = [dict(b) if isinstance(b, dict) else b for b in out[combinator]]
        typed = [b for b in branches if isinstance(b, dict) and "type" in b and "$ref" not in b]
        if typed:
            del out["nullable"]
            typed[0]["nullable"] = True
            out[combinator] = branches
    enum = out.get("enum")
    if out.get("nullable") is True and isinstance(enum, list) and None in enum:
        out["enum"] = [v for v in enum if v is not None]
    examples = out.get("examples")
    if isinstance(examples, dict):
        for name, example in examples.items():
            value = example.get("value") if isinstance(example, dict) else None
            if (isinstance(value, dict) and set(value) == {"$ref"}
                    and str(value["$ref"]).startswith(EXAMPLES)):
                examples[name] = {"$ref": value["$ref"]}
    return out


def all_operation_ids(document: dict[str, Any]) -> list[str]:
    from fakegithub.validation import METHODS

    return [op["operationId"] for item in document["paths"].values()
            for method, op in item.items() if method in METHODS and isinstance(op, dict)]


def mock_spec_document(operation_ids: Iterable[str] | None, *, overrides: Path | None = None,
                       normalized: bool = True) -> dict[str, Any]:
    """The pinned spec (with `overrides`' spec patches when given) trimmed to `operation_ids`
    (None = every operation) and normalized. Unknown operationIds raise KeyError."""
    from fakegithub.validation import trim_spec
    from generator.api import patched_spec_document
    from generator.spec.pinned import load_pinned_spec

    document = (patched_spec_document(overrides) if overrides is not None
                else load_pinned_spec().document)
    wanted = all_operation_ids(document) if operation_ids is None else list(operation_ids)
    trimmed = trim_spec(document, wanted)
    return normalize(trimmed) if normalized else trimmed


def write_mock_spec(operation_ids: Iterable[str] | None, path: Path, *,
                    overrides: Path | None = None) -> Path:
    document = mock_spec_document(operation_ids, overrides=overrides)
    path.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")),
                    encoding="utf-8")
    return path


def example_value(document: dict[str, Any], operation_id: str, status: str = "200") -> Any:
    """The first documented example body of an operation's response (what Prism's static mode
    serves), with an Example `$ref` resolved."""
    from fakegithub.validation import METHODS

    for item in document["paths"].values():
        for method, op in item.items():
            if method in METHODS and isinstance(op, dict) and op.get("operationId") == operation_id:
                media = op["responses"][status]["content"]["application/json"]
                example = next(iter(media["examples"].values()))
                if "$ref" in example:
                    example = document["components"]["examples"][example["$ref"][len(EXAMPLES):]]
                return example["value"]
    raise KeyError(operation_id)
