"""Declarations the generated server hands to the runtime: server, operations, shapes, tools.

Generated code only instantiates these; every behaviour lives in the runtime or in hooks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ghmcp_runtime.core.forges import GITHUB
from ghmcp_runtime.core.operation import Operation as Operation  # declarations import it from here

if TYPE_CHECKING:
    from ghmcp_runtime.core.declared import OnError
    from ghmcp_runtime.core.forge_profile import ForgeProfile

JSONObject = dict[str, Any]
Detail = Literal["summary", "full"]
# Handlers take the call's `ToolContext` (calls layer, above this one) first: typed `Any` here.
Handler = Callable[[Any, Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldRule:
    """One output field of a shape: where it comes from in GitHub's JSON and at which detail."""

    name: str
    path: tuple[str, ...]  # e.g. ("user", "login"); "[]" maps over a list: ("labels", "[]", "name")
    detail: Detail  # "summary" fields appear in both details, "full" only in full
    transform: str | None = None  # a runtime transform name, e.g. "preview"
    computed: bool = False  # supplied by the handler (e.g. version), not read from GitHub's JSON
    nested: tuple[FieldRule, ...] = ()  # object-valued fields projected field by field
    untrusted: bool = False  # user-authored text: hidden markup and invisible characters removed
    decode: str | None = None  # a core.content decoder (base64_text): the value as a row shows it
    max_bytes: int | None = None  # text longer than this is cut, with a sentinel saying so


# Row fields the runtime adds, each present only when it has something to say: how many hidden
# pieces sanitizing removed (shapes with untrusted fields), and why lockdown withheld the author's
# text (shapes with a lockdown rule).
HIDDEN_FIELD = "hidden_removed"
# The result field counting rows left out under a repository allowlist (tools that return rows)
OUTSIDE_ALLOWLIST_FIELD = "outside_allowlist"
WITHHELD_FIELD = "withheld"
WITHHELD_REASONS = ("untrusted_author", "trust_unknown")
# Why a row's preview (a field with the `preview` transform) is null: the text is empty, or all
# of it is what the forge's page hides. Rows without a preview field never carry it.
PREVIEW_EMPTY_FIELD = "preview_empty"
PREVIEW_EMPTY_REASONS = ("body_empty", "hidden")


@dataclass(frozen=True, slots=True, kw_only=True)
class LockdownRule:
    """Under lockdown, a row's `withhold` fields are removed unless its author is trusted."""

    author: tuple[str, ...]  # path of the author's login
    repository: tuple[str, ...]  # path of a GitHub API URL naming the repository (…/repos/o/r…)
    withhold: tuple[str, ...]  # output field names
    association: tuple[str, ...] = ()  # path of author_association, when the source carries it


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    name: str
    fields: tuple[FieldRule, ...]
    # content version: output name -> path of each field it covers; filled into `version_field`
    version: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    version_field: str | None = None
    lockdown: LockdownRule | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Annotations:
    read_only: bool
    open_world: bool
    destructive: bool | None = None  # None (absent) for read-only tools
    idempotent: bool | None = None

    def wire(self) -> dict[str, bool]:
        """The MCP `annotations` object; absent hints stay absent (read-only tools)."""
        hints = {"readOnlyHint": self.read_only, "openWorldHint": self.open_world}
        if self.destructive is not None:
            hints["destructiveHint"] = self.destructive
        if self.idempotent is not None:
            hints["idempotentHint"] = self.idempotent
        return hints


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any]
    annotations: Annotations
    error_codes: tuple[str, ...]
    operations: tuple[Operation, ...]
    handler: Handler
    meta: Mapping[str, Any]
    # GitHub request-body field -> the tool parameter it comes from (for 422 field details)
    field_map: Mapping[str, str]
    # parameters whose values may be echoed back (identifiers, enums, numbers, server-minted cursors)
    echo_safe: tuple[str, ...] = ()
    toolset: str | None = None  # the declared toolset `--toolsets` selects it by
    # what the server checks beyond input_schema, by parameter (advertise_pattern: false)
    input_checks: Mapping[str, Mapping[str, Any]] | None = None
    # other tools this one runs on the caller's behalf (a batch's item tool and listing): a
    # surface that hides any of them hides this one too (guards.exposure)
    runs: tuple[str, ...] = ()
    # tools it runs only for an optional parameter (a batch's comment tool): a surface that hides
    # one keeps this tool, and refuses that parameter
    may_run: tuple[str, ...] = ()

    @property
    def success_fields(self) -> Mapping[str, Any]:
        """The properties of output_schema's success branch (the first of its `oneOf`)."""
        success: Mapping[str, Any] = self.output_schema.get("oneOf", [self.output_schema])[0]
        fields: Mapping[str, Any] = success.get("properties", {})
        return fields


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorCode:
    code: str
    temporary: bool
    description: str
    repair: str  # what the repair suggests, in words, for the catalog
    # the tools this wording is for (a forge server's catalog may word one code two ways, one
    # per override file); None: every tool that emits the code
    tools: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StaticResource:
    """A fixed document (capability summary, error catalog) served as a resource."""

    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    text: str
    ttl_ms: int
    cache_scope: Literal["public", "private"]
    # a document of the active surface ("summary", "errors"), rendered per surface; "" = `text`
    content: str = ""


# async (ctx, uri variables) -> JSON-serializable body
ResourceHandler = Callable[[Any, dict[str, Any]], Awaitable[Any]]
# async (ctx, typed prefix, variables already chosen) -> candidate values
CompletionHandler = Callable[[Any, str, dict[str, str]], Awaitable[list[str]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateResource:
    """An RFC 6570 resource template read through a hook, on behalf of the tool reaching it."""

    uri_template: str
    name: str
    title: str
    description: str
    mime_type: str
    tool: str  # the tool that reaches the same content (and whose contract the read follows)
    handler: ResourceHandler
    ttl_ms: int
    cache_scope: Literal["public", "private"]
    completions: Mapping[str, CompletionHandler]  # template variable -> its completion hook


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    name: str  # serverInfo.name
    title: str
    version: str
    fingerprint: str
    instructions: str
    tools: tuple[ToolSpec, ...]
    error_codes: tuple[ErrorCode, ...]
    shapes: Mapping[str, Shape]
    resources: tuple[StaticResource, ...] = ()
    templates: tuple[TemplateResource, ...] = ()
    summary: str = ""  # the override file's summary (instructions without the fingerprint line)
    toolsets: Mapping[str, str] = field(default_factory=dict)  # name -> description
    # the override file's top-level on_error: refines every upstream failure of every tool
    # (a generated server's are loaded on the first call that needs them: base.lazy.LazySequence)
    error_rules: Sequence[OnError] = ()
    forge: ForgeProfile = GITHUB  # the forge's wire conventions (ghmcp_runtime.core.forges)
    api_version: str | None = None  # sent in the forge's version header (GitHub: X-GitHub-Api-Version)
    # a forge's one server (github-mcp): the per-file servers it is made of, in file order; each
    # tool runs with its own part's shapes and error rules (ghmcp_runtime.serving.forge_server)
    parts: tuple[ServerSpec, ...] = ()
    # the toolsets served when no --toolsets / --tools selects any (None: every tool)
    default_toolsets: tuple[str, ...] | None = None
    # composability: tool -> identifier parameter -> the tools of the server that return it
    inputs: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def declares_lockdown(self) -> bool:
        """Some shape of the server (or of a part) says what lockdown withholds."""
        return any(s.lockdown is not None for s in self.shapes.values()) or any(
            p.declares_lockdown for p in self.parts)

    def part_of(self, tool: str) -> ServerSpec:
        """The per-file server `tool` comes from (the server itself when it has no parts)."""
        for part in self.parts:
            if any(t.name == tool for t in part.tools):
                return part
        return self
