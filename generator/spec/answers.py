"""What a declared step's result can be, as the spec describes it, and where a path reads in it.

A step's result is what templates (`{step.a.b}`), outputs and recipes read: the operation's answer
(each 2xx JSON body it documents), or what a recipe puts in its place — a `names_exist` step's
exact names, an `update` step's resource as the forge shows it, the row a lost create's recovery
or settle finds. The generator resolves every path a declaration reads against each of them, so
a path GitHub's answer lacks (`{merge.shaa}`) is refused at generation, not met at run time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.spec.pinned import SpecError, SpecOperation, resolve_ref
from generator.spec.schemas import object_branches, walk
from ghmcp_runtime.core.refs import MISSING

JSON = Any
EXAMPLES = "#/components/examples/"


@dataclass(frozen=True, slots=True)
class Answer:
    label: str  # what the result is, in messages: "pulls/merge's 200 answer"
    schema: JSON  # None: the answer has no JSON body


def documented(document: JSON, op: SpecOperation) -> list[Answer]:
    """Every 2xx answer of `op`: its JSON body's schema, or None for an answer without one."""
    out = []
    for status, response in sorted(op.node.get("responses", {}).items()):
        if not (status.isdigit() and 200 <= int(status) < 300):
            continue
        schema = resolve_ref(document, response).get("content", {}).get("application/json", {}).get("schema")
        out.append(Answer(f"{op.operation_id}'s {status} answer",
                          None if schema is None else resolve_ref(document, schema)))
    return out


def names_answer(params: Sequence[str]) -> Answer:
    """A `names_exist` step's result: each parameter's names as the catalog spells them."""
    items = {"type": "string"}
    return Answer("the names_exist result", {"type": "object", "properties": {
        name: {"type": "array", "items": items} for name in params}})


def rows(document: JSON, answer: Answer, items: str | None) -> Answer:
    """The rows a shaped list output reads from an answer: the array's items (at `items` when the
    rows are inside the body), or the answer itself when it is one object."""
    node = answer.schema
    if node is not None and items:
        node, _ = walk(document, node, tuple(items.split(".")))
    node = resolve_ref(document, node) if node is not None else None
    if isinstance(node, Mapping) and node.get("type") == "array":
        node = resolve_ref(document, node.get("items", {}))
    return Answer(answer.label + (f" ({items}[])" if items else ""), node)


def one_row(document: JSON, answer: Answer) -> Answer:
    """What a single-row output reads of an answer: its object alternatives (an answer that is
    a directory's list or one file: the file), the answer itself when it has no list branch."""
    node = resolve_ref(document, answer.schema) if answer.schema is not None else None
    branches = node.get("oneOf") or node.get("anyOf") if isinstance(node, Mapping) else None
    if not branches:
        return answer
    kept = [b for b in branches if resolve_ref(document, b).get("type") != "array"]
    if not kept or len(kept) == len(branches):
        return answer
    return Answer(answer.label, {"oneOf": kept})


def lacks(document: JSON, answers: Sequence[Answer], path: tuple[str, ...]) -> list[str]:
    """The answers in which `path` names nothing (a body-less answer lacks every path)."""
    if not path:
        return []
    return [a.label for a in answers if a.schema is None or walk(document, a.schema, path)[0] is None]


def is_array(document: JSON, answers: Sequence[Answer], path: tuple[str, ...]) -> bool:
    """Does `path` name an array in every answer?"""
    for a in answers:
        node = walk(document, a.schema, path)[0] if a.schema is not None else None
        if not isinstance(node, Mapping) or resolve_ref(document, node).get("type") != "array":
            return False
    return bool(answers)


def near(document: JSON, answers: Sequence[Answer], path: tuple[str, ...]) -> list[str]:
    """The properties beside the last step of `path` in the first answer that has its parent."""
    for a in answers:
        parent = walk(document, a.schema, path[:-1])[0] if a.schema is not None else None
        if parent is not None:
            return sorted({name for branch in object_branches(document, parent)
                           for name in branch.get("properties", {})})
    return []


def documented_answers(document: Mapping[str, Any], operation_id: str) -> Iterator[tuple[str, Any]]:
    """(label, body) of every documented 2xx JSON example of an operation."""
    for item in document.get("paths", {}).values():
        for op in item.values():
            if not isinstance(op, Mapping) or op.get("operationId") != operation_id:
                continue
            for status, response in sorted(op.get("responses", {}).items()):
                if not (status.isdigit() and 200 <= int(status) < 300):
                    continue
                media = resolve_ref(document, response).get("content", {}).get("application/json", {})
                if "example" in media:
                    yield f"{status} example", media["example"]
                for name, example in sorted(media.get("examples", {}).items()):
                    value = _example_value(document, example)
                    if value is not MISSING:
                        yield f"{status} example {name!r}", value


def _example_value(document: Mapping[str, Any], example: Any) -> Any:
    try:
        node = resolve_ref(document, example)
        value = node.get("value", MISSING) if isinstance(node, Mapping) else MISSING
        if isinstance(value, Mapping) and set(value) == {"$ref"} and str(value["$ref"]).startswith(EXAMPLES):
            value = resolve_ref(document, value).get("value", MISSING)  # a spec quirk: value -> example
    except (SpecError, KeyError, TypeError):
        return MISSING
    return value
