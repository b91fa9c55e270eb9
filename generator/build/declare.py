"""A tool's `steps` + `output` in the override file → a runtime `Declaration`, checked against the spec.

Every binding is resolved here, so the generated declaration says exactly what each request
carries: path parameters (explicit, a parameter mapped with `from: op#path.x`, or a parameter of the
same name), query and body fields (explicit, or mapped with `from:`). Dependencies (`after`) are
derived: a step waits for the steps its templates read; a write waits for every earlier step, and
every later step waits for an earlier write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.base.diagnostics import closest
from generator.build.ir import IRParam, IRShape
from generator.build.recipe_base import (
    Loc,
    Report,
    bind_path,
    path_filler,
    path_names,
    spec_fields,
    split_path,
)
from generator.build.update_plan import Context, build_update, update_codes
from generator.language.overrides import (
    AbsentDef,
    ErrorDef,
    MatchDef,
    NamesExistDef,
    OnErrorDef,
    OutputField,
    RecoverDef,
    RepairDef,
    StepCondition,
    StepDef,
    ToolDef,
    VersionDef,
)
from generator.spec.answers import (
    Answer,
    documented,
    is_array,
    lacks,
    names_answer,
    near,
    one_row,
    rows,
)
from generator.spec.pinned import (
    SpecOperation,
    listing_row,
    request_body_schema,
    resolve_ref,
    success_schema,
)
from generator.spec.schemas import (
    accepted_types,
    compact,
    is_required,
    object_branches,
    schema_types,
    walk,
)
from ghmcp_runtime.core.declared import (
    Absent,
    Compare,
    Condition,
    Declaration,
    ErrorSpec,
    Guard,
    Idempotency,
    Local,
    Match,
    NamesExist,
    OnError,
    Output,
    Paginate,
    Recover,
    Reject,
    Repair,
    Settle,
    Step,
    Stored,
    Verify,
)
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.core.refs import Ref, parse, references
from ghmcp_runtime.core.transforms import TRANSFORMS
from ghmcp_runtime.engine.outcomes import RESPONSE
from ghmcp_runtime.engine.recovery import FIND_CREATED_CODES
from ghmcp_runtime.engine.stored import ALTERED, STORED


class _Invalid:
    """A declaration part that was reported wrong (distinct from absent)."""


INVALID = _Invalid()


READ_METHODS = frozenset({"GET", "HEAD"})
RECIPE_VALUES = frozenset({"count", "next_page", "page_size"})
RESERVED = RECIPE_VALUES | {RESPONSE}  # names templates read before parameters and steps


def step_id(operation_id: str) -> str:
    """Default step id: the operation's name in snake_case (issues/get-label -> get_label)."""
    return re.sub(r"[^0-9a-z]+", "_", operation_id.split("/")[-1].lower()).strip("_")


def required_fields(document: Any, op: SpecOperation, where: str) -> list[str]:
    """The query parameters or JSON body properties an operation requires, by name."""
    if where == "body":
        schema = request_body_schema(document, op)
        return sorted({name for branch in object_branches(document, schema)
                       for name in branch.get("properties", {}) if is_required(document, schema, name)})
    return sorted(name for raw in [*op.path_item.get("parameters", []), *op.node.get("parameters", [])]
                  if (param := resolve_ref(document, raw)).get("in") == where and param.get("required")
                  for name in [param["name"]])


def body_required(document: Any, op: SpecOperation) -> bool:
    return bool(resolve_ref(document, op.node.get("requestBody", {})).get("required"))


def error_spec(spec: ErrorDef | None) -> ErrorSpec | None:
    if spec is None:
        return None
    return ErrorSpec(code=spec.code, message=_text(spec.message), field=spec.field,
                     reason=_text(spec.reason), repair=_repair(spec.repair), details=dict(spec.details))


def _repair(r: RepairDef | None) -> Repair | None:
    if r is None:
        return None
    return Repair(next_step=r.next_step, tool=r.tool, arguments=dict(r.arguments),
                  alternative=_text(r.alternative), toolset=r.toolset)


def _text(value: str | None) -> str | None:
    return value.strip() if isinstance(value, str) else value


def condition(raw: Any, negate: bool = False) -> Condition:
    """A parameter condition: a name (present), or {name: value}."""
    if isinstance(raw, str):
        return Condition(param=raw, present=not negate)
    (param, value), = raw.items()
    return Condition(param=param, equals=value, present=not negate)


def match_of(when: MatchDef, loc: Loc, error: Report) -> Match:
    """The runtime `Match` of an on_error `when:`; a regular expression that does not compile is
    reported."""
    if when.message_matches is not None:
        try:
            re.compile(when.message_matches)
        except re.error as exc:
            error((*loc, "message_matches"), f"message_matches is not a regular expression: {exc}",
                  "write a Python regular expression, e.g. '(?i)must have push access'", "error-match")
    return Match(status=when.status, github_code=when.github_code, code=when.code, field=when.field,
                 message_contains=when.message_contains, message_matches=when.message_matches,
                 method=tuple(when.method))


@dataclass(slots=True)
class DeclarationBuilder:
    tool: ToolDef
    loc: Loc
    params: Sequence[IRParam]
    ops: Mapping[str, SpecOperation]
    runtime_ops: Mapping[str, Operation]
    document: Any
    codes: set[str]  # every error code known to the catalog
    error: Report
    versioned: frozenset[str] = frozenset()  # shapes that declare a content version
    shapes: Mapping[str, IRShape] = field(default_factory=dict)
    repairs: list[tuple[Loc, Repair]] = field(default_factory=list)  # for the repair lint rules
    totals: bool = False  # the forge reports a listing's total (guard.total can count it)
    answers: dict[str, list[Answer]] = field(default_factory=dict)  # what each step's result can be
    resolved: Mapping[str, str] = field(default_factory=dict)  # `resolve:` parameter -> its id's JSON type
    broken: set[str] = field(default_factory=set)  # steps declared but not built (their problems reported)

    def note_repair(self, loc: Loc, spec: ErrorDef | RecoverDef | NamesExistDef | VersionDef | None) -> None:
        built = _repair(spec.repair) if spec is not None else None
        if built is not None:
            self.repairs.append(((*loc, "repair"), built))
        if isinstance(spec, ErrorDef):
            self.check_details(loc, spec)

    def check_details(self, loc: Loc, spec: ErrorDef) -> None:
        """An error's details never echo free-form text a caller sent (titles, bodies, names):
        a parameter read there is an identifier, a number, a boolean or an enum member."""
        params = {p.name: p for p in self.params}
        for name, template in spec.details.items():
            for ref in references(template):
                param = params.get(ref.path[0])
                if param is None or ref.path[0] in ("owner", "repo") or "enum" in param.schema:
                    continue
                if not (kinds := schema_types(param.schema)) or not kinds <= {"integer", "boolean", "null"}:
                    self.error((*loc, "details", name), f"details.{name} would echo the parameter "
                               f"{ref.path[0]!r}, free-form text the caller sent",
                               "name the parameter in `field` instead; details carry identifiers, "
                               "numbers and what the forge answered")

    def build(self) -> tuple[Declaration, dict[str, str], set[str]] | None:
        """The declaration, the GitHub body field -> parameter map, and the codes it can raise."""
        assert self.tool.steps is not None
        names = {p.name for p in self.params}
        for k, raw_param in enumerate(self.tool.params):
            if raw_param.name == RESPONSE:
                self.error((*self.loc, "params", k, "name"), f"{RESPONSE!r} is a reserved template name",
                           f"templates read {{{RESPONSE}.<step>.status}}; rename the parameter")
        steps: list[Step] = []
        field_map: dict[str, str] = {}
        raised: set[str] = set()
        seen: dict[str, int] = {}
        for k, raw in enumerate(self.tool.steps):
            sloc = (*self.loc, "steps", k)
            built = self.step(raw, sloc, steps, names, seen)
            if built is None:
                continue
            steps.append(built)
            self.answers[built.id] = self.step_answers(built)
            self.recipe_paths(raw, built, sloc)
            for key, value in built.body.items():
                ref = _whole_param(value, names)
                if ref is not None and ref != key:
                    field_map[key] = ref
                elif ref is not None:
                    field_map.setdefault(key, ref)
            raised |= _codes_of(raw)
        if self.tool.idempotency is not None and self.tool.idempotency.recover is not None:
            raised |= FIND_CREATED_CODES | {"upstream_unavailable"}
        # steps declared but reported wrong: what reads one says nothing more (no cascade)
        self.broken = {r.id or step_id(r.call) for r in self.tool.steps} - {s.id for s in steps}
        output = self.outputs(steps, names)
        idempotency = self.idempotency(steps, names)
        if output is None or len(steps) != len(self.tool.steps) or idempotency is INVALID:
            return None
        assert not isinstance(idempotency, _Invalid)
        defaults = {p.name: p.schema["default"] for p in self.params if "default" in p.schema}
        transforms = {p.name: p.transform for p in self.params if p.transform}
        for p in self.params:
            if p.transform and p.transform not in TRANSFORMS:
                index = next(i for i, raw in enumerate(self.tool.params) if raw.name == p.name)
                guess = closest(p.transform, list(TRANSFORMS))
                self.error((*self.loc, "params", index, "transform"), f"unknown transform {p.transform!r}",
                           f"did you mean {guess!r}?" if guess else f"transforms: {', '.join(TRANSFORMS)}")
        detail = "detail" if "detail" in names else None
        for code in sorted(raised - self.codes):
            self.error((*self.loc, "steps"), f"steps raise {code!r}, which is not an error code",
                       "declare it under error_codes (with description and repair)")
        return (Declaration(steps=tuple(steps), output=output, defaults=defaults,
                            transforms=transforms, detail=detail, idempotency=idempotency),
                field_map, raised)

    def idempotency(self, steps: list[Step], names: set[str]) -> Idempotency | _Invalid | None:
        """The declared idempotency (None when absent, INVALID when it is wrong)."""
        idem = self.tool.idempotency
        if idem is None:
            return None
        loc = (*self.loc, "idempotency")
        ok = True
        for key, value in [("key", idem.key), *[("scope", p) for p in idem.scope]]:
            if value not in names:
                self.error((*loc, key), f"idempotency names unknown parameter {value!r}",
                           f"parameters are: {', '.join(sorted(names))}")
                ok = False
        write = next((s for s in steps if s.id == idem.write), None)
        if idem.write in self.broken:
            ok = False
        elif write is None or write.operation.method in READ_METHODS:
            self.error((*loc, "write"), f"idempotency.write {idem.write!r} is not a write step",
                       f"steps: {', '.join(s.id for s in steps)}")
            ok = False
        recover = None
        if idem.recover is not None:
            r = idem.recover
            op = self.ops.get(r.call)
            if op is None or r.call not in self.runtime_ops:
                self.error((*loc, "recover", "call"), f"unknown operationId {r.call!r}", "")
                return INVALID
            path = self.bind_path(r, op, (*loc, "recover"), names)
            query = self.bind(r, op, "query", r.query, (*loc, "recover"))
            accepted = spec_fields(self.document, op, "query")
            for key in ("author_param", "since_param"):
                value = getattr(r, key)
                if value is not None and value not in accepted:
                    self.error((*loc, "recover", key), f"{r.call} has no query parameter {value!r}",
                               f"query parameters: {', '.join(sorted(accepted)) or 'none'}"
                               + ("; use since_param: null" if key == "since_param" else ""))
            self.recover_rows(r, op, write, (*loc, "recover"))
            templates = [((*loc, "recover"), path), ((*loc, "recover", "query"), query),
                         ((*loc, "recover", "match"), dict(r.match))]
            if r.repair is not None:
                templates.append(((*loc, "recover", "repair"), dict(r.repair.arguments)))
            self.note_repair((*loc, "recover"), r)
            for tloc, template in templates:
                self.check_refs(template, tloc, names, set())
            recover = Recover(operation=self.runtime_ops[r.call], path=path, query=query,
                              match=dict(r.match), newest_first=r.newest_first,
                              author_param=r.author_param, author_field=r.author_field,
                              since_param=r.since_param, repair=_repair(r.repair),
                              created_field=r.created_field)
        if not ok:
            return INVALID
        return Idempotency(key=idem.key, write=idem.write, scope=tuple(idem.scope), recover=recover)

    def recover_rows(self, r: RecoverDef, op: SpecOperation, write: Step | None, loc: Loc) -> None:
        """Recovery looks for the row a lost create made: the write is a create (a row another
        write changed would be taken for it), and the listing's rows carry the matched fields,
        the author and an `id` (claimed, so no other call adopts it)."""
        if write is not None and write.operation.method != "POST":
            self.error((*loc, "call"), f"recovery finds a row a create made, but {write.operation.operation_id} "
                       f"is a {write.operation.method}", "drop `recover` (a repeated "
                       f"{write.operation.method} finds the same resource), or point `write` at the create",
                       "recover-write")
        listing = [rows(self.document, a, None) for a in documented(self.document, op)]
        if not listing or any(a.schema is None or a.schema.get("type") == "array" for a in listing):
            self.error((*loc, "call"), f"{r.call} does not list rows", "name the listing the created "
                       "row appears in (e.g. issues/list-for-repo)", "recover-write")
            return
        wanted = [((*loc, "match", key), key) for key in r.match]
        wanted += [((*loc, "author_field"), f"{r.author_field}.login"), ((*loc, "call"), "id"),
                   ((*loc, "created_field"), r.created_field)]
        for where, dotted in wanted:
            missing = lacks(self.document, listing, split_path(dotted))
            if missing:
                self.error(where, f"{dotted!r} is not a field of {r.call}'s rows",
                           "recovery compares what the write sent with the listing's rows, by their "
                           "author's login and when they were made (created_field, default "
                           "created_at), and claims the row by its id", "recover-write")

    # -- one step ---------------------------------------------------------------------------

    def step(self, raw: StepDef, loc: Loc, earlier: list[Step], names: set[str],
             seen: dict[str, int]) -> Step | None:
        op = self.ops.get(raw.call)
        if op is None:
            return None  # reported with the coverage check
        sid = raw.id or step_id(raw.call)
        if sid in seen:
            self.error((*loc, "id"), f"two steps are named {sid!r}", "give one of them another `id`")
        if sid in names or sid in RESERVED:
            self.error((*loc, "id"), f"step id {sid!r} is also a parameter name"
                       + (" (or a reserved template name)" if sid in RESERVED else ""),
                       "give the step another `id`; templates could not tell them apart")
        seen[sid] = len(seen)
        known = {s.id for s in earlier}
        path = self.bind_path(raw, op, loc, names)
        query = self.bind(raw, op, "query", raw.query, loc)
        body = self.bind(raw, op, "body", raw.body, loc)
        conditions: list[Condition] = []
        for key, negate, value in (("when", False, raw.when), ("unless", True, raw.unless)):
            listed = value if isinstance(value, list) else [] if value is None else [value]
            for k, item in enumerate(listed):
                cloc = (*loc, key, k) if isinstance(value, list) else (*loc, key)
                cond = self.condition(item, negate, cloc, names, known)
                if cond is not None:
                    conditions.append(cond)
        for key in raw.join:
            if key not in query:
                self.error((*loc, "join", key), f"join names {key!r}, which is not a query field of this step",
                           f"query fields: {', '.join(sorted(query)) or 'none'}")
        templates: list[tuple[Loc, Any]] = [((*loc, "path"), path), ((*loc, "query"), query),
                                            ((*loc, "body"), body)]
        on_error = []
        for j, rule in enumerate(raw.on_error):
            self.note_repair((*loc, "on_error", j), rule)
            on_error.append(OnError(when=match_of(rule.when, (*loc, "on_error", j, "when"), self.error),
                                    error=error_spec(rule) or ErrorSpec(), skip=rule.skip))
            templates.append(((*loc, "on_error", j), _error_templates(rule)))
        reject = [Reject(present=r.present, error=error_spec(r) or ErrorSpec()) for r in raw.reject]
        for j, r in enumerate(raw.reject):
            self.note_repair((*loc, "reject", j), r)
        if raw.reject and raw.call in self.ops:  # a refusal may read the answer it refuses
            self.answers.setdefault(sid, documented(self.document, self.ops[raw.call]))
            for j, r in enumerate(raw.reject):
                self.check_refs(_error_templates(r), (*loc, "reject", j), names, known | {sid})
        paginate = self.paginate(raw, loc, names)
        compare = self.compare(raw, loc, known, body)
        names_exist = self.names_exist(raw, loc, names)
        absent = self.absent(raw, loc, op)
        verify = self.verify(raw, loc, body)
        stored = self.stored(raw, loc, body)
        settle = self.settle(raw, loc, names, earlier, body)
        guard = self.guard(raw, loc, names)
        update = None
        if raw.update is not None:
            plan_context = Context(params={p.name: p for p in self.params}, ops=self.ops,
                                   runtime_ops=self.runtime_ops, document=self.document, earlier=earlier,
                                   versioned=self.versioned, codes=self.codes, resolved=self.resolved)
            update = build_update(raw, loc, body, self.runtime_ops[raw.call], plan_context, self.error)
            if update is None:
                return None
            if raw.update.version is not None:
                self.note_repair((*loc, "update", "version"), raw.update.version)
            templates.append(((*loc, "update", "version", "repair"),
                              dict(raw.update.version.repair.arguments) if raw.update.version and
                              raw.update.version.repair else {}))
        if raw.guard is not None:
            for key in ("refuse", "unknown"):
                templates.append(((*loc, "guard", key), _error_templates(getattr(raw.guard, key))))
        if raw.absent is not None:
            templates += [((*loc, "absent", "match"), dict(raw.absent.match)),
                          ((*loc, "absent", "other_than"), dict(raw.absent.other_than)),
                          ((*loc, "absent", "refuse"), _error_templates(raw.absent.refuse))]
        self.required_bound(raw, op, loc, query, body, conditions)
        self.error_fields(raw, loc, names)
        self.body_types(raw, op, body, loc, known)
        self.path_types(raw, op, path, loc)
        self.resolved_into_text(raw, op, query, loc)
        null_as = self.null_as(raw, op, body)
        reads: set[str] = set()
        for tloc, template in templates:
            reads |= self.check_refs(template, tloc, names, known, allow_count="guard" in tloc)
        if compare is not None:
            reads.add(compare.against)
        reads |= {c.step for c in conditions if c.step is not None}
        operation = self.runtime_ops[raw.call]
        after = set(reads & known)
        if operation.method not in READ_METHODS:
            after |= known
        after |= {s.id for s in earlier if s.operation.method not in READ_METHODS}
        return Step(id=sid, operation=operation, path=path, query=query, body=body,
                    when=tuple(conditions), after=tuple(s.id for s in earlier if s.id in after),
                    on_error=tuple(on_error), reject=tuple(reject), paginate=paginate,
                    compare=compare, guard=guard, names_exist=names_exist, absent=absent,
                    verify=verify, settle=settle, stored=stored, update=update, null_as=null_as,
                    join=dict(raw.join))

    def param_types(self, name: str, items: bool = False) -> set[str]:
        """The JSON types parameter `name` (or one of its items) has when it reaches a request:
        its schema's, with the names a `resolve:` parameter holds turned into ids."""
        param = next(p for p in self.params if p.name == name)
        schema = param.schema.get("items", {}) if items else param.schema
        kinds = schema_types(schema) - {"null"} if isinstance(schema, Mapping) else set()
        if name in self.resolved and (items or "array" not in kinds):
            kinds = (kinds - {"string"}) | {self.resolved[name]}
        return kinds

    def param_loc(self, name: str, key: str) -> Loc:
        """Where parameter `name`'s `key` is written in this tool (its entry when it is not)."""
        index = next(i for i, raw in enumerate(self.tool.params) if raw.name == name)
        return (*self.loc, "params", index, key)

    def path_types(self, raw: StepDef, op: SpecOperation, path: Mapping[str, Any], loc: Loc) -> None:
        """A path parameter filled by one parameter gets a value of the type the operation takes
        there: names into Forgejo's integer `{id}` would be sent as `labels/bug` and refused at
        run time, so generation refuses them (rule binding-paths)."""
        accepted = spec_fields(self.document, op, "path")
        names = {p.name for p in self.params}
        for key, template in path.items():
            ref = _whole(template)
            if ref is None or ref.filters or len(ref.path) != 1 or ref.path[0] not in names:
                continue
            if next(p for p in self.params if p.name == ref.path[0]).transform:
                continue
            target, given = accepted_types(self.document, accepted.get(key, {})), self.param_types(ref.path[0])
            if target and given and not given & target:
                where = (*loc, "path", key) if key in raw.path else self.param_loc(ref.path[0], "from")
                self.error(where, f"{raw.call} takes path parameter {key!r} as {'/'.join(sorted(target))}, "
                           f"but {template!r} gives {'/'.join(sorted(given))}",
                           "resolve names to ids (`resolve:` on the parameter), or bind a parameter of "
                           "the type the path takes", "binding-paths")

    def resolved_into_text(self, raw: StepDef, op: SpecOperation, query: Mapping[str, Any], loc: Loc) -> None:
        """A `resolve:` parameter sends an id; a query field that takes text reads it as text
        (Forgejo's `milestones` filter tries names first: a milestone titled "5" wins over id 5)."""
        accepted = spec_fields(self.document, op, "query")
        for key, template in query.items():
            ref = _whole(template)
            if ref is None or ref.filters or len(ref.path) != 1 or ref.path[0] not in self.resolved:
                continue
            target = accepted_types(self.document, accepted.get(key, {}))
            given = self.param_types(ref.path[0], items="array" in self.param_types(ref.path[0]))
            if target and not (given - {"array"}) & target:
                self.error((*loc, "query", key) if key in raw.query else self.param_loc(ref.path[0], "resolve"),
                           f"{raw.call} takes query field {key!r} as text, but {ref.path[0]!r} resolves names "
                           f"to ids ({'/'.join(sorted(given - {'array'}))}), which the forge reads as text again",
                           f"send the name itself: bind a parameter without `resolve:` to {key} "
                           "(the forge matches names there)", "binding-paths")

    def null_as(self, raw: StepDef, op: SpecOperation, body: Mapping[str, Any]) -> dict[str, Any]:
        """Body fields whose parameter sends a sentinel for null (`clear_with`), checked against
        the type the operation takes there."""
        accepted = spec_fields(self.document, op, "body")
        out: dict[str, Any] = {}
        params = {p.name: p for p in self.params}
        for key, template in body.items():
            name = _whole_ref(template)
            param = params.get(name) if name is not None else None
            if param is None or param.clear_with is None:
                continue
            target = accepted_types(self.document, accepted.get(key, {}))
            given = schema_types({"type": _json_type(param.clear_with)})
            if target and not given & target:
                self.error(self.param_loc(param.name, "clear_with"),
                           f"{raw.call} takes body field {key!r} as {'/'.join(sorted(target))}, but clear_with "
                           f"sends {'/'.join(sorted(given))}", "send the value the forge clears with there",
                           "binding-paths")
            out[key] = param.clear_with
        return out

    def body_types(self, raw: StepDef, op: SpecOperation, body: Mapping[str, Any], loc: Loc,
                   known: set[str]) -> None:
        """A body field filled by one reference gets a value of a type the operation accepts
        there: a parameter's (without a transform, which may change it) or an earlier step's
        answer at that path; text around references makes a string."""
        accepted = spec_fields(self.document, op, "body")
        params = {p.name: p for p in self.params}
        for key, template in body.items():
            target = schema_types(compact(self.document, accepted[key])) if key in accepted else set()
            if not target or not isinstance(template, str):
                continue
            ref = _whole(template)
            if ref is None:
                given = {"string"} if references(template) else set()
            elif ref.filters:
                continue
            elif ref.path[0] in params and len(ref.path) == 1 and not params[ref.path[0]].transform:
                given = self.param_types(ref.path[0])
                if given == {"array"} and "array" in target:  # a list: its members' types
                    items = resolve_ref(self.document, accepted[key]).get("items")
                    target = accepted_types(self.document, items) if items is not None else set()
                    given = self.param_types(ref.path[0], items=True)
                    if target and given and not given & target:
                        self.error((*loc, "body", key) if key in raw.body else self.param_loc(ref.path[0], "from"),
                                   f"{raw.call} takes each item of body field {key!r} as "
                                   f"{'/'.join(sorted(target))}, but {template!r} holds {'/'.join(sorted(given))}",
                                   "resolve names to ids (`resolve:` on the parameter), or send the type "
                                   "the operation takes", "binding-paths")
                    continue
            elif ref.path[0] in known:
                nodes = [walk(self.document, a.schema, ref.path[1:])[0] for a in self.answers.get(ref.path[0], [])
                         if a.schema is not None]
                given = {k for n in nodes if n is not None for k in schema_types(compact(self.document, n))} - {"null"}
            else:
                continue
            wanted = target | ({"integer"} if "number" in target else set())
            if given and not given & wanted:
                where = (*loc, "body", key) if key in raw.body else (*loc, "call")
                self.error(where, f"{raw.call} takes body field {key!r} as {'/'.join(sorted(target))}, but "
                           f"{template!r} gives {'/'.join(sorted(given))}",
                           "bind a value of the type the operation takes (an id, not a number; a list, "
                           "not its text)", "binding-paths")

    def error_fields(self, raw: StepDef, loc: Loc, names: set[str]) -> None:
        """`details.field` names the argument an agent would change: every `field` an error
        declares, and every `field` an on_error rule matches, is a parameter of the tool."""
        found: list[tuple[Loc, str | None]] = []
        for j, rule in enumerate(raw.on_error):
            found += [((*loc, "on_error", j, "field"), rule.field), ((*loc, "on_error", j, "when", "field"), rule.when.field)]
        found += [((*loc, "reject", j, "field"), r.field) for j, r in enumerate(raw.reject)]
        if raw.guard is not None:
            found += [((*loc, "guard", "refuse", "field"), raw.guard.refuse.field),
                      ((*loc, "guard", "unknown", "field"), raw.guard.unknown.field if raw.guard.unknown else None),
                      ((*loc, "guard", "unknown_field"), raw.guard.unknown_field)]
        if raw.absent is not None:
            found.append(((*loc, "absent", "refuse", "field"), raw.absent.refuse.field))
        for where, name in found:
            if name is not None and name not in names:
                guess = closest(name, list(names))
                self.error(where, f"field {name!r} is not a parameter of this tool",
                           (f"did you mean {guess!r}? " if guess else "") + "details.field names the argument "
                           "to change (a forge's own field name maps to one with field_map)", "field-names")

    def required_bound(self, raw: StepDef, op: SpecOperation, loc: Loc, query: Mapping[str, Any],
                       body: Mapping[str, Any], conditions: Sequence[Condition]) -> None:
        """Every query parameter and body property the operation requires is in the request
        whenever the step runs: bound, and not only to a parameter the agent may omit (unless the
        step runs only when it is given, or it has a default)."""
        given = {c.param for c in conditions if c.present and c.equals is None}
        optional = {p.name for p in self.params if not p.required and "default" not in p.schema}
        for where, bound in (("query", query), ("body", body)):
            for name in required_fields(self.document, op, where):
                if name not in bound:
                    self.error((*loc, "call"), f"{raw.call} requires {where} field {name!r}, which this "
                               "step does not send", f"map a parameter to it (`from: {raw.call}#{where}."
                               f"{name}`), or set it on the step: `{where}: {{{name}: \"{{param}}\"}}`",
                               "required-binding")
                    continue
                parts = bound[name] if where == "query" and name in raw.join else [bound[name]]
                # a joined field is there when one of its parts reads no optional parameter
                missing = min((sorted(optional & {ref.path[0] for ref in references(part)} - given)
                               for part in parts), key=len, default=[])
                if missing:
                    self.error((*loc, "call"), f"{raw.call} requires {where} field {name!r}, but it is "
                               f"left out when the optional parameter {missing[0]!r} is omitted",
                               f"make {missing[0]} required, give it a default, or run the step only "
                               f"`when: {missing[0]}`", "required-binding")
        if body_required(self.document, op) and not body:
            self.error((*loc, "call"), f"{raw.call} requires a request body, and this step sends none",
                       f"bind its fields (`from: {raw.call}#body.<field>` or `body:` on the step)",
                       "required-binding")

    def condition(self, raw: Any, negate: bool, loc: Loc, names: set[str], known: set[str]) -> Condition | None:
        """A parameter condition, or one on how an earlier step ended; problems are reported."""
        if isinstance(raw, StepCondition):
            if raw.step not in known:
                self.error((*loc, "step"), f"condition names {raw.step!r}, not an earlier step",
                           f"earlier steps: {', '.join(sorted(known)) or 'none'}", "outcome-conditions")
                return None
            if raw.status is None and raw.code is None and raw.empty is None:
                self.error(loc, f"condition on step {raw.step!r} tests nothing",
                           "give status, code or empty", "outcome-conditions")
                return None
            if raw.code is not None and raw.code not in self.codes:
                self.error((*loc, "code"), f"error code {raw.code!r} is not in error_codes",
                           "name the code the step's failure has (an on_error rule must skip it)",
                           "outcome-conditions")
            statuses = raw.status if isinstance(raw.status, list) else [] if raw.status is None else [raw.status]
            return Condition(step=raw.step, status=tuple(statuses), code=raw.code, empty=raw.empty,
                             present=not negate)
        if not isinstance(raw, str) and not (isinstance(raw, dict) and len(raw) == 1):
            self.error(loc, "a condition is a parameter name, {parameter: value}, or {step: <an earlier "
                       "step>, status: ..., code: ..., empty: ...}", "see docs/overrides.md#steps",
                       "outcome-conditions")
            return None
        cond = condition(raw, negate)
        if cond.param not in names:
            self.error(loc, f"condition names unknown parameter {cond.param!r}",
                       f"parameters are: {', '.join(sorted(names))}")
        return cond

    def bind_path(self, raw: StepDef | RecoverDef, op: SpecOperation, loc: Loc,
                  names: set[str]) -> dict[str, Any]:
        return bind_path(raw.call, raw.path, op, loc, path_filler(self.params, raw.call), self.error)

    def mapped(self, op_id: str, where: str, name: str) -> str | None:
        for p in self.params:
            if p.source == f"{op_id}#{where}.{name}":
                return p.name
        return None

    def bind(self, raw: StepDef | RecoverDef, op: SpecOperation, where: str,
             explicit: Mapping[str, Any], loc: Loc) -> dict[str, Any]:
        accepted = spec_fields(self.document, op, where)
        for key in explicit:
            if key not in accepted:
                guess = closest(key, list(accepted))
                self.error((*loc, where, key), f"{raw.call} has no {where} field {key!r}",
                           f"did you mean {guess!r}?" if guess else
                           f"{where} fields are: {', '.join(sorted(accepted)) or 'none'}")
        out = dict(explicit)
        for p in self.params:
            if p.source and p.source.startswith(f"{raw.call}#{where}."):
                out.setdefault(p.source.split(".", 1)[1], "{" + p.name + "}")
        return out

    def paginate(self, raw: StepDef, loc: Loc, names: set[str]) -> Paginate | None:
        p = raw.paginate
        if p is None:
            return None
        ploc = (*loc, "paginate")
        if (p.cursor is None) == (p.page_param is None):
            self.error(ploc, "paginate needs exactly one of `cursor` (tools) or `page_param` (resources)",
                       "tools page with an HMAC cursor parameter; resources with a URI variable")
        elif p.cursor is not None and p.cursor not in names:
            self.error((*ploc, "cursor"), f"paginate names unknown parameter {p.cursor!r}",
                       "declare a string parameter for the cursor (max_length 2048)")
        elif p.page_param is not None and p.next_uri is None:
            self.error(ploc, "paginate with page_param needs `next_uri`", "the URI of the next page")
        for key, template in (("next_uri", p.next_uri), ("next_query", dict(p.next_query))):
            self.check_refs(template, (*ploc, key), names, set(), allow_count=True)
        return Paginate(cursor=p.cursor, page_size=p.page_size, style=p.style, items=p.items,
                        has_more=p.has_more, next_cursor=p.next_cursor, page_param=p.page_param,
                        size_param=p.size_param, next_uri=p.next_uri, next_query=dict(p.next_query))

    def compare(self, raw: StepDef, loc: Loc, known: set[str], body: dict[str, Any]) -> Compare | None:
        c = raw.compare
        if c is None:
            return None
        if c.against not in known:
            self.error((*loc, "compare", "against"), f"compare names {c.against!r}, not an earlier step",
                       f"earlier steps: {', '.join(sorted(known)) or 'none'}")
        self.body_fields((*loc, "compare"), c.fields, c.normalize, body)
        for k, key in enumerate(c.carry):
            if key not in body or key in c.fields:
                self.error((*loc, "compare", "carry", k), f"carry names {key!r}, which is not a body "
                           "field outside compare.fields", "carry a body field the write must always send")
        return Compare(against=c.against, fields=dict(c.fields), normalize=dict(c.normalize),
                       changed=c.changed, names=self.row_names(c.against, c.fields, (*loc, "compare")),
                       carry=tuple(c.carry))

    def body_fields(self, loc: Loc, fields: Mapping[str, Any], normalize: Mapping[str, str],
                    body: dict[str, Any]) -> None:
        """`compare`/`verify` name body fields of their step, normalized by known transforms."""
        for key in [*fields, *normalize]:
            if key not in body:
                self.error((*loc, "fields", key), f"{key!r} is not a body field of this step",
                           f"body fields: {', '.join(sorted(body)) or 'none'}")
        for key, name in normalize.items():
            if name not in TRANSFORMS:
                self.error((*loc, "normalize", key), f"unknown transform {name!r}",
                           f"transforms: {', '.join(TRANSFORMS)}")

    def row_names(self, against: str, fields: Mapping[str, str], loc: Loc) -> dict[str, str]:
        """Body field -> the field of the returned row it changes: changed_fields names the row's
        fields (`name`), never the parameters (`new_name`). The row is the shaped output that
        reads `against`."""
        rows = [f for f in self.tool.output if f.shape and against in
                ([f.source] if isinstance(f.source, str) else f.source or [])]
        if not rows:
            self.error(loc, f"no output returns the row {against!r} reads",
                       f"declare an output with a shape and `from: [<write>, {against}]`: "
                       "changed_fields names that row's fields")
            return {}
        assert rows[0].shape is not None
        shape = self.shapes.get(rows[0].shape)
        by_path = {f.path: f.name for f in shape.fields} if shape else {}
        names: dict[str, str] = {}
        for key, path in fields.items():
            name = by_path.get(split_path(path))
            if name is None and shape is not None:
                self.error((*loc, "fields", key), f"{path!r} is not a field of shape {shape.name!r}",
                           f"add a field with `from: {path}` to the shape: changed_fields names it")
            elif name is not None and name != key:
                names[key] = name
        return names

    def names_exist(self, raw: StepDef, loc: Loc, names: set[str]) -> NamesExist | None:
        n = raw.names_exist
        if n is None:
            return None
        nloc = (*loc, "names_exist")
        arrays = {p.name for p in self.params if p.schema.get("type") == "array"}
        for param in n.params:
            if param not in arrays:
                self.error((*nloc, "params"), f"names_exist names {param!r}, not an array parameter",
                           f"array parameters: {', '.join(sorted(arrays)) or 'none'}")
        if n.code not in self.codes:
            self.error((*nloc, "code"), f"error code {n.code!r} is not in error_codes",
                       "declare it under error_codes")
        lookup = None
        if n.lookup is not None:
            lookup = self.runtime_ops.get(n.lookup)
            if lookup is None:
                guess = closest(n.lookup, list(self.ops))
                self.error((*nloc, "lookup"), f"unknown operationId {n.lookup!r}",
                           f"did you mean {guess!r}?" if guess else "")
        if n.lookup is not None and n.lookup in self.ops and n.lookup_param not in path_names(self.ops[n.lookup]):
            self.error((*nloc, "lookup_param"), f"{n.lookup} has no path parameter {n.lookup_param!r}",
                       f"its path parameters: {', '.join(path_names(self.ops[n.lookup]))}")
        self.note_repair(nloc, n)
        return NamesExist(params=tuple(n.params), code=n.code, kind=n.kind, lookup=lookup,
                          repair=_repair(n.repair), key=n.key, lookup_param=n.lookup_param, absent=n.absent)

    def verify(self, raw: StepDef, loc: Loc, body: dict[str, Any]) -> Verify | None:
        v = raw.verify
        if v is None:
            return None
        self.body_fields((*loc, "verify"), v.fields, v.normalize, body)
        renamed = {key: ref for key, value in body.items()
                   if (ref := _whole_ref(value)) is not None and ref != key and key in v.fields}
        return Verify(fields={k: split_path(p) for k, p in v.fields.items()},
                      normalize=dict(v.normalize), names=renamed, ignored=v.ignored)

    def stored(self, raw: StepDef, loc: Loc, body: dict[str, Any]) -> Stored | None:
        if raw.stored is None:
            return None
        if raw.call in self.runtime_ops and self.runtime_ops[raw.call].method in READ_METHODS:
            self.error((*loc, "stored"), "stored is for a write step", "put it on the step that sends the text")
        self.body_fields((*loc, "stored"), raw.stored, {}, body)
        declared = {f.name: f for f in self.tool.output}
        for name in (STORED, ALTERED):
            if name not in declared:
                self.error((*loc, "stored"), f"stored fills the output {name!r}, which is not declared",
                           f"declare {{name: {name}, optional: true}} under output (without `from`)")
            elif not declared[name].optional:
                self.error((*loc, "stored"), f"stored fills the output {name!r} only when GitHub "
                           "keeps the text otherwise than sent", f"declare {name!r} with optional: true")
        renamed = {key: ref for key, value in body.items()
                   if (ref := _whole_ref(value)) is not None and ref != key and key in raw.stored}
        return Stored(fields={k: split_path(p) for k, p in raw.stored.items()}, names=renamed)

    def settle(self, raw: StepDef, loc: Loc, names: set[str], earlier: list[Step],
               body: dict[str, Any]) -> Settle | None:
        s = raw.settle
        if s is None:
            return None
        sloc = (*loc, "settle")
        method = self.runtime_ops[raw.call].method if raw.call in self.runtime_ops else ""
        if raw.compare is None and method == "POST":
            return self.settle_create(s, sloc, earlier)
        against = raw.compare.against if raw.compare else s.against if method == "DELETE" else None
        read = next((e for e in earlier if e.id == against and e.operation.method in READ_METHODS), None)
        if raw.call not in self.runtime_ops or read is None or (raw.compare and s.against):
            self.error(sloc, "settle needs `compare` against an earlier read on the same step, on "
                       "a delete `against` naming one, or on a create `against` an `absent` step",
                       "settle re-reads the resource with that read's operation")
            return None
        if self.runtime_ops[raw.call].method in READ_METHODS:
            self.error(sloc, "settle is for a write step", "put it on the step that changes the resource")
        read_op = self.ops[read.operation.operation_id]
        for key in s.path:
            if key not in path_names(read_op):
                self.error((*sloc, "path", key), f"{read_op.operation_id} has no path parameter {key!r}",
                           f"its path parameters are: {', '.join(path_names(read_op))}")
        self.check_refs(dict(s.path), (*sloc, "path"), names, set())
        carried = set(raw.compare.carry) if raw.compare else set()
        if raw.compare and any(ref.path[0] not in names for key, value in body.items() if key not in carried
                               for ref in references(value)):
            self.error(sloc, "settle needs a body made of parameters",
                       "a repeat judges the resource by what the parameters ask, before any step ran")
        shown = success_schema(self.document, read_op) or {}
        if "id" not in shown.get("properties", {}):
            self.error(sloc, f"{read_op.operation_id} answers without an `id`",
                       "settle tells the same resource by its id before and after the write")
        find, find_path = self.settle_find(s.find, sloc, raw, read)
        return Settle(path=dict(s.path), against=None if raw.compare else against, find=find,
                      find_path=find_path)

    def settle_find(self, op_id: str | None, loc: Loc, raw: StepDef,
                    read: Step) -> tuple[Operation | None, dict[str, Any]]:
        """The listing a delete's settle looks for the resource's id in, and its path (the read's
        own values for the path parameters they share)."""
        if op_id is None:
            return None, {}
        floc = (*loc, "find")
        op = self.ops.get(op_id)
        if op is None or op_id not in self.runtime_ops:
            guess = closest(op_id, list(self.ops))
            self.error(floc, f"unknown operationId {op_id!r}", f"did you mean {guess!r}?" if guess else "")
            return None, {}
        if raw.compare is not None or self.runtime_ops[op_id].method not in READ_METHODS:
            self.error(floc, "settle.find is a list operation, on a delete's settle",
                       "name the operation that lists the resources the delete removes one of")
            return None, {}
        rows = success_schema(self.document, op) or {}  # a listing's: its rows
        if "id" not in rows.get("properties", {}):
            self.error(floc, f"{op_id} does not list rows with an `id`",
                       "settle.find looks for the deleted resource's id among the rows")
        missing = [p for p in path_names(op) if p not in read.path]
        if missing:
            self.error(floc, f"{op_id} needs path parameters {', '.join(missing)} the read has not",
                       "list the resources of the same parent the read addressed")
        return self.runtime_ops[op_id], {p: read.path[p] for p in path_names(op) if p in read.path}

    def settle_create(self, s: Any, sloc: Loc, earlier: list[Step]) -> Settle | None:
        listing = next((e for e in earlier if e.id == s.against and e.absent is not None), None)
        if listing is None or s.path:
            self.error(sloc, "settle on a create needs `against` naming an earlier `absent` step "
                       "(and no `path`)", "the listing that showed no such row is read again")
            return None
        return Settle(against=listing.id)

    def absent(self, raw: StepDef, loc: Loc, op: SpecOperation) -> Absent | None:
        a: AbsentDef | None = raw.absent
        if a is None:
            return None
        aloc = (*loc, "absent")
        row = listing_row(self.document, op)
        if row is None:
            self.error(aloc, f"absent needs a listing: {raw.call} does not answer a JSON array",
                       "call the operation that lists the rows (e.g. a label listing)")
        else:
            for part in ("match", "other_than"):
                for key in getattr(a, part):
                    if key not in row.get("properties", {}):
                        self.error((*aloc, part, key), f"{key!r} is not a field of {raw.call}'s rows",
                                   f"row fields: {', '.join(sorted(row.get('properties', {})))}")
        if a.refuse.code is None or a.refuse.code not in self.codes:
            self.error((*aloc, "refuse", "code"), "absent.refuse needs a declared error code",
                       "declare it under error_codes")
        self.note_repair((*aloc, "refuse"), a.refuse)
        refuse = error_spec(a.refuse)
        assert refuse is not None
        return Absent(match=dict(a.match), refuse=refuse, pages=a.pages, other_than=dict(a.other_than))

    def guard(self, raw: StepDef, loc: Loc, names: set[str]) -> Guard | None:
        g = raw.guard
        if g is None:
            return None
        when = condition(g.when) if g.when else None
        if when is not None and when.param not in names:
            self.error((*loc, "guard", "when"), f"guard names unknown parameter {when.param!r}",
                       f"parameters are: {', '.join(sorted(names))}")
        if not g.count and not g.total:
            self.error((*loc, "guard"), "guard counts nothing", "give `count` (body paths) or `total: true`")
        if g.total and not self.totals:
            self.error((*loc, "guard", "total"), "this forge reports no listing totals",
                       "count body fields with `count` instead")
        refuse = error_spec(g.refuse)
        assert refuse is not None
        self.note_repair((*loc, "guard", "refuse"), g.refuse)
        self.note_repair((*loc, "guard", "unknown"), g.unknown)
        return Guard(count=tuple(g.count), total=g.total, refuse=refuse, when=when,
                     unknown=error_spec(g.unknown), incomplete=g.incomplete, unknown_field=g.unknown_field)

    def step_answers(self, step: Step) -> list[Answer]:
        """What the step's result can be (see generator/spec/answers.py)."""
        if step.names_exist is not None:
            return [names_answer(step.names_exist.params)]
        if step.absent is not None:
            return [Answer(f"the absent check {step.id!r} (it keeps no result)", None)]
        return documented(self.document, self.ops[step.operation.operation_id])

    def recipe_paths(self, raw: StepDef, step: Step, loc: Loc) -> None:
        """The paths recipes read in answers: a rejected field, counted fields, where a page's
        rows are, what verify and stored compare, what compare and an update plan read."""
        own = self.answers.get(step.id, [])
        paths: list[tuple[Loc, list[Answer], str]] = [
            ((*loc, "reject", j), own, r.present) for j, r in enumerate(raw.reject)]
        if raw.guard is not None:
            paths += [((*loc, "guard", "count", j), own, c) for j, c in enumerate(raw.guard.count)]
            if raw.guard.incomplete:
                paths.append(((*loc, "guard", "incomplete"), own, raw.guard.incomplete))
        if raw.paginate is not None and raw.paginate.items:
            paths.append(((*loc, "paginate", "items"), own, raw.paginate.items))
        for key, fields in (("verify", raw.verify.fields if raw.verify else {}), ("stored", raw.stored or {})):
            paths += [((*loc, key, "fields", name) if key == "verify" else (*loc, key, name), own, path)
                      for name, path in fields.items()]
        if raw.compare is not None:
            before = self.answers.get(raw.compare.against, [])
            paths += [((*loc, "compare", "fields", name), before, path) for name, path in raw.compare.fields.items()]
        if raw.update is not None:
            before = self.answers.get(raw.update.against, [])
            for name, shown in raw.update.shows.items():
                dotted = shown if isinstance(shown, str) else shown.source
                paths += [((*loc, "update", "shows", name), answers, dotted) for answers in (before, own)]
            for k, member in enumerate(raw.update.sets):
                for key in ("add", "remove"):
                    write = getattr(member, key)
                    if write is not None and write.answer and write.call in self.ops:
                        paths.append(((*loc, "update", "sets", k, key, "answer"),
                                      documented(self.document, self.ops[write.call]), write.answer))
        for where, answers, dotted in paths:
            path = split_path(dotted)
            missing = lacks(self.document, answers, path)
            if missing:
                guess = closest(path[-1], near(self.document, answers, path)) if path else None
                self.error(where, f"{dotted!r} is not in {missing[0]}",
                           (f"did you mean {'.'.join((*path[:-1], guess))!r}? " if guess else "")
                           + "recipes read dotted paths of the answer as the spec describes it",
                           "binding-paths")
        if raw.paginate is not None and raw.paginate.items and not lacks(
                self.document, own, split_path(raw.paginate.items)) and not is_array(
                self.document, own, split_path(raw.paginate.items)):
            self.error((*loc, "paginate", "items"), f"{raw.paginate.items!r} is not a list in {raw.call}'s answer",
                       "items names where the page's rows are (search: items)", "binding-paths")

    def check_refs(self, template: Any, loc: Loc, names: set[str], known: set[str],
                   allow_count: bool = False, optional: bool = False) -> set[str]:
        """The earlier steps a template reads; unknown names and filters, and paths a step's
        result lacks, are reported (`optional`: the value may be absent, so one result having
        the path is enough)."""
        reads: set[str] = set()
        for ref in references(template):
            head = ref.path[0]
            if head == RESPONSE:
                reads |= self.response_ref(ref.path, loc, known)
            elif head in known:
                reads.add(head)
                self.check_path(head, ref.path[1:], loc, optional)
            elif head not in names and not (allow_count and head in RECIPE_VALUES):
                choices = sorted(names | known)
                guess = closest(head, choices)
                self.error(loc, f"template reads {head!r}: not a parameter or an earlier step",
                           f"did you mean {guess!r}?" if guess else f"available: {', '.join(choices)}")
            for name in ref.filters:
                if name not in TRANSFORMS:
                    self.error(loc, f"unknown filter {name!r}", f"transforms: {', '.join(TRANSFORMS)}")
        return reads

    def check_path(self, step: str, path: tuple[str, ...], loc: Loc, optional: bool = False) -> None:
        answers = self.answers.get(step, [])
        missing = lacks(self.document, answers, path)
        if not missing or (optional and len(missing) < len(answers)):
            return
        dotted = ".".join((step, *path))
        if len(missing) < len(answers):  # the step's own answer has it; what a recipe puts there lacks it
            hint = (f"read it where every result of {step} has it (its answer has, {missing[0]} has "
                    "not), or drop the recipe that puts that in its place")
        else:
            guess = closest(path[-1], near(self.document, answers, path))
            hint = ((f"did you mean {{{'.'.join((step, *path[:-1], guess))}}}? " if guess else "")
                    + "A path names properties of the step's result as the spec describes it "
                    "(through allOf/oneOf and nullable objects; lists cannot be indexed)")
        self.error(loc, f"{{{dotted}}} reads {'.'.join(path)!r}, which {missing[0]} does not have",
                   hint, "binding-paths")

    def response_ref(self, path: tuple[str, ...], loc: Loc, known: set[str]) -> set[str]:
        """`{response.<step>.status}` or `{response.<step>.headers.<name>}`: the step it reads."""
        step = path[1] if len(path) > 1 else ""
        shape_ok = (len(path) == 3 and path[2] == "status") or (
            len(path) == 4 and path[2] == "headers" and path[3] == path[3].lower())
        if step not in known or not shape_ok:
            self.error(loc, f"template reads {'.'.join(path)!r}",
                       f"write {{{RESPONSE}.<step>.status}} or {{{RESPONSE}.<step>.headers.<lower-case "
                       f"name>}} of an earlier step ({', '.join(sorted(known)) or 'none'})", "response-refs")
            return set()
        return {step}

    # -- outputs ----------------------------------------------------------------------------

    def outputs(self, steps: list[Step], names: set[str]) -> tuple[Output, ...] | None:
        ids = {s.id for s in steps}
        self.answers = self.output_answers(steps)
        implicit = {n for s in steps if s.paginate for n in (s.paginate.has_more, s.paginate.next_cursor)
                    if s.paginate.cursor}
        implicit |= {n for s in steps if s.paginate and s.paginate.page_param for n in ("page", "next")}
        implicit |= {s.compare.changed for s in steps if s.compare}
        # a recipe's outputs stay its own even when the step carrying it was reported wrong
        raw_steps = self.tool.steps or []
        implicit |= {n for r in raw_steps if r.update for n in (r.update.changed, r.update.ignored)}
        implicit |= {STORED, ALTERED} if any(r.stored for r in raw_steps) else set()
        implicit |= {s.verify.ignored for s in steps if s.verify}
        implicit |= {STORED, ALTERED} if any(s.stored for s in steps) else set()
        out: list[Output] = []
        ok = True
        for k, f in enumerate(self.tool.output):
            floc = (*self.loc, "output", k)
            if f.name in implicit:
                if f.source is not None:
                    self.error((*floc, "from"), f"output {f.name!r} is filled by a recipe",
                               "drop `from`: pagination and compare fill it")
                continue
            read = [f.source] if isinstance(f.source, str) else f.source if isinstance(f.source, list) else []
            if set(read) & self.broken or {r.path[0] for r in references(f.source)} & self.broken:
                ok = False
                continue
            built = self.output(f, floc, ids, names, steps)
            if built is None:
                ok = False
                continue
            out.append(built)
        return tuple(out) if ok else None

    def output_answers(self, steps: list[Step]) -> dict[str, list[Answer]]:
        """What outputs read of each step: its answers, and what a recipe puts in place of a
        lost one — the re-read of a settled write, the row recovery finds for the keyed write."""
        out = {sid: list(found) for sid, found in self.answers.items()}
        by_id = {s.id: s for s in steps}
        for s in steps:
            against = s.compare.against if s.compare else s.settle.against if s.settle else None
            if s.settle is None or against not in by_id:
                continue
            read = by_id[against]
            listing = read.absent is not None  # a create's settle: the one row like `match`
            again = documented(self.document, self.ops[read.operation.operation_id])
            out[s.id] += [rows(self.document, a, None) for a in again] if listing else again
        idem = self.tool.idempotency
        if idem is not None and idem.recover is not None and idem.write in out and idem.recover.call in self.ops:
            found = documented(self.document, self.ops[idem.recover.call])
            out[idem.write] += [Answer(f"the row recovery finds in {a.label}", rows(self.document, a, None).schema)
                                for a in found]
        return out

    def find(self, node: Any, parent: tuple[str, ...], path: tuple[str, ...]) -> tuple[Any, bool]:
        """`parent` then `path` in `node`; a present parent object has its fields."""
        found, may_miss = walk(self.document, node, parent) if node is not None else (None, True)
        if found is not None and path:
            found, may_miss = walk(self.document, {**found, "nullable": False}, path)
        return found, may_miss

    def shape_sources(self, shape: IRShape) -> list[Any]:
        """The schemas a shape was checked against: components, or `<operationId>#response`."""
        out = []
        for source in shape.sources:
            op = self.ops.get(source.removesuffix("#response"))
            node = success_schema(self.document, op) if source.endswith("#response") and op else \
                self.document.get("components", {}).get("schemas", {}).get(source)
            if node is not None:
                out.append(node)
        return out

    def check_shape_source(self, f: OutputField, shape: IRShape, source: Step, loc: Loc) -> None:
        """Every path the shape projects is in each result of the step the output reads."""
        items = f.items_at or (source.paginate.items if source.paginate else None)
        answers = [rows(self.document, a, items) if f.items_shape else one_row(self.document, a)
                   for a in self.answers.get(source.id, [])]
        partial = {x.name for x in shape.fields if x.absent_in}  # null where a source lacks it
        for answer in answers:
            node = answer.schema
            if isinstance(node, Mapping) and node.get("type") == "array":
                self.error(loc, f"output {f.name!r} reads one {shape.name!r} row from {source.id}, "
                           f"but {answer.label} is a list", "use items_shape for a list",
                           "output-shapes")
                continue
            missing, nulls = [], []
            for name, parent, path, nullable in shape_paths(shape):
                found, may_miss = self.find(node, parent, path)
                dotted = ".".join((*parent, *path))
                if name.split(".")[0] in partial:
                    continue
                if found is None:
                    missing.append(f"{name} ({dotted})")
                elif may_miss and not nullable and "[]" not in (*parent, *path) and not any(
                        self.find(source, parent, path)[1] for source in self.shape_sources(shape)):
                    nulls.append(f"{name} ({dotted})")  # (`nullable: false` on a source's optional field: asserted)
            if missing:
                self.error(loc, f"output {f.name!r} projects shape {shape.name!r} from {source.id}, but "
                           f"{answer.label} has no {', '.join(missing[:3])}"
                           + (f" and {len(missing) - 3} more" if len(missing) > 3 else ""),
                           "project a shape whose sources include this answer's schema, or read "
                           "another step", "output-shapes")
            elif nulls:
                self.error(loc, f"output {f.name!r}: {answer.label} may leave out {', '.join(nulls[:3])}, "
                           f"which shape {shape.name!r} says is always present",
                           "let the shape field be null (`nullable: true`), or read another step",
                           "output-shapes")

    def check_value_type(self, f: OutputField, ref: Ref, loc: Loc) -> None:
        """An output that is one `{step.path}` has the type the answer gives that path, and
        allows what the answer may leave out (null, or absent)."""
        for answer in self.answers.get(ref.path[0], []):
            found, may_miss = walk(self.document, answer.schema, ref.path[1:]) if answer.schema is not None \
                else (None, True)
            if found is None:
                continue  # reported by check_path
            kinds = schema_types(compact(self.document, found)) - {"null"}
            if ref.filters or not kinds:
                continue  # a transform changes the value; an untyped answer says nothing
            if f.type not in kinds:
                self.error(loc, f"output {f.name!r} is {f.type}, but {answer.label} gives "
                           f"{'.'.join(ref.path[1:])!r} as {'/'.join(sorted(kinds))}",
                           "declare the type the answer has", "binding-paths")
            elif may_miss and not (f.nullable or f.optional):
                self.error(loc, f"output {f.name!r} is always present, but {answer.label} may leave "
                           f"{'.'.join(ref.path[1:])!r} out or null",
                           "declare it `optional: true` (with when it is absent) or `nullable: true`",
                           "binding-paths")

    def output(self, f: OutputField, loc: Loc, ids: set[str], names: set[str],
               steps: list[Step]) -> Output | None:
        if f.true_when is not None:
            if f.source is not None or f.type != "boolean" or f.optional:
                self.error(loc, f"output {f.name!r} with true_when is a boolean, always present",
                           "give `type: boolean` and no `from` or `optional`", "outcome-conditions")
                return None
            cond = self.condition(f.true_when, False, (*loc, "true_when"), names, ids)
            return None if cond is None else Output(name=f.name, true_when=cond)
        if f.source is None:
            self.error(loc, f"output {f.name!r} of a declared tool needs `from`",
                       "name a step (for shapes) or a template such as {step.field}")
            return None
        shape = f.shape or f.items_shape
        if f.version_of is not None:
            if f.version_of not in self.versioned:
                self.error((*loc, "version_of"), f"shape {f.version_of!r} declares no version",
                           f"shapes with a version: {', '.join(sorted(self.versioned)) or 'none'}")
                return None
            if isinstance(f.source, list):
                self.error((*loc, "from"), f"output {f.name!r}: version_of reads exactly one step, not "
                           f"{len(f.source)}", "name the one step whose answer is the versioned resource "
                           "(after an update: the write step, whose answer is the resource now)")
                return None
            if not isinstance(f.source, str) or f.source not in ids:
                self.error((*loc, "from"), f"output {f.name!r}: version_of needs `from` naming a step",
                           f"steps: {', '.join(sorted(ids))}")
                return None
            return Output(name=f.name, version_of=f.version_of, sources=(f.source,))
        if shape is not None:
            sources = [f.source] if isinstance(f.source, str) else list(f.source)
            for s in sources:
                if s not in ids:
                    self.error((*loc, "from"), f"output {f.name!r} reads {s!r}, not a step",
                               f"steps: {', '.join(sorted(ids))}")
                    return None
            if shape in self.shapes:
                for s in sources:
                    self.check_shape_source(f, self.shapes[shape], next(x for x in steps if x.id == s),
                                            (*loc, "from"))
            paged = {s.id for s in steps if s.paginate}
            if f.when_more is not None and f.when_more not in paged:
                self.error((*loc, "when_more"), f"when_more names {f.when_more!r}, not a paged step",
                           f"paged steps: {', '.join(sorted(paged)) or 'none'}")
            if f.items_at is not None and f.items_shape is None:
                self.error((*loc, "items_at"), "items_at says where rows are: it goes with items_shape",
                           "use items_shape, or drop items_at")
            local = None
            if f.local is not None:
                if not {"owner", "repo"} <= names:
                    self.error((*loc, "local"), f"output {f.name!r}: local compares rows with the call's "
                               "repository, and this tool has no owner and repo parameters",
                               "declare local on a tool taking owner and repo")
                local = Local(repository=split_path(f.local.repository), fields=tuple(f.local.fields))
            return Output(name=f.name, shape=shape, each=f.items_shape is not None, sources=tuple(sources),
                          exclude=f.exclude, omit=tuple(f.omit), when_more=f.when_more, detail=f.detail,
                          include=tuple(f.include), local=local,
                          items_at=tuple(f.items_at.split(".")) if f.items_at else ())
        if isinstance(f.source, list):
            self.error((*loc, "from"), f"output {f.name!r} takes one template", "e.g. {step.field}")
            return None
        self.check_refs(f.source, (*loc, "from"), names, ids, optional=f.optional)
        ref = _whole(f.source)
        if ref is not None and ref.path[0] in ids and f.type is not None:
            self.check_value_type(f, ref, (*loc, "from"))
        return Output(name=f.name, value=f.source, when_more=f.when_more)


ShapePath = tuple[str, tuple[str, ...], tuple[str, ...], bool]


def shape_paths(shape: IRShape) -> list[ShapePath]:
    """(what, parent object's path, path in it, may be null) of everything a shape reads: its
    fields (a nested field under its parent's path), the version's paths, lockdown's."""
    out: list[ShapePath] = []
    for f in shape.fields:
        if not f.computed:
            out.append((f.name, f.path, (), f.nullable))
            out += [(f"{f.name}.{n.name}", f.path, n.path, n.nullable) for n in f.nested if not n.computed]
    out += [(f"version {name}", path, (), True) for name, path in shape.version]
    if shape.lockdown is not None:
        rule = shape.lockdown
        out += [(f"lockdown {key}", path, (), True) for key, path in
                (("author", rule.author), ("repository", rule.repository), ("association", rule.association))
                if path]
    return out


def _error_templates(spec: ErrorDef | None) -> list[Any]:
    if spec is None:
        return []
    parts: list[Any] = [spec.message, spec.reason, *spec.details.values()]
    if spec.repair is not None:
        parts += [dict(spec.repair.arguments), spec.repair.alternative]
    return [p for p in parts if p is not None]


def _codes_of(raw: StepDef) -> set[str]:
    specs: list[ErrorDef | None] = [*raw.on_error, *raw.reject]
    if raw.guard is not None:
        specs += [raw.guard.refuse, raw.guard.unknown]
    codes = {s.code for s in specs if s is not None and s.code}
    if raw.names_exist is not None:
        codes.add(raw.names_exist.code)
    if raw.absent is not None and raw.absent.refuse.code:
        codes.add(raw.absent.refuse.code)
    if raw.guard is not None and raw.guard.incomplete:
        codes.add("upstream_unavailable")
    if raw.update is not None:
        codes |= update_codes(raw)
    return codes


def _whole_ref(template: Any) -> str | None:
    if not isinstance(template, str):
        return None
    parts = parse(template)
    if len(parts) == 1 and isinstance(parts[0], Ref) and len(parts[0].path) == 1 and not parts[0].filters:
        return parts[0].path[0]
    return None


def _whole(template: Any) -> Ref | None:
    """The one reference a template is made of, if it is nothing else."""
    parts = parse(template) if isinstance(template, str) else ()
    return parts[0] if len(parts) == 1 and isinstance(parts[0], Ref) else None


def _whole_param(template: Any, names: set[str]) -> str | None:
    ref = _whole_ref(template)
    return ref if ref in names else None


def skip_codes(rules: Sequence[OnErrorDef]) -> set[str]:
    return {r.when.code for r in rules if r.skip and r.when.code}


def _json_type(value: Any) -> str:
    kinds: tuple[tuple[type, str], ...] = ((bool, "boolean"), (int, "integer"), (float, "number"),
                                           (str, "string"), (list, "array"), (dict, "object"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")
