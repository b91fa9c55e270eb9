"""The override file's schema: strict pydantic models (unknown keys fail), located errors."""

from __future__ import annotations

from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from generator.diagnostics import Diagnostic, DiagnosticError, Level, closest
from generator.patches import SpecPatch
from generator.yamlsrc import Located, load_yaml

Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSection(Strict):
    name: str = Field(description="serverInfo.name, e.g. github-issues-mcp")
    package: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Python package to generate")
    title: str
    version: str
    tool_prefix: str = Field(pattern=r"^[a-z][a-z0-9]*_$")
    api_version: str
    hooks: str = Field(description="hand-written hook module, relative to the override file")
    summary: str = Field(description="capability summary: rules first, then context")
    tools_budget_bytes: int = Field(gt=0, description="budget for the whole tools/list")
    description_budget_bytes: int = Field(gt=0, description="budget for one tool description")
    tool_essentials: str | None = Field(
        default=None, description="one line appended to every tool description (clients may hide instructions)"
    )


class Coverage(Strict):
    categories: list[str]
    excluded: dict[str, str] = Field(description="operationId -> one-line reason")


class ErrorCodeDef(Strict):
    temporary: bool
    description: str
    repair: str = Field(description="what the repair suggests, for the error catalog")


class ShapeField(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    source: str | None = Field(default=None, alias="from", description="dotted path; [] maps a list")
    detail: Literal["summary", "full"]
    transform: Literal["preview"] | None = None
    computed: dict[str, Any] | None = Field(default=None, description="JSON schema of a computed field")
    fields: list[ShapeField] | None = Field(default=None, description="project an object field by field")
    description: str | None = None


class ShapeDef(Strict):
    sources: list[str] = Field(min_length=1, description="component schemas the paths must exist in")
    fields: list[ShapeField] = Field(min_length=1)


class ParamDef(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    source: str | None = Field(
        default=None, alias="from", description="<operationId>#<path|query|body>.<name>"
    )
    type: Literal["string", "integer", "boolean", "array"] | None = None
    items: dict[str, Any] | None = None
    enum: list[Any] | None = None
    description: str
    required: bool = False
    omitted: str | None = Field(default=None, description="what leaving the parameter out means")
    default: Any = None
    nullable: bool = False
    null_means: str | None = None
    pattern: str | None = None
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_items: int | None = None
    max_items: int | None = None


class Annotations(Strict):
    read_only: bool
    open_world: bool
    destructive: bool | None = None
    idempotent: bool | None = None
    why: str = Field(description="one line: why these hints")


class OutputField(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: Literal["string", "integer", "boolean", "array", "object"] | None = None
    shape: str | None = None
    items_shape: str | None = None
    items: dict[str, Any] | None = None
    optional: bool = False
    nullable: bool = False
    description: str | None = Field(default=None, description="only where the name is not enough")


class Rule(Strict):
    kind: Literal["at_least_one", "all_or_none", "requires"]
    fields: list[str] = Field(min_length=1)
    when: str | None = Field(default=None, description="for `requires`: the field that triggers it")
    reason: str


class ToolDef(Strict):
    name: str
    title: str
    handler: str
    operations: list[str] = Field(min_length=1)
    description: str
    example: dict[str, Any]
    annotations: Annotations
    params: list[ParamDef]
    rules: list[Rule] = Field(default_factory=list)
    output: list[OutputField]
    errors: list[str]
    field_map: dict[str, str] = Field(default_factory=dict)
    renamed_from: str | None = Field(
        default=None, description="the tool's previous name: declares the rename, published in the summary"
    )


BreakingKind = Literal[
    "removed-tool", "renamed-tool", "removed-property", "newly-required", "narrowed-type",
    "narrowed-enum", "narrowed-bound", "removed-output-field", "retyped-output-field",
    "optional-output-field", "removed-error-code", "changed-annotations",
]


class BreakingChange(Strict):
    kind: BreakingKind
    tool: str = Field(description="the tool's name in the committed tools.json")
    field: str | None = Field(default=None, description="dotted path as the report prints it; omit for all")
    reason: str


class StaticResourceDef(Strict):
    uri: str = Field(pattern=r"^[a-z][a-z0-9+.-]*://[^\s{}]+$")
    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    title: str
    description: str
    content: Literal["summary", "errors"] = Field(description="a document the generator writes")
    ttl_ms: int = Field(ge=0)
    cache_scope: Literal["public", "private"]


class TemplateDef(Strict):
    uri_template: str = Field(pattern=r"^[a-z][a-z0-9+.-]*://\S+$")
    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    title: str
    description: str
    mime_type: str = "application/json"
    tool: str = Field(description="the tool that reaches the same content")
    handler: str = Field(description="async hook (ctx, variables) -> JSON body")
    operations: list[str] = Field(default_factory=list, description="extra operations its hooks call")
    ttl_ms: int = Field(ge=0)
    cache_scope: Literal["public", "private"]
    completions: dict[str, str] = Field(default_factory=dict, description="variable -> async hook")


class OverrideFile(Strict):
    server: ServerSection
    spec_patches: list[SpecPatch] = Field(default_factory=list)
    breaking_changes: list[BreakingChange] = Field(
        default_factory=list, description="breaking changes against the committed tools.json, accepted"
    )
    coverage: Coverage
    error_codes: dict[Identifier, ErrorCodeDef]
    shapes: dict[Identifier, ShapeDef]
    tools: list[ToolDef] = Field(min_length=1)
    resources: list[StaticResourceDef] = Field(default_factory=list)
    resource_templates: list[TemplateDef] = Field(default_factory=list)


_HINTS = {
    "extra_forbidden": "remove the key or fix its spelling; the override schema is in generator/overrides.py",
    "missing": "add the required key",
    "string_pattern_mismatch": "use the documented form (snake_case names, lower-case packages)",
    "literal_error": "use one of the allowed values",
}


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the model accepts at `loc` (a pydantic error location), for "did you mean"."""
    annotation: Any = OverrideFile
    for step in loc:
        while get_origin(annotation) in (Union, UnionType, Annotated):
            args = [a for a in get_args(annotation) if a is not type(None)]
            annotation = args[0] if args else annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {f.alias or name: f for name, f in annotation.model_fields.items()}
            field = fields.get(step) if isinstance(step, str) else None
            if field is None:
                return []
            annotation = field.annotation
        elif get_origin(annotation) in (list, dict):
            annotation = get_args(annotation)[-1]
        else:
            return []
    while get_origin(annotation) in (Union, UnionType, Annotated):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [f.alias or name for name, f in annotation.model_fields.items()]
    return []


def parse_overrides(text: str, file: str) -> tuple[OverrideFile, Located]:
    located = load_yaml(text, file)
    try:
        return OverrideFile.model_validate(located.data), located
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            where = located.where(loc)
            dotted = ".".join(str(p) for p in loc) or "<root>"
            kind = err["type"]
            hint = _HINTS.get(kind, "see generator/overrides.py")
            if kind == "extra_forbidden":
                message = f"unknown key {loc[-1]!r} at {dotted}"
                guess = closest(str(loc[-1]), _allowed_keys(loc[:-1]))
                if guess:
                    hint = f"did you mean {guess!r}? Otherwise {hint}"
            elif kind == "missing":
                message = f"missing required key {dotted}"
            else:
                message = f"{dotted}: {err['msg']}"
            problems.append(Diagnostic(Level.ERROR, where, message, hint))
        raise DiagnosticError(sorted(problems, key=lambda d: d.where)) from None


def read_overrides(path: Path, display: str) -> tuple[OverrideFile, Located]:
    return parse_overrides(path.read_text(encoding="utf-8"), display)
