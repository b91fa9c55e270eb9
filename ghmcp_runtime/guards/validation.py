"""Validate tool arguments against the published inputSchema (and what the server checks beyond
it); explain failures without the value.

jsonschema's own messages embed the received value, so every reason here is written from the
failing keyword and the schema alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.logs import redact
from ghmcp_runtime.guards.bounds import Oversized, check_sizes

if TYPE_CHECKING:  # jsonschema costs ~35 ms to import: loaded on the first call, not at start-up
    from jsonschema import Draft202012Validator, ValidationError

MAX_FIELD_CHARS = 64
MAX_ENUM_LISTED = 30

_RANK = {
    kw: i
    for i, kw in enumerate(
        ("type", "required", "additionalProperties", "unevaluatedProperties", "enum", "const",
         "format", "pattern", "minLength", "maxLength", "minimum", "maximum")
    )
}


def plain(value: Any) -> Any:
    """Mappings and tuples (as generated code may declare them) to plain JSON containers."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _types(value: Any) -> str:
    names = value if isinstance(value, list) else [value]
    return " or ".join(str(n) for n in names)


# RFC 3339 date-time: no space (a search query is made of space-separated terms), no leap
# second; calendar ranges checked by datetime
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})")


def is_date_time(value: object) -> bool:
    """Whether `value` is an RFC 3339 date-time (True for a non-string: `type` judges those)."""
    if not isinstance(value, str):
        return True
    if _DATE_TIME.fullmatch(value) is None:
        return False
    try:
        datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# Formats the runtime checks itself: jsonschema checks `date-time` only when an optional
# package is installed, which an installed server's wheel does not bring (review t12). A schema
# with any other format is refused when the server is built.
FORMATS: Mapping[str, Callable[[object], bool]] = {"date-time": is_date_time}


def _formats(schema: Any) -> set[str]:
    if isinstance(schema, Mapping):
        found = {schema["format"]} if isinstance(schema.get("format"), str) else set()
        return found.union(*(_formats(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_formats(v) for v in schema))
    return set()


def with_checks(input_schema: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The published inputSchema with what the server checks beyond it (a parameter's `pattern`,
    its items' `pattern`: `advertise_pattern: false` in the override file) put back."""
    schema: dict[str, Any] = plain(input_schema)
    for name, extra in checks.items():
        prop = schema["properties"][name]
        for key, value in extra.items():
            prop[key] = {**prop[key], **plain(value)} if isinstance(value, Mapping) else plain(value)
    return schema


class ArgumentValidator:
    """Checks arguments against the published inputSchema plus `checks` (see with_checks)."""

    def __init__(self, input_schema: Mapping[str, Any],
                 checks: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self._schema: dict[str, Any] = with_checks(input_schema, checks or {})
        self._compiled: Draft202012Validator | None = None
        unchecked = _formats(self._schema) - set(FORMATS)
        if unchecked:
            raise ValueError(f"inputSchema uses formats the runtime does not check: {sorted(unchecked)}")

    @property
    def _validator(self) -> Draft202012Validator:
        if self._compiled is None:
            from jsonschema import Draft202012Validator, FormatChecker

            Draft202012Validator.check_schema(self._schema)
            checker = FormatChecker(formats=())
            for name, check in FORMATS.items():
                checker.checks(name)(check)
            self._compiled = Draft202012Validator(self._schema, format_checker=checker)
        return self._compiled

    def normalize(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Valid arguments with integral floats (JSON Schema counts 1.0 as an integer) made ints,
        so `issue_number: 1.0` never reaches GitHub as `/issues/1.0`."""
        return {k: _integers(v, self._schema.get("properties", {}).get(k, {})) for k, v in args.items()}

    def validate(self, args: Any) -> ToolError | None:
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            return _invalid("arguments", "must be a JSON object")
        try:
            check_sizes(args, self._schema)  # lengths first: no per-element work on huge input
        except Oversized as big:
            return _invalid(_field(big.steps), _at_item(big.steps, big.reason))
        errors = list(self._validator.iter_errors(dict(args)))
        if not errors:
            return None
        first = min(errors, key=self._order)
        steps, reason = _explain(first)
        return _invalid(_field(steps), reason)

    def _order(self, error: ValidationError) -> tuple[tuple[int, ...], int, str]:
        steps, _ = _locate(error)
        key: list[int] = []
        schema: Any = self._schema
        for step in steps:
            if isinstance(step, int):
                key.append(step)
                schema = schema.get("items", {}) if isinstance(schema, dict) else {}
                continue
            props = schema.get("properties", {}) if isinstance(schema, dict) else {}
            key.append(list(props).index(step) if step in props else len(props))
            schema = props.get(step, {})
        rank = _RANK.get(str(error.validator), len(_RANK))
        return tuple(key), rank, "/".join(str(s) for s in error.schema_path)


def _integers(value: Any, schema: Mapping[str, Any]) -> Any:
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if isinstance(value, float) and value.is_integer() and "integer" in kinds and "number" not in kinds:
        return int(value)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_integers(v, schema["items"]) for v in value]
    return value


def _invalid(field: str, reason: str) -> ToolError:
    return ToolError(
        "invalid_field",
        f"Invalid argument `{field}`: {reason}.",
        details={"field": field, "reason": reason},
    )


def _field(steps: list[str | int]) -> str:
    names = [s for s in steps if isinstance(s, str)]
    return ".".join(names) if names else "arguments"


def _extra_names(error: ValidationError) -> list[str]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    props = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    instance = error.instance if isinstance(error.instance, dict) else {}
    return [
        k for k in instance if k not in props and not any(re.search(p, k) for p in patterns)
    ]


def _locate(error: ValidationError) -> tuple[list[str | int], str | None]:
    """Instance path of the offending property, plus its name when it is an unknown one."""
    steps: list[str | int] = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "required":
        instance = error.instance if isinstance(error.instance, dict) else {}
        missing = [n for n in error.validator_value if n not in instance]
        order = list(schema.get("properties", {}))
        missing.sort(key=lambda n: order.index(n) if n in order else len(order))
        return [*steps, missing[0]] if missing else steps, None
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        extras = _extra_names(error)
        if extras:
            name = str(redact(extras[0]))[:MAX_FIELD_CHARS]
            return [*steps, name], name
    if error.validator == "dependentRequired":
        instance = error.instance if isinstance(error.instance, dict) else {}
        for prop, deps in error.validator_value.items():
            if prop in instance:
                missing = [d for d in deps if d not in instance]
                if missing:
                    return [*steps, missing[0]], None
    return steps, None


def _at_item(steps: list[str | int], reason: str) -> str:
    items = [s for s in steps if isinstance(s, int)]
    return "item " + "/".join(str(i) for i in items) + " " + reason if items else reason


def _explain(error: ValidationError) -> tuple[list[str | int], str]:
    steps, unknown = _locate(error)
    return steps, _at_item(steps, _reason(error, unknown))


def _reason(error: ValidationError, unknown: str | None) -> str:
    kw, vv = error.validator, error.validator_value
    schema = error.schema if isinstance(error.schema, dict) else {}
    if kw in ("additionalProperties", "unevaluatedProperties"):
        allowed = list(schema.get("properties", {}))
        if unknown is None:
            return "contains a property that is not allowed"
        if not allowed:
            return "is not a known parameter; this object takes no properties"
        return "is not a known parameter; allowed: " + ", ".join(allowed)
    simple = {
        "required": "is required",
        "type": f"must be of type {_types(vv)}",
        "pattern": f"must match the pattern {vv}",
        "format": f"must be a valid {vv}",
        "minLength": f"must be at least {vv} characters long",
        "maxLength": f"must be at most {vv} characters long",
        "minimum": f"must be at least {vv}",
        "maximum": f"must be at most {vv}",
        "exclusiveMinimum": f"must be greater than {vv}",
        "exclusiveMaximum": f"must be less than {vv}",
        "multipleOf": f"must be a multiple of {vv}",
        "minItems": f"must have at least {vv} items",
        "maxItems": f"must have at most {vv} items",
        "uniqueItems": "must not contain duplicate items",
        "minProperties": f"must have at least {vv} properties",
        "maxProperties": f"must have at most {vv} properties",
        "const": f"must be {_json(vv)}",
        "not": "is a value that is not allowed here",
        "contains": "must contain at least one allowed item",
        "dependentRequired": "is required together with another argument given",
    }
    if kw == "enum":
        members = list(vv)
        listed = ", ".join(_json(m) for m in members[:MAX_ENUM_LISTED])
        more = ", …" if len(members) > MAX_ENUM_LISTED else ""
        return f"must be one of: {listed}{more}"
    if kw in ("oneOf", "anyOf"):
        return _alternatives(error)
    if kw in simple:
        return simple[str(kw)]
    if kw is None or vv is False:
        return "is not allowed here"
    return f"does not satisfy the schema keyword {kw}"


def _alternatives(error: ValidationError) -> str:
    """Describe a failed oneOf/anyOf: the one branch whose type fits, else the allowed types."""
    if not error.context:
        return "matches more than one of the allowed forms"
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(int(sub.schema_path[0]), []).append(sub)
    here = len(error.absolute_path)
    fitting = [
        errs for errs in branches.values()
        if not any(e.validator == "type" and len(e.absolute_path) == here for e in errs)
    ]
    if len(fitting) == 1:
        sub = min(fitting[0], key=lambda e: (_RANK.get(str(e.validator), len(_RANK)), len(e.path)))
        return _reason(sub, _locate(sub)[1])
    forms = [alt.get("type") for alt in error.validator_value if isinstance(alt, dict)]
    if forms and all(forms):
        return "must be of type " + " or ".join(_types(f) for f in forms)
    return "must match one of the allowed forms"
