"""Rule `spec-examples`: every example the description documents for an operation the server calls
validates against its own schema — request bodies and answers, every status. The generator
projects documented answers (rule `example-output`) and Prism serves them as the forge would;
an example that breaks its schema (GitHub's pull-request examples list requested teams without
the `type` their schema requires) makes both judge against a forge that does not exist. Where
the description is wrong, a spec patch of the override file fixes the example (patches are per
file: each server patches its own copy).

Validated as OpenAPI 3.0 (`nullable`, `$ref` into the description) by openapi-schema-validator,
with `oneOf` read as `anyOf`: GitHub's descriptions use `oneOf` for branches that overlap (a
private user is a public user with more fields), so a documented answer fitting two branches is
a real answer, not a broken example.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from generator.spec.answers import EXAMPLES
from generator.spec.pinned import escape_pointer, index_operations, resolve_ref

if TYPE_CHECKING:
    from generator.base.diagnostics import Where
    from generator.lint.ctx import Ctx

RULE = "spec-examples"
ROOT = "urn:spec"
Validator = extend(OAS30Validator, validators={"oneOf": OAS30Validator.VALIDATORS["anyOf"]})


def check(ctx: Ctx) -> None:
    if ctx.document is None:
        return
    document = ctx.document
    registry: Registry[Any] = Registry().with_resource(
        ROOT, Resource.from_contents(document, default_specification=DRAFT4))
    ops = index_operations(document)
    seen: set[str] = set()
    for op_id, where in _used(ctx):
        if op_id in seen or op_id not in ops:
            continue
        seen.add(op_id)
        op = ops[op_id]
        base = f"/paths/{escape_pointer(op.path)}/{op.method}"
        for label, schema_at, value_at, value in _examples(document, op.node, base):
            validator = Validator({"$ref": f"{ROOT}#{schema_at}"}, registry=registry)
            problems = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
            if not problems:
                continue
            first = problems[0]
            at = "".join(f"/{escape_pointer(str(p))}" for p in first.absolute_path)
            missing = _missing(first)
            fix = (f"op: add, path: {value_at}{at}/{escape_pointer(missing)}, value: …" if missing else
                   f"op: replace, path: {value_at}{at}, expect: <its value>, value: …")
            ctx.error(where, RULE, f"{op_id}'s documented {label} breaks its own schema at "
                      f"{at or '/'}: {_short(_message(first))}",
                      f"the description is wrong: fix the example with a spec patch of this file ({fix})")


def _used(ctx: Ctx) -> Iterator[tuple[str, Where]]:
    """Each operation the server calls, where the override file first names it."""
    for tool in ctx.server.tools:
        for op in tool.operations:
            yield op.operation_id, _step_where(ctx, tool.name, op.operation_id) or ctx.where(tool)
    for k, template in enumerate(ctx.server.templates):
        for op in template.operations:
            yield op.operation_id, ctx.at(("resource_templates", k))


def _step_where(ctx: Ctx, tool: str, op_id: str) -> Where | None:
    raw = ctx.located.data.get("tools", []) if ctx.located else []
    for i, t in enumerate(raw):
        if isinstance(t, dict) and t.get("name") == tool:
            for k, step in enumerate(t.get("steps") or []):
                if isinstance(step, dict) and step.get("call") == op_id:
                    return ctx.at(("tools", i, "steps", k, "call"))
    return None


def _examples(document: Mapping[str, Any], node: Mapping[str, Any],
              base: str) -> Iterator[tuple[str, str, str, Any]]:
    """(label, pointer of the schema, pointer of the example's value, value) of every JSON
    example of an operation's request body and answers."""
    places = [("request body", f"{base}/requestBody", node.get("requestBody"))]
    places += [(f"{status} answer", f"{base}/responses/{escape_pointer(status)}", response)
               for status, response in sorted(node.get("responses", {}).items())]
    for label, at, raw in places:
        if isinstance(raw, Mapping) and "$ref" in raw:
            at = str(raw["$ref"])[1:]
        media = resolve_ref(document, raw or {}).get("content", {}).get("application/json")
        if not isinstance(media, Mapping) or "schema" not in media:
            continue
        media_at = f"{at}/content/application~1json"
        if "example" in media:
            yield f"{label} example", f"{media_at}/schema", f"{media_at}/example", media["example"]
        for name, example in sorted((media.get("examples") or {}).items()):
            value_at = f"{media_at}/examples/{escape_pointer(name)}"
            if isinstance(example, Mapping) and "$ref" in example:
                value_at = str(example["$ref"])[1:]
            found = resolve_ref(document, example)
            value = found.get("value") if isinstance(found, Mapping) else None
            if isinstance(value, Mapping) and set(value) == {"$ref"} and str(value["$ref"]).startswith(EXAMPLES):
                value_at = str(value["$ref"])[1:]  # a quirk: a value that points at another example
                value = resolve_ref(document, value).get("value")
            if isinstance(found, Mapping) and "value" in found:
                yield f"{label} example {name!r}", f"{media_at}/schema", f"{value_at}/value", value


def _missing(error: ValidationError) -> str | None:
    """The property an example lacks: a required one, or the discriminator its oneOf names."""
    schema, instance = error.schema, error.instance
    if not isinstance(schema, Mapping) or not isinstance(instance, Mapping):
        return None
    if error.validator == "required":
        return next((str(p) for p in error.validator_value if p not in instance), None)
    name = (schema.get("discriminator") or {}).get("propertyName")
    return str(name) if name and name not in instance else None


def _message(error: ValidationError) -> str:
    """The validator's message without the whole instance it quotes."""
    shown = repr(error.instance)
    message = str(error.message)
    return message.replace(shown, "the value") if len(shown) > 40 else message


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
