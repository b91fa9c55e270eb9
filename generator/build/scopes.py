"""What each tool needs of a token (rule `scopes`).

The override file declares, per operation, what a token needs to call it (`scopes:`; the forge's
description does not say, its documentation does). The generator checks every declaration
against the forge's scope model (`ghmcp_runtime.core.token_scopes.ScopeModel`: known names, a
write names a write scope, an operation on the token's own account says so) and that every
operation a tool or resource template calls is declared, then folds a tool's operations into the
`ToolScopes` it publishes (tools.json `_meta`, TOOLS.md, the review report) and the runtime
filters by.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from generator.base.diagnostics import closest
from generator.language.overrides import OperationScopes, OverrideFile, ToolDef
from generator.spec.pinned import SpecOperation
from ghmcp_runtime.core.token_scopes import ScopeModel, ToolScopes, combined

RULE = "scopes"
Loc = tuple[str | int, ...]
Report = Callable[[Loc, str, str, str], None]
READ_METHODS = frozenset({"get", "head"})


def check_declarations(o: OverrideFile, model: ScopeModel, ops: Mapping[str, SpecOperation],
                       report: Report) -> None:
    """Each declaration names known scopes and holds what its operation plainly needs."""
    for op_id, declared in o.scopes.items():
        loc: Loc = ("scopes", op_id)
        op = ops.get(op_id)
        if op is None:
            guess = closest(op_id, list(ops))
            report(loc, f"scopes: unknown operationId {op_id!r}",
                   f"did you mean {guess!r}?" if guess else "operationIds look like issues/get", RULE)
            continue
        for i, scope in enumerate(declared.oauth):
            if scope not in model.names:
                guess = closest(scope, sorted(model.names))
                report((*loc, "oauth", i), f"{op_id}: {scope!r} is not a {o.server.forge} scope",
                       f"did you mean {guess!r}?" if guess else "use the forge's scope names", RULE)
        if declared.fine_grained and model.write_permission is None:
            report((*loc, "fine_grained"), f"{op_id}: {o.server.forge} tokens have no fine-grained "
                   "permissions", "drop fine_grained; oauth holds the token scopes", RULE)
        for problem, key, hint in omissions(op, declared, model):
            report((*loc, key), f"{op_id} ({op.method.upper()} {op.path}) {problem}", hint, RULE)


def omissions(op: SpecOperation, declared: OperationScopes,
              model: ScopeModel) -> Iterable[tuple[str, str, str]]:
    """What `declared` leaves out that the operation's method and path say it needs."""
    docs = _docs(op)
    writes = op.method.lower() not in READ_METHODS
    pattern = model.write_scope if writes else model.read_scope
    if pattern is not None and not any(re.search(pattern, s) for s in declared.oauth):
        what = "changes" if writes else "reads"
        yield (f"{what} the forge, but its declaration names no scope a token needs for that",
               "oauth", f"name the scope from the endpoint's documentation{docs}")
    if writes and model.write_permission is not None:
        if not declared.fine_grained:
            yield ("changes the forge, but its declaration names no fine-grained permission",
                   "fine_grained", f"name the permission, e.g. issues:write{docs}")
        elif any(not re.search(model.write_permission, p) for p in declared.fine_grained):
            yield ("changes the forge, but a fine-grained permission it names only reads",
                   "fine_grained", f"a write needs :write (or :admin){docs}")
    if re.search(model.user_paths, op.path) and not declared.user_context:
        yield ("acts on the token's own account, which its declaration does not say",
               "user_context", "add user_context: true (an App installation's token has no account)")


def _docs(op: SpecOperation) -> str:
    url = docs_url(op)
    return f" ({url})" if url else ""


def docs_url(op: SpecOperation) -> str | None:
    """The forge's documentation of the operation, when its description links it."""
    external = op.node.get("externalDocs")
    url = external.get("url") if isinstance(external, dict) else None
    return url if isinstance(url, str) else None


def undeclared(tool: ToolDef, op_ids: Iterable[str], o: OverrideFile) -> list[tuple[Loc, str]]:
    """(where the tool names it, operationId) of each operation it calls that `scopes` lacks."""
    out = []
    for op_id in op_ids:
        if op_id in o.scopes:
            continue
        where: Loc = ("name",)
        for j, step in enumerate(tool.steps or []):
            if step.call == op_id:
                where = ("steps", j, "call")
                break
        else:
            if op_id in tool.operations:
                where = ("operations", tool.operations.index(op_id))
            elif tool.idempotency is not None and tool.idempotency.recover is not None:
                where = ("idempotency", "recover")
        out.append((where, op_id))
    return out


def tool_scopes(op_ids: Iterable[str], declared: Mapping[str, OperationScopes], model: ScopeModel,
                fallback: Iterable[str] = ()) -> ToolScopes:
    """What a tool calling `op_ids` needs. `fallback`: operations it calls only to recover a lost
    answer (recovery reads the caller's login), which do not make it a user-context tool."""
    skip = set(fallback)
    return combined((operation_scopes(declared[i], i not in skip) for i in op_ids if i in declared),
                    model)


def operation_scopes(declared: OperationScopes, user_context: bool = True) -> ToolScopes:
    fine = ("|".join(sorted(declared.fine_grained)),) if declared.fine_grained else ()
    return ToolScopes(required=tuple(declared.oauth), fine_grained=fine,
                      user_context=declared.user_context and user_context)


def unused(o: OverrideFile, called: set[str]) -> list[str]:
    """Declared operations nothing calls."""
    return [op_id for op_id in o.scopes if op_id not in called]
