"""The intermediate representation: frozen, sorted, template-agnostic."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.base.diagnostics import Where
from ghmcp_runtime.core.declared import Batch, Completion, Declaration, OnError, Repair, Resolve
from ghmcp_runtime.core.model import LockdownRule
from ghmcp_runtime.core.token_scopes import ToolScopes
from ghmcp_runtime.guards.validation import with_checks

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class IROperation:
    operation_id: str
    method: str
    path: str
    not_found: str
    success_status: tuple[int, ...]
    summary: str
    deprecated: bool
    multi_segment: tuple[str, ...] = ()  # path parameters spanning segments (x-multi-segment)
    answer: str | None = None  # the JSON type of every success body: object, array (None: not pinned)
    required: tuple[str, ...] = ()  # the keys a success object carries


@dataclass(frozen=True, slots=True, kw_only=True)
class IRField:
    name: str
    path: tuple[str, ...]
    detail: str
    transform: str | None
    computed: bool
    nested: tuple[IRField, ...]
    schema: JSONObject
    nullable: bool
    untrusted: bool = False
    decode: str | None = None
    max_bytes: int | None = None
    absent_in: tuple[str, ...] = ()  # sources whose rows lack the path: null there


@dataclass(frozen=True, slots=True, kw_only=True)
class IRShape:
    name: str
    sources: tuple[str, ...]
    fields: tuple[IRField, ...]
    schema: JSONObject  # one row of either density: the summary fields required
    version: tuple[tuple[str, tuple[str, ...]], ...] = ()  # declared content version: name -> path
    version_field: str | None = None  # the computed field that carries it
    lockdown: LockdownRule | None = None
    added: tuple[tuple[str, JSONObject], ...] = ()  # row fields the runtime adds (name, schema)


@dataclass(frozen=True, slots=True, kw_only=True)
class IRParam:
    name: str
    required: bool
    schema: JSONObject
    python_type: str
    source: str | None
    transform: str | None = None
    given: bool = False  # an identifier from outside the server (rule composability)
    checks: JSONObject | None = None  # keywords the server checks but `schema` leaves out (pattern)
    clear_with: Any = None  # what a null argument is sent as (Forgejo clears a milestone with 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class IRAnnotations:
    read_only: bool
    open_world: bool
    destructive: bool | None
    idempotent: bool | None
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IROutputField:
    name: str
    required: bool
    schema: JSONObject
    python_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IRRule:
    kind: str
    fields: tuple[str, ...]
    when: str | None
    reason: str
    equals: bool | int | str | None = None
    values: tuple[bool | int | str, ...] = ()
    among: tuple[bool | int | str, ...] = ()  # required_when/forbidden_when: `when`'s triggering values
    normalize: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IRTool:
    name: str
    title: str
    description: str
    handler: str | None  # a hook, or None for a declared tool
    declaration: Declaration | None
    resolve: tuple[Resolve, ...] = ()  # name-or-id parameters (hooks: resolved before the hook runs)
    batch: Batch | None = None  # a batch tool: its recipe (then handler and declaration are None)
    repairs: tuple[tuple[Where, Repair], ...]  # every declared repair, where the file says it
    operations: tuple[IROperation, ...]
    params: tuple[IRParam, ...]
    output: tuple[IROutputField, ...]
    input_schema: JSONObject  # what tools/list publishes
    output_schema: JSONObject
    success_schema: JSONObject
    annotations: IRAnnotations
    error_codes: tuple[str, ...]
    field_map: tuple[tuple[str, str], ...]
    rules: tuple[IRRule, ...]
    echo_safe: tuple[str, ...]
    example: JSONObject
    where: Where
    toolset: str | None = None  # the declared toolset `--toolsets` selects it by
    scopes: ToolScopes = field(default_factory=ToolScopes)  # what a token needs (generator/build/scopes.py)

    @property
    def runs(self) -> tuple[str, ...]:
        """The tools this one runs on the caller's behalf: a batch's item tool and listing."""
        if self.batch is None:
            return ()
        return (self.batch.each, *((self.batch.source.tool,) if self.batch.source else ()))

    @property
    def may_run(self) -> tuple[str, ...]:
        """The tools it runs only for an optional parameter: a batch's comment tool."""
        return (self.batch.comment.tool,) if self.batch is not None and self.batch.comment else ()

    @property
    def input_checks(self) -> dict[str, JSONObject]:
        """What the server checks beyond `input_schema`, by parameter (advertise_pattern: false)."""
        return {p.name: p.checks for p in self.params if p.checks}

    @property
    def checked_input_schema(self) -> JSONObject:
        """`input_schema` as the server checks it: what a call must satisfy (examples, repairs)."""
        return with_checks(self.input_schema, self.input_checks)


@dataclass(frozen=True, slots=True, kw_only=True)
class IRErrorCode:
    code: str
    temporary: bool
    description: str
    repair: str
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Coverage:
    used: tuple[str, ...]
    excluded: tuple[tuple[str, str], ...]
    categories: tuple[str, ...]
    subcategories: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class IRResource:
    uri: str
    name: str
    title: str
    description: str
    content: str  # "summary" | "errors"
    mime_type: str
    ttl_ms: int
    cache_scope: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IRTemplate:
    uri_template: str
    name: str
    title: str
    description: str
    mime_type: str
    tool: str
    handler: str | None
    declaration: Declaration | None
    operations: tuple[IROperation, ...]
    variables: tuple[str, ...]
    ttl_ms: int
    cache_scope: str
    completions: tuple[tuple[str, str | Completion], ...]  # variable -> hook name or declared listing


@dataclass(frozen=True, slots=True, kw_only=True)
class HookPart:
    """A module beside the hooks file (`<hooks stem>_<part>.py`), copied as `hooks_<part>.py`."""

    module: str  # hooks_<part>
    file: str  # as the override file's directory shows it
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class IRServer:
    name: str
    package: str
    title: str
    version: str
    description: str  # one line: distribution, MCP Registry entry, MCP Bundle
    api_version: str | None
    summary: str
    tools_budget_bytes: int | None  # the whole tools/list, enforced only when declared
    description_budget_bytes: int
    model_budget_bytes: int
    tools: tuple[IRTool, ...]
    shapes: tuple[IRShape, ...]
    error_codes: tuple[IRErrorCode, ...]
    coverage: Coverage
    hooks_file: str | None
    hooks_source: str
    overrides_file: str
    hook_parts: tuple[HookPart, ...] = ()  # the hooks module's own helpers, beside it
    resources: tuple[IRResource, ...] = ()
    templates: tuple[IRTemplate, ...] = ()
    toolsets: tuple[tuple[str, str], ...] = ()  # (name, what its tools do), as declared
    error_rules: tuple[OnError, ...] = ()  # the server-wide on_error
    forge: str = "github"  # the runtime's forge profile (ghmcp_runtime.core.forges.FORGES)
    # what each operation the tools call needs of a token, as declared (`scopes:`), by operationId
    operation_scopes: tuple[tuple[str, ToolScopes], ...] = ()
