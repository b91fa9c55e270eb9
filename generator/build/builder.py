"""Override file + patched spec → IR, or every problem found, each located in the override file."""

from __future__ import annotations

import dataclasses
import json
import keyword
import re
from collections.abc import Mapping
from typing import Any

from generator.base.diagnostics import Diagnostic, Level, Where, closest
from generator.base.yamlsrc import Located
from generator.build import lockdown_check, param_values, scopes
from generator.build.batch import build_batch, build_confirm
from generator.build.catalog import builtin_codes
from generator.build.declare import DeclarationBuilder, error_spec, match_of
from generator.build.error_reach import dead_step_rules, reach
from generator.build.ir import (
    Coverage,
    IRAnnotations,
    IRErrorCode,
    IRField,
    IROperation,
    IROutputField,
    IRParam,
    IRResource,
    IRRule,
    IRServer,
    IRShape,
    IRTemplate,
    IRTool,
    JSONObject,
)
from generator.build.recipe_base import Counted, bind_path, path_filler, split_path
from generator.build.resolvers import build_resolve
from generator.language.hookscan import HookFacts
from generator.language.overrides import (
    CompletionDef,
    ErrorCodeDef,
    LockdownDef,
    OutputField,
    OverrideFile,
    ParamDef,
    ResolveCheckDef,
    Rule,
    ShapeField,
    ToolDef,
    recovery_only,
    tool_operations,
)
from generator.packaging.registry_entry import one_line_description
from generator.spec.pinned import (
    SpecOperation,
    answer_contract,
    iter_operations,
    listing_row,
    request_body_schema,
    resolve_ref,
    success_schema,
)
from generator.spec.schemas import (
    compact,
    is_union,
    object_branches,
    open_values,
    python_type,
    schema_types,
    walk,
)
from ghmcp_runtime.core.declared import Completion, ErrorSpec, OnError, Repair, Resolve
from ghmcp_runtime.core.errors import ENVELOPE_OUTPUT_SCHEMA, UNIVERSAL_CODES
from ghmcp_runtime.core.forges import FORGES, GITHUB
from ghmcp_runtime.core.model import (
    HIDDEN_FIELD,
    OUTSIDE_ALLOWLIST_FIELD,
    PREVIEW_EMPTY_FIELD,
    PREVIEW_EMPTY_REASONS,
    WITHHELD_FIELD,
    WITHHELD_REASONS,
    LockdownRule,
    Operation,
)
from ghmcp_runtime.core.refs import references
from ghmcp_runtime.core.token_scopes import combined
from ghmcp_runtime.core.transforms import TRANSFORMS

JSON = Any
ALWAYS_CODES = (*UNIVERSAL_CODES, "internal_error")
NOT_FOUND_BY_PARAM = {
    "issue_number": "issue_not_found",
    "comment_id": "comment_not_found",
    "name": "label_not_found",
    "milestone_number": "milestone_not_found",
    "assignee": "invalid_field",  # issues/check-user-can-be-assigned: 404 = cannot be assigned
    "org": "org_not_found",
}
# a generic last parameter (Forgejo's `{id}`, `{index}`) is named by the collection before it
NOT_FOUND_BY_COLLECTION = {
    "labels": "label_not_found",
    "issues": "issue_not_found",
    "comments": "comment_not_found",
    "milestones": "milestone_not_found",
}
REPO_PARAMS = ("owner", "repo")
DEFAULT_MODEL_BUDGET = 1500  # model-visible bytes per tool (name, description, inputSchema; issue 24)
REQUEST_ID = {"type": "string"}
RATE_LIMIT_REMAINING = {"type": "integer", "description": "Only when <10 % left."}
# what a tool returning rows says it left out under a repository allowlist (guards/allowlist.py)
OUTSIDE_ALLOWLIST = {"type": "integer", "minimum": 1}  # said in the summary (field_notes.py)
# the presence rule: a row's optional fields are the ones its density leaves out
DENSITY_NOTE = "Optional fields: only with detail full."


class Builder:
    def __init__(
        self,
        overrides: OverrideFile,
        located: Located,
        document: Mapping[str, JSON],
        hooks: HookFacts,
        hooks_file: str | None,
        hooks_source: str,
    ) -> None:
        self.o = overrides
        self.loc = located
        self.doc = document
        self.hooks = hooks
        self.hooks_file = hooks_file
        self.hooks_source = hooks_source
        self.ops = {op.operation_id: op for op in iter_operations(document)}
        self.problems: list[Diagnostic] = []
        forge = FORGES.get(overrides.server.forge, GITHUB)  # an unknown forge is reported by check_forge
        self.forge = forge
        self.totals = forge.total_count_header is not None
        self.catalog: dict[str, ErrorCodeDef] = {**builtin_codes(forge), **overrides.error_codes}
        self.error_rules: list[tuple[Where, OnError]] = []  # the server-wide on_error, once built
        # (tool, parameter) -> the JSON type a name of a `resolve:` parameter becomes (an id)
        self.resolved: dict[tuple[str, str], str] = {}
        self.failed: set[str] = set()  # tools reported wrong: a batch running one says nothing more

    # -- helpers -----------------------------------------------------------------------------
    def error(self, loc: tuple[str | int, ...], message: str, hint: str = "", rule: str = "") -> None:
        self.problems.append(Diagnostic(Level.ERROR, self.loc.where(loc), message, hint, rule))

    def warn(self, loc: tuple[str | int, ...], message: str, hint: str = "", rule: str = "") -> None:
        self.problems.append(Diagnostic(Level.WARNING, self.loc.where(loc), message, hint, rule))

    def lookup_op(self, op_id: str, loc: tuple[str | int, ...]) -> SpecOperation | None:
        op = self.ops.get(op_id)
        if op is None:
            guess = closest(op_id, list(self.ops))
            self.error(
                loc,
                f"unknown operationId {op_id!r}",
                f"did you mean {guess!r}?" if guess else "operationIds look like issues/get",
            )
        return op

    # -- stages ------------------------------------------------------------------------------
    def build(self) -> IRServer | None:
        self.check_coverage()
        self.error_rules = self.build_error_rules()
        shapes = self.build_shapes()
        # a batch runs other tools of the server: they are built first
        tools: list[IRTool | None] = [None] * len(self.o.tools)
        built_by_name: dict[str, IRTool] = {}
        for i in sorted(range(len(self.o.tools)), key=lambda k: self.o.tools[k].batch is not None):
            built_tool = tools[i] = self.build_tool(i, self.o.tools[i], shapes, built_by_name)
            if built_tool is not None and built_tool.batch is None:
                built_by_name[built_tool.name] = built_tool
            elif built_tool is None:
                self.failed.add(self.o.tools[i].name)
        self.check_tool_names()
        self.check_toolsets()
        tool_ops = {op for tool in self.o.tools for op in tool_operations(tool)}
        built = [t for t in tools if t is not None]
        self.problems += lockdown_check.check(self.doc, shapes.values(), tool_ops, self.o.server.forge, self.loc)
        codes = self.build_error_codes(built)
        resources = self.build_resources()
        templates = self.build_templates(built)
        built = self.build_scopes(built, templates)
        self.check_constants(built, templates)
        self.check_forge()
        if any(p.level is Level.ERROR for p in self.problems):
            return None
        s = self.o.server
        return IRServer(
            name=s.name,
            package=s.package,
            title=s.title,
            version=s.version,
            description=one_line_description(s.description, s.title),
            api_version=s.api_version,
            summary=s.summary.strip(),
            tools_budget_bytes=s.tools_budget_bytes,
            description_budget_bytes=s.description_budget_bytes,
            model_budget_bytes=s.model_budget_bytes or DEFAULT_MODEL_BUDGET * max(1, len(built)),
            tools=tuple(sorted(built, key=lambda t: t.name)),
            toolsets=tuple((name, text.strip()) for name, text in self.o.toolsets.items()),
            shapes=tuple(sorted(shapes.values(), key=lambda sh: sh.name)),
            error_codes=codes,
            coverage=Coverage(
                used=tuple(sorted({op.operation_id for t in built for op in t.operations})),
                excluded=tuple(sorted(self.o.coverage.excluded.items())),
                categories=tuple(sorted(self.o.coverage.categories)),
                subcategories=tuple(sorted(self.o.coverage.subcategories)),
            ),
            hooks_file=self.hooks_file,
            hooks_source=self.hooks_source,
            overrides_file=self.loc.file,
            resources=resources,
            templates=templates,
            forge=s.forge,
            error_rules=tuple(rule for _, rule in self.error_rules),
            operation_scopes=tuple((op_id, combined([scopes.operation_scopes(d)], self.forge.scopes))
                                   for op_id, d in sorted(self.o.scopes.items())),
        )

    def check_forge(self) -> None:
        s = self.o.server
        forge = FORGES.get(s.forge)
        if forge is None:
            guess = closest(s.forge, list(FORGES))
            self.error(("server", "forge"), f"unknown forge {s.forge!r}",
                       f"did you mean {guess!r}?" if guess else f"one of {', '.join(sorted(FORGES))}")
        elif s.api_version is not None and forge.version_header is None:
            self.error(("server", "api_version"),
                       f"{forge.display_name} takes no API version header, so api_version means nothing",
                       "remove server.api_version")

    def build_error_rules(self) -> list[tuple[Where, OnError]]:
        """The server-wide on_error (every upstream failure of every tool, hooks included)."""
        out = []
        for i, raw in enumerate(self.o.on_error):
            loc: tuple[str | int, ...] = ("on_error", i)
            if raw.skip:
                self.error((*loc, "skip"), "a server-wide rule cannot skip a failure",
                           "skip a step's failure in that step's own on_error", "error-match")
            if raw.code is not None and raw.code not in self.catalog:
                guess = closest(raw.code, list(self.catalog))
                self.error((*loc, "code"), f"error code {raw.code!r} is not in error_codes",
                           f"did you mean {guess!r}?" if guess else "declare it under error_codes",
                           "error-match")
            for ref in references([raw.message, raw.reason, *(
                    [dict(raw.repair.arguments), raw.repair.alternative] if raw.repair else [])]):
                if ref.path[0] not in REPO_PARAMS:
                    self.error(loc, f"a server-wide rule reads {ref.path[0]!r}",
                               "it serves every tool: its templates read only {owner} and {repo}", "error-match")
            if raw.when.status is None and raw.when.code is None:
                self.error((*loc, "when"), "a server-wide rule needs `status` or `code` in `when`",
                           "e.g. {status: 403, message_contains: must have push access}", "error-match")
            rule = OnError(when=match_of(raw.when, (*loc, "when"), self.error),
                           error=error_spec(raw) or ErrorSpec())
            out.append((self.loc.where(loc), rule))
        return out

    def build_resources(self) -> tuple[IRResource, ...]:
        out = []
        seen: set[str] = set()
        for i, r in enumerate(self.o.resources):
            if r.uri in seen or r.name in seen:
                self.error(("resources", i), f"duplicate resource {r.uri!r}", "URIs and names are unique")
            seen |= {r.uri, r.name}
            mime = "text/markdown" if r.content == "summary" else "application/json"
            out.append(IRResource(uri=r.uri, name=r.name, title=r.title, description=r.description.strip(),
                                  content=r.content, mime_type=mime, ttl_ms=r.ttl_ms,
                                  cache_scope=r.cache_scope))
        return tuple(out)

    def build_templates(self, tools: list[IRTool]) -> tuple[IRTemplate, ...]:
        out = []
        names = {t.name for t in tools}
        for i, t in enumerate(self.o.resource_templates):
            loc: tuple[str | int, ...] = ("resource_templates", i)
            variables = tuple(v.strip(" *") for group in re.findall(r"\{[+#./;?&]?([^}]+)\}", t.uri_template)
                              for v in group.split(","))
            if t.tool not in names:
                guess = closest(t.tool, list(names))
                self.error((*loc, "tool"), f"template {t.name!r} names unknown tool {t.tool!r}",
                           f"did you mean {guess!r}?" if guess else "every resource must be reachable by a tool")
            hooks = [("handler", t.handler)] if t.handler else []
            if (t.handler is None) == (t.steps is None):
                self.error(loc, f"template {t.name!r} needs exactly one of `handler` or `steps`",
                           "declare the read with steps and output (preferred), or name a hook")
            hooked = [(f"completions.{v}", h) for v, h in t.completions.items() if isinstance(h, str)]
            for key, fn in [*hooks, *hooked]:
                if fn not in self.hooks.async_functions:
                    self.error((*loc, *key.split(".")), f"hook {fn!r} is not an async function in {self.hooks_file}",
                               "define it with `async def` in the hook module")
            for var in t.completions:
                if var not in variables:
                    self.error((*loc, "completions", var), f"{var!r} is not a variable of {t.uri_template}",
                               f"variables are: {', '.join(variables)}")
            ops = []
            for j, op_id in enumerate([*(s.call for s in t.steps or []), *t.operations]):
                op = self.lookup_op(op_id, (*loc, "operations", j))
                if op is not None:
                    ops.append(self.build_operation(op))
            tool = next((x for x in tools if x.name == t.tool), None)
            declaration = None
            if t.steps is not None and tool is not None:
                params = [p for p in tool.params if p.name in variables]
                body = ToolDef.model_construct(name=t.name, steps=t.steps, output=t.output, params=[],
                                               idempotency=None)
                runtime_ops = {op.operation_id: runtime_operation(op) for op in ops}
                built = DeclarationBuilder(body, loc, params, self.ops, runtime_ops, self.doc,
                                           set(self.catalog), self.error, self.versioned,
                                           totals=self.totals).build()
                declaration = built[0] if built else None
            completions = tuple(sorted((var, self.build_completion(spec, variables, (*loc, "completions", var)))
                                       for var, spec in t.completions.items()))
            ops += [self.build_operation(self.ops[c.operation.operation_id])
                    for _, c in completions if isinstance(c, Completion)]
            out.append(IRTemplate(uri_template=t.uri_template, name=t.name, title=t.title,
                                  description=t.description.strip(), mime_type=t.mime_type, tool=t.tool,
                                  handler=t.handler, declaration=declaration, operations=tuple(ops),
                                  variables=variables, ttl_ms=t.ttl_ms, cache_scope=t.cache_scope,
                                  completions=completions))
        return tuple(out)

    def build_completion(self, spec: str | CompletionDef, variables: tuple[str, ...],
                         loc: tuple[str | int, ...]) -> str | Completion:
        """A hook's name as it stands, or a declared listing bound to the template's variables."""
        if isinstance(spec, str):
            return spec
        op = self.lookup_op(spec.call, (*loc, "call"))
        if op is None:
            return spec.call
        wanted = re.findall(r"\{([^}]+)\}", op.path)
        path = {name: spec.path.get(name, "{" + name + "}") for name in wanted}
        for name, template in path.items():
            if template == "{" + name + "}" and name not in variables:
                self.error((*loc, "call"), f"nothing fills path parameter {name!r} of {spec.call}",
                           f"variables are: {', '.join(variables)}; or give `path: {{{name}: ...}}`")
        for var in spec.match:
            if var not in variables:
                self.error((*loc, "match", var), f"{var!r} is not a variable of the template",
                           f"variables are: {', '.join(variables)}")
        return Completion(operation=runtime_operation(self.build_operation(op)), value=split_path(spec.value),
                          path=path, query=dict(spec.query),
                          match={var: split_path(p) for var, p in spec.match.items()}, pages=spec.pages)

    def check_identifier(self, loc: tuple[str | int, ...], name: str, what: str) -> None:
        if keyword.iskeyword(name) or keyword.issoftkeyword(name):
            self.error(loc, f"{what} name {name!r} is a Python keyword",
                       "choose another name (generated TypedDicts use these names as keys)")

    def build_scopes(self, tools: list[IRTool], templates: tuple[IRTemplate, ...]) -> list[IRTool]:
        """Each tool with what a token needs to use it; every operation called must be declared
        (reported once, where its first caller names it)."""
        model = self.forge.scopes
        scopes.check_declarations(self.o, model, self.ops, self.error)
        index = {t.name: i for i, t in enumerate(self.o.tools)}
        callers: dict[str, list[tuple[str, tuple[str | int, ...]]]] = {}
        out: dict[str, IRTool] = {}
        for t in sorted(tools, key=lambda x: x.batch is not None):
            decl = self.o.tools[index[t.name]]
            if t.batch is not None:
                parts = [out[n].scopes for n in t.runs if n in out]
                out[t.name] = dataclasses.replace(t, scopes=combined(parts, model))
                continue
            ids = list(dict.fromkeys(op.operation_id for op in t.operations))
            for where, op_id in scopes.undeclared(decl, ids, self.o):
                callers.setdefault(op_id, []).append((f"tool {t.name}", ("tools", index[t.name], *where)))
            callers.update({i: callers.get(i, []) for i in ids})
            out[t.name] = dataclasses.replace(t, scopes=scopes.tool_scopes(
                ids, self.o.scopes, model, recovery_only(decl)))
        names = [t.name for t in self.o.resource_templates]
        for tpl in templates:
            for op_id in dict.fromkeys(op.operation_id for op in tpl.operations):
                here: list[tuple[str, tuple[str | int, ...]]] = [
                    (f"template {tpl.name}", ("resource_templates", names.index(tpl.name), "name"))]
                callers[op_id] = callers.get(op_id, []) + (here if op_id not in self.o.scopes else [])
        for op_id, found in callers.items():
            if found:
                (first, loc), others = found[0], [who for who, _ in found[1:]]
                also = f" (so do {', '.join(others)})" if others else ""
                self.error(loc, f"{first} calls {op_id}{also}, but the file does not declare what a "
                           "token needs for it", self.scope_hint(op_id), scopes.RULE)
        declared_calls = {op for t in self.o.tools for op in tool_operations(t)}
        declared_calls |= {op for t in self.o.resource_templates
                           for op in [*(s.call for s in t.steps or []), *t.operations,
                                      *(c.call for c in t.completions.values() if isinstance(c, CompletionDef))]}
        for op_id in scopes.unused(self.o, set(callers) | declared_calls):
            self.error(("scopes", op_id), f"scopes: no tool or template calls {op_id}",
                       "drop the declaration", scopes.RULE)
        return [out[t.name] for t in tools]

    def scope_hint(self, op_id: str) -> str:
        op = self.ops[op_id]
        docs = scopes.docs_url(op)
        shape = "oauth: [...], fine_grained: [...]" if self.o.server.forge == "github" else "oauth: [...]"
        return (f"declare it under scopes: `{op_id}: {{{shape}}}`, from the "
                f"forge's documentation of {op.method.upper()} {op.path}" + (f" ({docs})" if docs else ""))

    def check_constants(self, tools: list[IRTool], templates: tuple[IRTemplate, ...]) -> None:
        ops = {op.operation_id for t in tools for op in t.operations}
        ops |= {op.operation_id for t in templates for op in t.operations}
        by_const: dict[str, list[str]] = {}
        for op_id in sorted(ops):
            by_const.setdefault(const_name(op_id), []).append(op_id)
        for const, ids in sorted(by_const.items()):
            if len(ids) > 1:
                self.error(("tools",), f"operationIds {', '.join(ids)} collide as the constant {const}",
                           "operationIds must stay distinct after punctuation becomes '_'")

    def check_coverage(self) -> None:
        used: dict[str, int] = {}
        for i, tool in enumerate(self.o.tools):
            for j, op_id in enumerate(tool.operations):
                if self.lookup_op(op_id, ("tools", i, "operations", j)) is not None:
                    used.setdefault(op_id, i)
            for k, step in enumerate(tool.steps or []):
                if self.lookup_op(step.call, ("tools", i, "steps", k, "call")) is not None:
                    used.setdefault(step.call, i)
            for op_id in tool_operations(tool):
                if op_id in self.ops:
                    used.setdefault(op_id, i)
        for op_id in self.o.coverage.excluded:
            loc = ("coverage", "excluded", op_id)
            if self.lookup_op(op_id, loc) is not None and op_id in used:
                self.error(loc, f"{op_id} is excluded but tool {self.o.tools[used[op_id]].name} uses it",
                           "drop it from coverage.excluded")
        categories, subcategories = set(self.o.coverage.categories), set(self.o.coverage.subcategories)
        for op in sorted(self.ops.values(), key=lambda o: o.operation_id):
            claimed = op.category in categories or op.subcategory in subcategories
            if claimed and op.operation_id not in used \
                    and op.operation_id not in self.o.coverage.excluded:
                self.error(
                    ("coverage", "excluded"),
                    f"operation {op.operation_id} ({op.method.upper()} {op.path}) is neither used "
                    "by a tool nor excluded",
                    "add it to a tool's operations, or to coverage.excluded with a one-line reason",
                    "coverage",
                )

    @property
    def versioned(self) -> frozenset[str]:
        """Shapes that declare a content version."""
        return frozenset(name for name, shape in self.o.shapes.items() if shape.version)

    def build_shapes(self) -> dict[str, IRShape]:
        shapes: dict[str, IRShape] = {}
        for name, shape in sorted(self.o.shapes.items()):
            loc: tuple[str | int, ...] = ("shapes", name)
            roots = []
            for k, source in enumerate(shape.sources):
                node = self.shape_source(source, (*loc, "sources", k))
                if node is not None:
                    roots.append((source, node))
            fields = self.build_fields(shape.fields, roots, (*loc, "fields"))
            version = self.build_version(shape.version or {}, roots, (*loc, "version"))
            computed_version = [f.name for f in shape.fields if f.computed == "version"]
            if computed_version and not shape.version:
                self.error((*loc, "version"), f"shape {name!r} has a `computed: version` field "
                           "but declares no version", "add `version: {name: path, ...}`")
            if fields is not None:
                lockdown = self.build_lockdown(shape.lockdown, fields, roots, (*loc, "lockdown"))
                if lockdown is not None:  # a withheld field stays in the row, null
                    fields = tuple(dataclasses.replace(f, schema=with_null(f.schema), nullable=True)
                                   if f.name in lockdown.withhold else f for f in fields)
                added = added_fields(fields, lockdown)
                shapes[name] = IRShape(
                    name=name,
                    sources=tuple(shape.sources),
                    fields=fields,
                    schema=row_schema(fields, added=added),
                    version=version,
                    version_field=computed_version[0] if computed_version else None,
                    lockdown=lockdown,
                    added=added,
                )
        return shapes

    def shape_source(self, source: str, loc: tuple[str | int, ...]) -> JSON | None:
        """A component schema by name, or `<operationId>#response`: its success body (list items)."""
        if source.endswith("#response"):
            op = self.lookup_op(source.removesuffix("#response"), loc)
            if op is None:
                return None
            node = success_schema(self.doc, op)
            if node is None:
                self.error(loc, f"{op.operation_id} has no JSON success response to project",
                           "name a component schema instead")
            return node
        node = self.doc.get("components", {}).get("schemas", {}).get(source)
        if node is None:
            guess = closest(source, list(self.doc["components"]["schemas"]))
            self.error(loc, f"unknown component schema {source!r}",
                       f"did you mean {guess!r}?" if guess else
                       "name a component schema, or <operationId>#response")
        return node

    def source_path(self, dotted: str, roots: list[tuple[str, JSON]],
                    loc: tuple[str | int, ...]) -> tuple[str, ...]:
        """A dotted path checked against every source schema of a shape."""
        path = tuple(p for p in re.split(r"\.|(\[\])", dotted) if p)
        for source, root in roots:
            if walk(self.doc, root, path)[0] is None:
                self.error(loc, f"path {dotted!r} does not exist in {source!r}",
                           "paths are dotted property names; [] steps into list items")
        return path

    def build_lockdown(self, spec: LockdownDef | None, fields: tuple[IRField, ...],
                       roots: list[tuple[str, JSON]],
                       loc: tuple[str | int, ...]) -> LockdownRule | None:
        if spec is None:
            return None
        trust = self.forge.trust
        if trust is None:
            self.error(loc, f"{self.forge.display_name} offers no way to tell whether an author may "
                       "push, so lockdown cannot be declared on this forge", "remove the lockdown rule")
        elif spec.association and not trust.associations:
            self.error((*loc, "association"), f"{self.forge.display_name} sends no author "
                       "association, so there is none to read", "remove association: every author "
                       "is asked about")
        by_name = {f.name: f for f in fields}
        for k, name in enumerate(spec.withhold):
            field = by_name.get(name)
            if field is None:
                guess = closest(name, list(by_name))
                self.error((*loc, "withhold", k), f"{name!r} is not a field of the shape",
                           f"did you mean {guess!r}?" if guess else "")
            elif not field.nullable and field.detail == "summary":
                self.error((*loc, "withhold", k), f"field {name!r} is required in every row, so "
                           "withholding it would break the output schema",
                           "withhold only optional fields (detail: full, or nullable)")
        return LockdownRule(
            author=self.source_path(spec.author, roots, (*loc, "author")),
            repository=self.source_path(spec.repository, roots, (*loc, "repository")),
            association=self.source_path(spec.association, roots, (*loc, "association"))
            if spec.association else (),
            withhold=tuple(spec.withhold),
        )

    def build_version(self, fields: Mapping[str, str], roots: list[tuple[str, JSON]],
                      loc: tuple[str | int, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return tuple((name, self.source_path(dotted, roots, (*loc, name)))
                     for name, dotted in sorted(fields.items()))

    def build_fields(
        self,
        defs: list[ShapeField],
        roots: list[tuple[str, JSON]],
        loc: tuple[str | int, ...],
    ) -> tuple[IRField, ...] | None:
        out = []
        for i, f in enumerate(defs):
            floc = (*loc, i)
            self.check_identifier((*floc, "name"), f.name, "shape field")
            if f.name in (HIDDEN_FIELD, WITHHELD_FIELD, PREVIEW_EMPTY_FIELD):
                self.error((*floc, "name"), f"{f.name!r} is a row field the runtime adds",
                           "pick another name")
            if f.untrusted and f.computed is not None:
                self.error((*floc, "untrusted"), "`untrusted` applies to text read from GitHub, "
                           "not to computed fields")
            if f.computed is not None:
                schema = {"type": "string"} if f.computed == "version" else dict(f.computed)
                if f.description:
                    schema = {**schema, "description": f.description}
                out.append(IRField(name=f.name, path=(), detail=f.detail, transform=None,
                                   computed=True, nested=(), schema=schema, nullable=False))
                continue
            if not f.source:
                self.error(floc, f"shape field {f.name!r} needs `from` or `computed`")
                continue
            path = tuple(p for p in re.split(r"\.|(\[\])", f.source) if p)
            for k, name in enumerate(f.absent_in):
                if name not in {source for source, _ in roots}:
                    self.error((*floc, "absent_in", k), f"{name!r} is not a source of the shape",
                               f"sources: {', '.join(s for s, _ in roots)}")
            present = [(source, root) for source, root in roots if source not in f.absent_in]
            found = []
            for source, root in present:
                node, nullable = walk(self.doc, root, path)
                if node is None:
                    self.error((*floc, "from"), f"path {f.source!r} does not exist in schema {source!r}",
                               "paths are dotted property names; [] steps into list items")
                    continue
                found.append((node, nullable))
            if len(found) != len(present) or not found:
                continue
            nullable = any(n for _, n in found) or bool(f.absent_in)  # null in the other rows
            nested: tuple[IRField, ...] = ()
            if f.fields:
                # the parent's nullability is the parent's: a present object has its fields
                nested_roots = [(s, {k: v for k, v in n.items() if k != "nullable"})
                                for (s, _), (n, _) in zip(present, found, strict=True)]
                nested = self.build_fields(f.fields, nested_roots, (*floc, "fields")) or ()
                schema = row_schema(nested, density="full")
            elif f.transform == "preview":
                schema = {"type": "string", "maxLength": 201}
            elif f.decode is not None:  # decoded text, or what kind of content it is
                schema = {"type": "string"}
            else:
                schemas = [open_values(compact(self.doc, n)) for n, _ in found]
                if any(s.get("type") != schemas[0].get("type") for s in schemas[1:]):
                    self.error((*floc, "from"), f"path {f.source!r} has different types in the sources",
                               "project it from one source only, or add a transform")
                    continue
                # same type, different refinements (e.g. an enum in one source only): keep the widest
                schema = min(schemas, key=lambda s: (len(s), json.dumps(s, sort_keys=True)))
            if "[]" in path and f.nullable:
                self.error((*floc, "nullable"), f"shape field {f.name!r} maps a list, which is [] when "
                           "empty, never null", "drop `nullable`")
            if f.max_bytes is not None and f.decode is None and schema.get("type") != "string":
                self.error((*floc, "max_bytes"), f"max_bytes cuts text; {f.source!r} is not a string",
                           "drop max_bytes")
            derived = nullable or f.transform == "preview" or f.decode is not None
            # lists: [] when empty; an explicit `nullable` overrides what the spec says
            nullable = "[]" not in path and (derived if f.nullable is None else f.nullable)
            if nullable:
                schema = with_null(schema)
            for _ in range(path.count("[]")):
                schema = {"type": "array", "items": schema}
            if f.description:
                schema = {**schema, "description": f.description}
            out.append(IRField(name=f.name, path=path, detail=f.detail, transform=f.transform,
                               computed=False, nested=nested, schema=schema, nullable=nullable,
                               untrusted=f.untrusted, decode=f.decode, max_bytes=f.max_bytes,
                               absent_in=tuple(f.absent_in)))
        return tuple(out)

    def build_tool(self, index: int, tool: ToolDef, shapes: Mapping[str, IRShape],
                   tools: Mapping[str, IRTool]) -> IRTool | None:
        loc: tuple[str | int, ...] = ("tools", index)
        before = len([p for p in self.problems if p.level is Level.ERROR])
        ops = []
        for op_id in tool_operations(tool):
            op = self.ops.get(op_id)
            if op is not None:
                ops.append(self.build_operation(op))
        kinds = [k for k in ("handler", "steps", "batch") if getattr(tool, k) is not None]
        if len(kinds) > 1:
            self.error((*loc, kinds[1]), f"tool {tool.name} has both `{kinds[0]}` and `{kinds[1]}`",
                       "declare `steps` (preferred), a `batch`, or name a hook: one of them")
        elif not kinds:
            self.error(loc, f"tool {tool.name} has neither `steps` nor `handler`",
                       "declare what it does with `steps` (see docs/overrides.md)")
        elif tool.batch is not None and tool.output:
            self.error((*loc, "output"), f"batch tool {tool.name} declares outputs",
                       "drop `output`: a batch answers items, summary, has_more, next_cursor, stopped")
        elif tool.batch is None and not tool.output:
            self.error(loc, f"tool {tool.name} declares no output", "list the success payload under `output`")
        elif tool.confirm is not None and tool.steps is None:
            self.error((*loc, "confirm"), f"confirm applies to declared steps, not to tool {tool.name}",
                       "a batch declares it under batch.confirm")
        elif tool.handler is not None and not tool.operations:
            self.error((*loc, "operations"), f"tool {tool.name} runs a hook but lists no operations",
                       "list every operation the hook calls under operations")
        elif tool.handler is not None and tool.handler not in self.hooks.async_functions:
            guess = closest(tool.handler, list(self.hooks.async_functions))
            self.error((*loc, "handler"),
                       f"handler {tool.handler!r} is not an async function in {self.hooks_file or 'the hooks'}",
                       f"did you mean {guess!r}?" if guess else
                       "define `async def` in the hook module named by server.hooks")
        if tool.steps is not None and not tool.steps:
            self.error((*loc, "steps"), f"tool {tool.name} declares no steps", "add at least one step")
        params = [self.build_param(tool, p, (*loc, "params", k)) for k, p in enumerate(tool.params)]
        names = [str(p.name) for p in tool.params]  # resolve_shared guarantees names
        for k, name in enumerate(names):
            if name in names[:k]:
                self.error((*loc, "params", k, "name"), f"duplicate parameter {name!r}")
            self.check_identifier((*loc, "params", k, "name"), name, "parameter")
        added = [tool.batch.source.param] if tool.batch is not None and tool.batch.source else []
        for k, rule in enumerate(tool.rules):
            if rule.equals is not None and rule.kind != "requires":
                self.error((*loc, "rules", k, "equals"), f"equals applies to requires rules, not {rule.kind}",
                           "remove equals, or make the rule kind: requires")
            for field in [*rule.fields, *([trigger(rule)[0]] if trigger(rule)[0] else [])]:
                if field not in names + added:
                    self.error((*loc, "rules", k), f"rule names unknown parameter {field!r}",
                               f"parameters are: {', '.join(names)}")
            self.check_rule_kind(rule, (*loc, "rules", k), {str(p.name): p for p in tool.params})
        variable = "detail" in names  # the `detail` parameter chooses the rows' density
        output = [self.build_output(f, shapes, (*loc, "output", k), variable) for k, f in enumerate(tool.output)]
        self.check_annotations(tool, loc)
        for k, code in enumerate(tool.errors or []):
            if code not in self.catalog:
                guess = closest(code, list(self.catalog))
                self.error((*loc, "errors", k), f"error code {code!r} is not in error_codes",
                           f"did you mean {guess!r}?" if guess else "declare it under error_codes")
        for gh_field, param in sorted(tool.field_map.items()):
            if param not in names:
                self.error((*loc, "field_map", gh_field), f"field_map target {param!r} is not a parameter")
        if len([p for p in self.problems if p.level is Level.ERROR]) > before:
            return None
        built_params = tuple(p for p in params if p is not None)
        built_output = tuple(f for f in output if f is not None)
        self.problems += param_values.check(tool, index, built_params, self.loc)
        self.check_confirm(tool, loc)
        resolve = self.build_resolvers(tool, loc, built_params)
        if resolve is None:
            return None
        generic = self.implied_codes(ops, built_params)
        reached = reach([rule for _, rule in self.error_rules], ops, generic)
        implied = (generic - set(reached.dropped)) | reached.added | resolve_codes(resolve)
        if tool.handler is not None:
            implied |= self.hooks.codes.get(tool.handler, frozenset())
        self.problems += dead_step_rules(tool, loc, reached, self.error_rules, self.loc)
        repairs_of_rules = tuple((where, rule.error.repair) for where, rule in self.error_rules
                                 if rule.error.repair is not None and rule.error.code in implied)
        declaration = batch = None
        repairs: tuple[tuple[Where, Repair], ...] = tuple(
            (self.loc.where((*loc, "params", k, "resolve", "unknown", "repair")), r.unknown.repair)
            for k, p in enumerate(tool.params) for r in resolve
            if p.name == r.param and r.unknown.repair is not None) + repairs_of_rules
        field_map = dict(tool.field_map)
        if tool.steps is not None:
            runtime_ops = {op.operation_id: runtime_operation(op) for op in ops}
            builder = DeclarationBuilder(tool, loc, built_params, self.ops, runtime_ops, self.doc,
                                         set(self.catalog), self.error, self.versioned, shapes,
                                         totals=self.totals,
                                         resolved={p: t for (name, p), t in self.resolved.items()
                                                   if name == tool.name})
            built = builder.build()
            if built is None:
                return None
            repairs += tuple((self.loc.where(rloc), r) for rloc, r in builder.repairs)
            declaration, derived_map, raised = built
            declaration = dataclasses.replace(declaration, resolve=resolve)
            field_map = {**derived_map, **field_map}
            implied |= raised
            if tool.confirm is not None:
                declaration = dataclasses.replace(declaration, confirm=build_confirm(
                    tool.confirm, (*loc, "confirm"), {p.name for p in built_params}, self.error))
                implied.add("confirmation_declined")
        if tool.batch is not None:
            if {tool.batch.each, tool.batch.source.tool if tool.batch.source else ""} & self.failed:
                return None
            made = build_batch(tool, loc, built_params, tools, resolve, self.error)
            if made is None:
                return None
            batch, built_params, built_output = made.batch, made.params, made.output
            implied = set(made.codes) | resolve_codes(resolve)
            ran = [tools[name] for name in (batch.each, batch.source.tool if batch.source else None) if name]
            ops = list({op.operation_id: op for t in ran for op in t.operations}.values())
        errors = implied if tool.errors is None else set(tool.errors)
        for code in sorted(implied - errors):
            self.error((*loc, "errors"), f"tool {tool.name} can emit {code!r} but does not declare it",
                       f"add {code} to errors (the generator refuses undeclared codes)", "declared-codes")
        for code in sorted(errors - implied):
            self.warn((*loc, "errors"), f"tool {tool.name} declares {code!r} but nothing emits it",
                      "drop it, or raise it from the hook", "declared-codes")
        if len([p for p in self.problems if p.level is Level.ERROR]) > before:
            return None
        input_schema: JSONObject = {
            "type": "object",
            "additionalProperties": False,
            "properties": {p.name: p.schema for p in built_params},
        }
        if required := [p.name for p in built_params if p.required]:  # `[]` says nothing a model needs
            input_schema["required"] = required
        success: JSONObject = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                **{f.name: f.schema for f in built_output},
                "request_id": REQUEST_ID,
                "rate_limit_remaining": RATE_LIMIT_REMAINING,
                **({OUTSIDE_ALLOWLIST_FIELD: OUTSIDE_ALLOWLIST} if batch is None and any(
                    _rows(f.schema) for f in built_output) else {}),
            },
            "required": [*[f.name for f in built_output if f.required], "request_id"],
        }
        description = tool.description.strip() + "\nExample: " + json.dumps(
            tool.example, separators=(",", ":"), ensure_ascii=False
        )
        a = tool.annotations
        return IRTool(
            name=tool.name,
            title=tool.title,
            description=description,
            toolset=tool.toolset,
            handler=tool.handler,
            declaration=declaration,
            batch=batch,
            resolve=resolve,
            repairs=repairs,
            operations=tuple(ops),
            params=built_params,
            output=built_output,
            input_schema=input_schema,
            # the root's type covers both branches: the success branch does not repeat it
            output_schema={"type": "object", "oneOf": [{k: v for k, v in success.items() if k != "type"},
                                                       ENVELOPE_OUTPUT_SCHEMA]},
            success_schema=success,
            annotations=IRAnnotations(read_only=a.read_only, open_world=a.open_world,
                                      destructive=a.destructive, idempotent=a.idempotent, why=a.why),
            error_codes=tuple(sorted(errors)),
            field_map=tuple(sorted(field_map.items())),
            echo_safe=tuple(p.name for p in built_params if echo_safe(p)),
            rules=tuple(IRRule(kind=r.kind, fields=tuple(r.fields), when=trigger(r)[0], among=trigger(r)[1],
                               reason=r.reason, equals=r.equals, values=tuple(r.values), normalize=r.normalize,
                               message=r.message)
                        for r in tool.rules),
            example=dict(tool.example),
            where=self.loc.where(loc),
        )

    def check_rule_kind(self, rule: Rule, loc: tuple[str | int, ...], params: Mapping[str, ParamDef]) -> None:
        """The keys only some rule kinds take (values, normalize) and the parameters they suit."""
        if rule.values and rule.kind != "excludes":
            self.error((*loc, "values"), f"values applies to excludes rules, not {rule.kind}",
                       "remove values, or make the rule kind: excludes")
        if rule.kind == "excludes" and len(rule.values) != len(rule.fields):
            self.error((*loc, "values"), f"excludes needs one value per field ({len(rule.fields)}), "
                       f"got {len(rule.values)}", "e.g. fields: [state, state_reason], values: [closed, reopened]")
        if rule.normalize is not None and rule.kind != "disjoint":
            self.error((*loc, "normalize"), f"normalize applies to disjoint rules, not {rule.kind}",
                       "remove normalize, or make the rule kind: disjoint")
        if rule.normalize is not None and rule.normalize not in TRANSFORMS:
            guess = closest(rule.normalize, list(TRANSFORMS))
            self.error((*loc, "normalize"), f"unknown transform {rule.normalize!r}",
                       f"did you mean {guess!r}?" if guess else f"transforms: {', '.join(TRANSFORMS)}")
        wanted = {"not_blank": "string", "disjoint": "array"}.get(rule.kind)
        for field in rule.fields if wanted else ():
            p = params.get(field)
            if p is not None and p.type is not None and wanted not in ([p.type] if isinstance(p.type, str) else p.type):
                self.error((*loc, "fields"), f"{rule.kind} needs {wanted} parameters; {field!r} is {p.type}",
                           f"name {wanted} parameters only")
        conditional = rule.kind in ("required_when", "forbidden_when")
        if conditional and trigger(rule)[0] is None:
            self.error((*loc, "when"), f"{rule.kind} needs `when`: a parameter, or {{parameter: value(s)}}",
                       "e.g. when: {event: [REQUEST_CHANGES, COMMENT]}")
        elif isinstance(rule.when, dict) and (not conditional or len(rule.when) != 1):
            self.error((*loc, "when"), f"`when: {{parameter: value}}` applies to required_when and "
                       f"forbidden_when rules with one parameter, not {rule.kind}",
                       "give the parameter's name only, or make the rule kind: required_when")
        elif conditional and trigger(rule)[0] in rule.fields:
            self.error((*loc, "fields"), f"{rule.kind} names its `when` parameter among its fields",
                       "list the parameters the condition requires or forbids")
        if rule.kind == "distinct" and len(rule.fields) < 2:
            self.error((*loc, "fields"), "distinct compares two or more parameters",
                       "e.g. [issue_number, sub_issue_number]")
        if rule.kind == "disjoint" and len(rule.fields) < 2:
            self.error((*loc, "fields"), "disjoint compares two or more list parameters", "e.g. [add_x, remove_x]")

    def build_resolvers(self, tool: ToolDef, loc: tuple[str | int, ...],
                        params: tuple[IRParam, ...]) -> tuple[Resolve, ...] | None:
        """The tool's name-or-id parameters (`resolve:`), or None once their problems are reported."""
        out: list[Resolve] = []
        names = {p.name for p in params}
        schemas = {p.name: p.schema for p in params}
        ok = True
        for k, raw in enumerate(tool.params):
            if raw.resolve is None or raw.name not in names:
                continue
            op = self.lookup_op(raw.resolve.call, (*loc, "params", k, "resolve", "call"))
            made = build_resolve(
                raw, (*loc, "params", k), schema=schemas[raw.name], names=names,
                fill=path_filler(params, raw.resolve.call), op=op,
                operation=runtime_operation(self.build_operation(op)) if op is not None else None,
                items=listing_row(self.doc, op) if op is not None else None, document=self.doc,
                codes=set(self.catalog), error=self.error)
            built = made[0] if made is not None else None
            if made is not None and made[1] is not None:
                self.resolved[(tool.name, raw.name)] = made[1]
            if built is not None and raw.resolve.check is not None:
                built = self.resolve_check(built, raw.resolve.check, (*loc, "params", k, "resolve", "check"), params)
            ok = ok and built is not None
            if built is not None:
                out.append(built)
        return tuple(out) if ok else None

    def resolve_check(self, built: Resolve, check: ResolveCheckDef, loc: tuple[str | int, ...],
                      params: tuple[IRParam, ...]) -> Resolve | None:
        """`resolve.check`: an id read first by one GET, whose not-found answer refuses it."""
        op = self.lookup_op(check.call, (*loc, "call"))
        if op is None:
            return None
        problems = Counted(self.error)
        names = {p.name for p in params}
        if built.each:
            problems.report(loc, f"check reads one id; {built.param!r} is a list",
                            "drop check: a list's ids are sent as given")
        if op.method.upper() != "GET":
            problems.report((*loc, "call"), f"{check.call} is not a read (GET)", "check reads one entry by its id")
        path = bind_path(check.call, check.path, op, loc, path_filler(params, check.call), problems.report)
        for ref in references(dict(check.path)):
            if ref.path[0] not in names:
                problems.report((*loc, "path"), f"template reads {ref.path[0]!r}, not a parameter",
                                f"parameters are: {', '.join(sorted(names))}")
        unknown = error_spec(check.unknown)
        if check.unknown.code is None or check.unknown.code not in self.catalog:
            problems.report((*loc, "unknown", "code"), f"check.unknown needs a declared error code, not "
                            f"{check.unknown.code!r}", "declare it under error_codes (e.g. milestone_not_found)")
        if problems.count or unknown is None:
            return None
        return dataclasses.replace(built, check=runtime_operation(self.build_operation(op)), check_path=path,
                                   check_unknown=unknown)

    def build_operation(self, op: SpecOperation) -> IROperation:
        params = re.findall(r"\{([^}]+)\}", op.path)
        last = params[-1] if params else ""
        # the collection the last path parameter names an item of, wherever the path goes on
        # (Forgejo's /issues/{index}/comments: an issue's)
        collection = re.search(r"/([^/{}]+)/\{" + re.escape(last) + r"\}", op.path) if last else None
        not_found = NOT_FOUND_BY_PARAM.get(last) or (
            "repo_not_found" if last in ("", *REPO_PARAMS)
            else NOT_FOUND_BY_COLLECTION.get(collection.group(1) if collection else "", "not_found"))
        statuses = tuple(sorted(int(s) for s in op.node.get("responses", {})
                                if s.isdigit() and 200 <= int(s) < 300))
        answer, required = answer_contract(self.doc, op)
        return IROperation(
            operation_id=op.operation_id,
            method=op.method.upper(),
            path=op.path,
            not_found=not_found,
            success_status=statuses,
            summary=str(op.node.get("summary", "")),
            deprecated=bool(op.node.get("deprecated", False)),
            multi_segment=tuple(p["name"] for raw in [*op.path_item.get("parameters", []),
                                                      *op.node.get("parameters", [])]
                                if (p := resolve_ref(self.doc, raw)).get("in") == "path"
                                and p.get("x-multi-segment")),
            answer=answer,
            required=required,
        )

    def spec_param(self, tool: ToolDef, source: str, loc: tuple[str | int, ...]) -> JSON | None:
        match = re.fullmatch(r"([\w\-/]+)#(path|query|body)\.([\w\-\[\]]+)", source)
        if not match:
            self.error(loc, f"cannot parse parameter source {source!r}",
                       "write <operationId>#<path|query|body>.<name>, e.g. issues/get#path.issue_number")
            return None
        op_id, where, name = match.groups()
        if op_id not in tool_operations(tool):
            self.error(loc, f"parameter source {op_id!r} is not one of this tool's operations",
                       f"call it in a step (or list it in operations), or use one of {tool_operations(tool)}")
            return None
        op = self.ops.get(op_id)
        if op is None:
            return None
        if where == "body":
            candidates = {}
            for branch in object_branches(self.doc, request_body_schema(self.doc, op)):
                candidates.update(branch.get("properties", {}))
        else:
            candidates = {}
            for raw in [*op.path_item.get("parameters", []), *op.node.get("parameters", [])]:
                param = resolve_ref(self.doc, raw)
                if param.get("in") == where:
                    candidates[param["name"]] = param.get("schema", {})
        if name not in candidates:
            guess = closest(name, list(candidates))
            self.error(loc, f"parameter mapped to nothing: {op_id} has no {where} field {name!r}",
                       f"did you mean {guess!r}?" if guess else
                       f"{where} fields are: {', '.join(sorted(candidates)) or 'none'}")
            return None
        return resolve_ref(self.doc, candidates[name])

    def build_param(self, tool: ToolDef, p: ParamDef, loc: tuple[str | int, ...]) -> IRParam | None:
        spec_node = self.spec_param(tool, p.source, (*loc, "from")) if p.source else None
        if p.source and spec_node is None:
            return None
        base = compact(self.doc, spec_node) if spec_node is not None and not is_union(spec_node) else {}
        kind = p.type or base.get("type")
        if kind is None:
            self.error((*loc, "type"), f"parameter {p.name!r} needs an explicit type",
                       "the spec type is a union or absent; set `type:`")
            return None
        kinds = list(kind) if isinstance(kind, list) else [kind]
        if p.type and base.get("type") and base["type"] not in kinds:
            self.error((*loc, "type"), f"type {p.type!r} contradicts the spec's {base['type']!r}",
                       "use the spec's type, or map the parameter from another field")
        if "array" in kinds and len(kinds) > 1:
            self.error((*loc, "type"), f"parameter {p.name!r} mixes array with other types",
                       "an array parameter has one type")
        schema: JSONObject = {"type": [*kinds, "null"] if p.nullable else kind}
        items = p.items if p.items is not None else base.get("items")
        if kind == "array":
            if items is None:
                self.error((*loc, "items"), f"array parameter {p.name!r} needs `items`")
                return None
            schema["items"] = dict(items)
        enum = p.enum if p.enum is not None else base.get("enum")
        if enum is not None:
            spec_enum = base.get("enum")
            extra = [v for v in enum if spec_enum is not None and v not in spec_enum]
            if extra:
                self.error((*loc, "enum"), f"enum values {extra} are not accepted by GitHub",
                           f"GitHub accepts {spec_enum}")
            schema["enum"] = [*enum, None] if p.nullable else list(enum)
        for key, value in (("pattern", p.pattern), ("format", p.format or base.get("format")),
                           ("minLength", p.min_length), ("maxLength", p.max_length),
                           ("minimum", p.minimum), ("maximum", p.maximum),
                           ("minItems", p.min_items), ("maxItems", p.max_items)):
            if value is not None:
                schema[key] = value
        if p.default is not None:
            schema["default"] = p.default
        assert p.name is not None and p.description is not None  # resolve_shared guarantees both
        parts = [p.description.strip()]
        if not p.required:
            if not p.omitted:
                self.error((*loc, "omitted"), f"optional parameter {p.name!r} must say what omitting it means",
                           "add `omitted: ...` (e.g. 'Omit to search all states.')", "omission")
            else:
                parts.append(p.omitted.strip())
        if p.nullable:
            if not p.null_means:
                self.error((*loc, "null_means"), f"nullable parameter {p.name!r} must say what null means")
            else:
                parts.append(p.null_means.strip())
        if p.clear_with is not None and not p.nullable:
            self.error((*loc, "clear_with"), f"parameter {p.name!r} sends clear_with for null, but does "
                       "not accept null", "add `nullable: true` and `null_means:` (e.g. null clears it)")
        text = " ".join(part for part in parts if part)
        if text:  # an empty description (the name and schema say it all) costs bytes, says nothing
            schema = {"description": text, **schema}
        checks = None if p.advertise_pattern else self.unadvertised(schema, p.name, loc)
        return IRParam(name=p.name, required=p.required, schema=schema,
                       python_type=python_type(schema), source=p.source, transform=p.transform,
                       given=p.given, checks=checks, clear_with=p.clear_with)

    def unadvertised(self, schema: JSONObject, name: str, loc: tuple[str | int, ...]) -> JSONObject | None:
        """`advertise_pattern: false`: the patterns moved out of `schema` (its own, its items'),
        for the server to check (ghmcp_runtime.guards.validation.with_checks puts them back)."""
        checks: JSONObject = {}
        if "pattern" in schema:
            checks["pattern"] = schema.pop("pattern")
        items = schema.get("items")
        if isinstance(items, dict) and "pattern" in items:
            schema["items"] = {k: v for k, v in items.items() if k != "pattern"}
            checks["items"] = {"pattern": items["pattern"]}
        if not checks:
            self.error((*loc, "advertise_pattern"), f"parameter {name!r} has no pattern to keep from the model",
                       "drop advertise_pattern, or give the parameter (or its items) a pattern")
            return None
        return checks

    def build_output(
        self, f: OutputField, shapes: Mapping[str, IRShape], loc: tuple[str | int, ...], variable: bool
    ) -> IROutputField | None:
        self.check_identifier((*loc, "name"), f.name, "output field")
        ref = f.shape or f.items_shape
        if ref is not None and ref not in shapes:
            guess = closest(ref, list(self.o.shapes))
            self.error(loc, f"unknown shape {ref!r}", f"did you mean {guess!r}?" if guess else "")
            return None
        row = self.output_row(f, shapes[ref], loc, variable) if ref is not None else None
        if ref is not None and row is None:
            return None
        if f.local is not None and row is not None:
            row = self.local_row(f, row, loc)
        if f.shape and row is not None:
            schema: JSONObject = row
            py = f"{pascal(f.shape)}Row"
        elif f.items_shape and row is not None:
            schema = {"type": "array", "items": row}
            py = f"list[{pascal(f.items_shape)}Row]"
        elif f.type:
            schema = {"type": [f.type, "null"] if f.nullable else f.type}
            if f.items:
                schema["items"] = dict(f.items)
            py = python_type(schema)
        else:
            self.error(loc, f"output field {f.name!r} needs `type`, `shape` or `items_shape`")
            return None
        if f.description:
            schema = {"description": f.description.strip(), **schema}
        return IROutputField(name=f.name, required=not f.optional, schema=schema, python_type=py)

    def local_row(self, f: OutputField, row: JSONObject, loc: tuple[str | int, ...]) -> JSONObject:
        """A row schema whose `local` fields are null on a row of another repository."""
        assert f.local is not None
        properties = dict(row["properties"])
        for j, name in enumerate(f.local.fields):
            if name not in properties:
                self.error((*loc, "local", "fields", j), f"{name!r} is not a field of these rows",
                           f"fields: {', '.join(properties)}")
                continue
            properties[name] = {**with_null(properties[name]),
                                "description": LOCAL_NOTE}
        return {**row, "properties": properties}

    def output_row(self, f: OutputField, shape: IRShape, loc: tuple[str | int, ...],
                   variable: bool) -> JSONObject | None:
        """The schema of the rows an output carries: its density (fixed, or the `detail`
        parameter's), `include` and `omit` checked against the shape."""
        fields = {x.name: x for x in shape.fields}
        before = len(self.problems)
        for key in ("include", "omit"):
            for j, name in enumerate(getattr(f, key)):
                if name not in fields:
                    guess = closest(name, list(fields))
                    self.error((*loc, key, j), f"{name!r} is not a field of shape {shape.name!r}",
                               f"did you mean {guess!r}?" if guess else f"fields: {', '.join(fields)}")
                elif key == "include" and fields[name].detail != "full":
                    self.error((*loc, key, j), f"{name!r} is a summary field: every row has it",
                               "include adds full-density fields to summary rows")
        if f.include and f.detail != "summary":
            self.error((*loc, "include"), f"output {f.name!r} includes fields but is not summary rows",
                       "set `detail: summary` (include adds full-density fields to summary rows)")
        if len(self.problems) > before:
            return None
        density = f.detail or (None if variable else "full")
        return row_schema(shape.fields, density, tuple(f.include), tuple(f.omit), shape.added)

    def check_annotations(self, tool: ToolDef, loc: tuple[str | int, ...]) -> None:
        a = tool.annotations
        aloc = (*loc, "annotations")
        if a.read_only and (a.destructive is not None or a.idempotent is not None):
            self.error(aloc, f"read-only tool {tool.name} must not set destructive/idempotent",
                       "read-only tools omit destructive and idempotent (spec defaults do not apply)",
                       "annotations")
        if not a.read_only and (a.destructive is None or a.idempotent is None):
            self.error(aloc, f"mutating tool {tool.name} must decide destructive and idempotent explicitly",
                       "set destructive: true|false and idempotent: true|false", "annotations")

    def check_confirm(self, tool: ToolDef, loc: tuple[str | int, ...]) -> None:
        """The annotations and a confirmation agree: only a destructive tool asks."""
        a = tool.annotations
        confirm = ("confirm",) if tool.confirm else ("batch", "confirm") if tool.batch and tool.batch.confirm else None
        if confirm is not None and a.destructive is not True:
            self.error((*loc, *confirm), f"{tool.name} asks the user to confirm, but its annotations say "
                       f"it is {'read-only' if a.read_only else 'not destructive'}",
                       "a confirmation is for a write that cannot be undone (a delete, a merge): mark the "
                       "tool `destructive: true`, or drop `confirm`", "confirm-destructive")

    def check_tool_names(self) -> None:
        seen: dict[str, int] = {}
        prefix = self.o.server.tool_prefix
        for i, tool in enumerate(self.o.tools):
            loc = ("tools", i, "name")
            norm = tool.name.lower().replace("-", "_")
            if norm in seen:
                self.error(loc, f"duplicate tool name {tool.name!r} (also tools[{seen[norm]}])",
                           "tool names must be unique", "names")
            seen.setdefault(norm, i)
            if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", tool.name) or len(tool.name) > 64:
                self.error(loc, f"tool name {tool.name!r} is not snake_case verb_noun within 64 chars",
                           "e.g. github_list_labels", "names")
            elif not tool.name.startswith(prefix):
                self.error(loc, f"tool name {tool.name!r} lacks the service prefix {prefix!r}",
                           f"rename it to {prefix}{tool.name}", "names")

    def check_toolsets(self) -> None:
        declared = self.o.toolsets
        for reserved, meaning in (("all", "every toolset"), ("default", "a forge server's default toolsets")):
            if reserved in declared:
                self.error(("toolsets", reserved), f"toolset name {reserved!r} is reserved (it selects "
                           f"{meaning})", "pick another name", "toolsets")
        for i, tool in enumerate(self.o.tools):
            if tool.toolset is None and declared:
                self.error(("tools", i, "name"), f"tool {tool.name!r} names no toolset",
                           f"add `toolset:` with one of {', '.join(declared)}", "toolsets")
            elif tool.toolset is not None and tool.toolset not in declared:
                guess = closest(tool.toolset, list(declared))
                self.error(("tools", i, "toolset"),
                           f"tool {tool.name!r} names toolset {tool.toolset!r}, which `toolsets` does not declare",
                           f"did you mean {guess!r}?" if guess else
                           "declare it under the top-level `toolsets` (name: what its tools do)", "toolsets")
        used = {t.toolset for t in self.o.tools}
        for name in declared:
            if name not in used:
                self.error(("toolsets", name), f"toolset {name!r} has no tool",
                           "name it in a tool's `toolset:`, or remove it", "toolsets")

    def implied_codes(self, ops: list[IROperation], params: tuple[IRParam, ...]) -> set[str]:
        """The codes the runtime's mapping of the operations' failures, and its argument checks,
        can give the tool (before the server-wide rules)."""
        codes = set(ALWAYS_CODES)
        for op in ops:
            codes.add(op.not_found)
            if "/repos/{owner}/{repo}" in op.path:
                codes.add("repo_not_found")
            if "/orgs/{org}" in op.path:
                codes.add("org_not_found")
            if op.method != "GET":
                codes.add("conflict")
                if "{issue_number}" in op.path:
                    codes.add("issue_locked")
        names = {p.name for p in params}
        if any(n.endswith("cursor") for n in names):
            codes.add("cursor_expired")
        return codes

    def build_error_codes(self, tools: list[IRTool]) -> tuple[IRErrorCode, ...]:
        out = []
        for code, d in sorted(self.catalog.items()):
            users = tuple(sorted(t.name for t in tools if code in t.error_codes))
            if not users and code not in self.o.error_codes:
                continue  # a built-in code no tool can emit stays out of the catalog
            out.append(IRErrorCode(code=code, temporary=d.temporary, description=d.description.strip(),
                                   repair=d.repair.strip(), tools=users))
            if not users and len(tools) == len(self.o.tools):  # (a tool that failed to build says nothing)
                self.warn(("error_codes", code), f"error code {code!r} is used by no tool")
        return tuple(out)  # repair targets are checked, with locations, by the linter


def trigger(rule: Rule) -> tuple[str | None, tuple[bool | int | str, ...]]:
    """A rule's `when`: the parameter, and the values of it that trigger the rule (empty: any)."""
    if isinstance(rule.when, dict) and len(rule.when) == 1:
        (name, value), = rule.when.items()
        return str(name), tuple(value) if isinstance(value, list) else (value,)
    return (rule.when if isinstance(rule.when, str) else None), ()


def runtime_operation(op: IROperation) -> Operation:
    return Operation(operation_id=op.operation_id, method=op.method, path=op.path,
                     not_found=op.not_found, success_status=op.success_status,
                     multi_segment=op.multi_segment,
                     answer=op.answer, required=op.required)


def echo_safe(param: IRParam) -> bool:
    """May this parameter's value appear in an error? Identifiers, enums, numbers, cursors: yes;
    free-form text (titles, bodies, queries, label names, logins): never."""
    if param.name in ("owner", "repo") or param.name.endswith("cursor") or "enum" in param.schema:
        return True
    kinds = schema_types(param.schema)
    return bool(kinds) and kinds <= {"integer", "boolean", "null"}


def added_fields(fields: tuple[IRField, ...],
                 lockdown: LockdownRule | None) -> tuple[tuple[str, JSONObject], ...]:
    """Row fields the runtime adds, present only when they say something: the count of hidden
    pieces removed from untrusted text, why lockdown withheld the author's text, and why a
    preview is empty. What they mean is said once, in the capability summary (field_notes.py),
    not in every outputSchema."""
    def untrusted(fs: tuple[IRField, ...]) -> bool:
        return any(f.untrusted or untrusted(f.nested) for f in fs)

    added: list[tuple[str, JSONObject]] = []
    if untrusted(fields):
        added.append((HIDDEN_FIELD, {"type": "integer", "minimum": 1}))
    if lockdown is not None:
        added.append((WITHHELD_FIELD, {"type": "string", "enum": list(WITHHELD_REASONS)}))
    if any(f.transform == "preview" for f in fields):
        added.append((PREVIEW_EMPTY_FIELD, {"type": "string", "enum": list(PREVIEW_EMPTY_REASONS)}))
    return tuple(added)


def _rows(schema: JSONObject) -> bool:
    """An output field holding rows (objects): rows from a repository outside --repos are
    left out of it."""
    return schema.get("type") == "array" and schema.get("items", {}).get("type") == "object"


LOCAL_NOTE = "null on an issue of another repository (see repository): the number would name another issue here."


def row_schema(fields: tuple[IRField, ...], density: str | None = None,
               include: tuple[str, ...] = (), omit: tuple[str, ...] = (),
               added: tuple[tuple[str, JSONObject], ...] = ()) -> JSONObject:
    """One row under the presence rule: every field of the row's density is always present (null
    when GitHub has no value, [] for an empty list); the fields the runtime `added` only when
    they say something.
    `density` None: the `detail` parameter chooses it, so the full-density fields are the
    optional ones, said once in the description."""
    chosen = [f for f in fields if f.name not in omit
              and (density != "summary" or f.detail == "summary" or f.name in include)]
    if not any(f.transform == "preview" for f in chosen):  # no preview here: nothing to explain
        added = tuple((name, schema) for name, schema in added if name != PREVIEW_EMPTY_FIELD)
    required = [f.name for f in chosen
                if density is not None or f.detail == "summary" or f.name in include]
    schema: JSONObject = {
        "type": "object",
        "additionalProperties": False,
        "properties": {**{f.name: f.schema for f in chosen}, **dict(added)},
        "required": required,
    }
    return {"description": DENSITY_NOTE, **schema} if len(required) < len(chosen) else schema


def with_null(schema: JSONObject) -> JSONObject:
    """`schema` that also accepts null."""
    kind = schema.get("type")
    kinds = list(kind) if isinstance(kind, list) else [kind] if kind else []
    out = dict(schema)
    if kinds and "null" not in kinds:
        out["type"] = [*kinds, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def const_name(operation_id: str) -> str:
    """The Python constant naming an operation in the generated operations module."""
    # issues/get-label -> ISSUES_GET_LABEL; a camelCase id (Forgejo's issueGetLabel) -> ISSUE_GET_LABEL
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", operation_id)
    return re.sub(r"[^0-9a-zA-Z]+", "_", words).upper()


def pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def resolve_codes(resolve: tuple[Resolve, ...]) -> set[str]:
    """The codes name-or-id parameters can answer: an unknown name, an id not found."""
    return {code for r in resolve for code in (r.unknown.code, r.check_unknown.code if r.check_unknown else None)
            if code}
