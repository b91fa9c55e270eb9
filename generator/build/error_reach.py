"""Which upstream error codes a tool can still emit once the server-wide `on_error` rules ran.

The runtime maps a forge's failure to a code by its HTTP status (ghmcp_runtime/calls/upstream.py),
then the server-wide rules refine it, first match first (ghmcp_runtime/calls/error_rules.py). A
rule that catches every failure a code comes from — `{when: {code: not_found}, code:
pull_request_not_found}`, or `{when: {status: 409}, code: head_changed}` on a tool whose only
409s are conflicts — leaves that code unreachable, so the tool's error catalog drops it. Only
codes that come from a forge's answer alone are dropped; `invalid_field`, `rate_limited` and
`upstream_unavailable` also arise without one (argument checks, limits, timeouts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from generator.base.diagnostics import Diagnostic, Level, Where
from generator.base.yamlsrc import Located
from generator.build.ir import IROperation
from generator.language.overrides import ToolDef
from ghmcp_runtime.core.declared import Match, OnError

OTHER = 0  # any status the mapping below does not name (a 405, a 5xx): upstream_unavailable
NAMED_STATUSES = frozenset({401, 403, 404, 409, 410, 422, 429})
# the statuses each code every tool can emit comes from (what the runtime's mapping does)
ALWAYS = {"invalid_credential": (401,), "insufficient_scope": (403,), "rate_limited": (403, 429),
          "invalid_field": (422,), "upstream_unavailable": (OTHER,)}
# codes that only a forge's answer produces: a rule catching all of those answers removes them
ANSWER_ONLY = frozenset({"invalid_credential", "insufficient_scope", "conflict", "issue_locked"})
PARENTS = (("/repos/{owner}/{repo}", "repo_not_found"), ("/orgs/{org}", "org_not_found"))

Origin = tuple[int, str]  # (HTTP status, request method) a code comes from


def origins(ops: Sequence[IROperation]) -> dict[str, set[Origin]]:
    """Each upstream code the tool's operations can fail with, and where it comes from."""
    found: dict[str, set[Origin]] = {}

    def add(code: str, statuses: Iterable[int], method: str) -> None:
        found.setdefault(code, set()).update((s, method) for s in statuses)

    for op in ops:
        for code, statuses in ALWAYS.items():
            add(code, statuses, op.method)
        add(op.not_found, (404, 410), op.method)
        for prefix, code in PARENTS:
            if prefix in op.path:
                add(code, (404,), op.method)
        if op.method != "GET":
            add("conflict", (409,), op.method)
            if "{issue_number}" in op.path:
                add("issue_locked", (403,), op.method)
    return found


def _status_matches(when: Match, status: int) -> bool:
    if when.status is None:
        return True
    return when.status == status if status != OTHER else when.status not in NAMED_STATUSES


def may_match(when: Match, code: str, where: set[Origin]) -> bool:
    return when.code in (None, code) and any(
        _status_matches(when, s) and (not when.method or m in when.method) for s, m in where)


def catches_all(when: Match, code: str, where: set[Origin]) -> bool:
    """Every failure with `code` matches `when` (nothing but the code, status and method tested)."""
    if when.github_code or when.field or when.message_contains or when.message_matches:
        return False
    return when.code in (None, code) and all(
        _status_matches(when, s) and (not when.method or m in when.method) for s, m in where)


@dataclass(frozen=True, slots=True)
class Reach:
    added: frozenset[str]  # codes the rules give the tool's failures
    dropped: Mapping[str, int]  # code -> index of the server-wide rule that leaves it unreachable


def reach(rules: Sequence[OnError], ops: Sequence[IROperation], implied: set[str]) -> Reach:
    """What the server-wide `rules` do to a tool calling `ops` whose codes are `implied`: the
    codes they add (a rule applies when some failure of the tool can match it), and the codes
    no failure of the tool keeps."""
    where = {code: found for code, found in origins(ops).items() if code in implied}
    added = {rule.error.code for rule in rules if rule.error.code is not None
             and any(may_match(rule.when, code, found) for code, found in where.items())}
    dropped: dict[str, int] = {}
    for code, found in where.items():
        if code not in ANSWER_ONLY and not code.endswith("_not_found") and code != "not_found":
            continue
        for index, rule in enumerate(rules):
            if not may_match(rule.when, code, found):
                continue
            if rule.error.code in (None, code):
                break  # some of these failures keep the code
            if catches_all(rule.when, code, found):
                dropped[code] = index
                break
    return Reach(frozenset(added), dropped)


def dead_step_rules(tool: ToolDef, loc: tuple[str | int, ...], reached: Reach,
                    rules: Sequence[tuple[Where, OnError]], located: Located) -> list[Diagnostic]:
    """A step's `on_error` matching a code the server-wide rules leave unreachable never fires."""
    out = []
    for k, step in enumerate(tool.steps or []):
        for j, raw in enumerate(step.on_error):
            code = raw.when.code
            if code is None or code not in reached.dropped or code in reached.added:
                continue
            where, rule = rules[reached.dropped[code]]
            out.append(Diagnostic(
                Level.ERROR, located.where((*loc, "steps", k, "on_error", j, "when", "code")),
                f"{tool.name}: this rule matches {code!r}, which no failure of the tool keeps: the "
                f"server-wide rule at {where} turns every one into {rule.error.code!r}",
                f"match {rule.error.code!r} here, or narrow the server-wide rule", "error-reach"))
    return out
