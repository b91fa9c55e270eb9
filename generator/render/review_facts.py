"""What a reviewer must judge of a server that `tools.json` does not show, kept in its
MANIFEST.json (`review`) so `generator review` can compare a base with the working tree: the
endpoints each tool calls, the error mappings it declares with their repairs, its confirmation,
idempotency and token scopes, the server-wide error rules, the spec patches of the override file,
what each operation needs of a token as declared, and every budget. Plain JSON, deterministic, with the override file's own words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from generator.build.ir import IRServer, IRTool
from generator.spec.patches import SpecPatch
from ghmcp_runtime.core.declared import Condition, Confirm, ErrorSpec, Match, OnError, Repair


def review_facts(server: IRServer, patches: Sequence[SpecPatch]) -> dict[str, Any]:
    return {
        "budgets": {"description_bytes": server.description_budget_bytes,
                    "model_bytes": server.model_budget_bytes,
                    "tools_list_bytes": server.tools_budget_bytes},
        "on_error": [mapping(rule) for rule in server.error_rules],
        "scopes": {op_id: scopes.meta() for op_id, scopes in server.operation_scopes},
        "spec_patches": [patch.model_dump(exclude_unset=True) for patch in patches],
        "tools": {tool.name: tool_facts(tool) for tool in server.tools},
    }


def tool_facts(tool: IRTool) -> dict[str, Any]:
    out: dict[str, Any] = {"calls": [f"{op.method} {op.path} ({op.operation_id})" for op in tool.operations],
                           "scopes": tool.scopes.meta()}
    decl = tool.declaration
    errors: list[dict[str, Any]] = []
    for step in decl.steps if decl else ():
        errors += [{"step": step.id, **mapping(rule)} for rule in step.on_error]
        errors += [{"step": step.id, "when": f"the answer has {r.present}", **error(r.error)} for r in step.reject]
        if step.guard is not None:
            errors.append({"step": step.id, "when": "the count is above 0", **error(step.guard.refuse)})
            if step.guard.unknown is not None:
                errors.append({"step": step.id, "when": "the count is unknown", **error(step.guard.unknown)})
        if step.absent is not None:
            errors.append({"step": step.id, "when": "a row already matches", **error(step.absent.refuse)})
    if errors:
        out["errors"] = errors
    confirm = decl.confirm if decl else tool.batch.confirm if tool.batch else None
    if confirm is not None:
        out["confirm"] = confirmation(confirm)
    idem = decl.idempotency if decl else None
    if idem is not None:
        out["idempotency"] = {"key": idem.key, "scope": list(idem.scope), "write": idem.write}
        if idem.recover is not None:
            out["idempotency"]["recover"] = {"call": idem.recover.operation.operation_id,
                                             "match": dict(idem.recover.match)}
    elif tool.batch is not None and tool.batch.key is not None:
        out["idempotency"] = {"key": tool.batch.key, "scope": list(tool.batch.scope)}
    return out


def mapping(rule: OnError) -> dict[str, Any]:
    """An on_error rule: what it matches, and what it answers (or that it skips)."""
    when = {f.name: getattr(rule.when, f.name) for f in fields(Match) if getattr(rule.when, f.name)}
    if "method" in when:
        when["method"] = list(when["method"])
    return {"when": when, **({"skip": True} if rule.skip else error(rule.error))}


def error(spec: ErrorSpec) -> dict[str, Any]:
    out: dict[str, Any] = {k: getattr(spec, k) for k in ("code", "message", "field", "reason")
                           if getattr(spec, k) is not None}
    if spec.repair is not None:
        out["repair"] = repair(spec.repair)
    return out


def repair(r: Repair) -> dict[str, Any]:
    out: dict[str, Any] = {"next_step": r.next_step, "tool": r.tool, "arguments": dict(r.arguments)}
    if r.alternative:
        out["alternative"] = r.alternative
    return out


def confirmation(confirm: Confirm) -> dict[str, Any]:
    out: dict[str, Any] = {"message": confirm.message, "when": [condition(c) for c in confirm.when] or "always"}
    if confirm.over:
        out["over_items"] = confirm.over
    return out


def condition(c: Condition) -> str:
    if c.step is not None:
        return f"step {c.step} ended so"
    if c.equals is not None:
        return f"{c.param} {'=' if c.present else '!='} {c.equals!r}"
    return f"{c.param} {'given' if c.present else 'omitted'}"
