"""Cross-field argument rules a flat, closed inputSchema cannot express (checked before any call)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.model import Handler
from ghmcp_runtime.core.transforms import normalizer


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    kind: Literal["at_least_one", "exactly_one", "all_or_none", "requires", "not_together",
                  "not_blank", "excludes", "disjoint", "distinct", "required_when",
                  "forbidden_when"]
    fields: tuple[str, ...]
    reason: str
    when: str | None = None
    among: tuple[bool | int | str, ...] = ()  # for required_when/forbidden_when: `when`'s values that
    # trigger the rule (empty: any value)
    equals: bool | int | str | None = None  # for requires: the value the fields must have (None: any)
    values: tuple[bool | int | str, ...] = ()  # for excludes: the values `fields` may not hold together
    normalize: str | None = None  # for disjoint: the transform both lists' items are compared through
    message: str | None = None  # the error's message (default: "Invalid arguments: <reason>")


def _present(args: Mapping[str, Any], name: str) -> bool:
    return name in args  # an explicit null (e.g. milestone: null) is a value


def _broken(args: Mapping[str, Any], rule: Rule) -> dict[str, Any] | None:
    """The details of a broken not_blank, excludes, distinct or disjoint rule (None: it holds)."""
    if rule.kind == "distinct":
        given = [f for f in rule.fields if _present(args, f)]
        same = [f for f in given if any(args[f] == args[g] for g in given if g != f)]
        return {"fields": same, "reason": rule.reason} if same else None
    if rule.kind == "not_blank":
        blank = [f for f in rule.fields if isinstance(args.get(f), str) and not args[f].strip()]
        return {"field": blank[0], "reason": rule.reason} if blank else None
    if rule.kind == "excludes":
        together = all(_present(args, f) and args[f] == v for f, v in zip(rule.fields, rule.values, strict=True))
        return {"field": rule.fields[-1], "reason": rule.reason} if together else None
    norm = normalizer(rule.normalize)
    lists = [{norm(v) for v in args.get(f) or ()} for f in rule.fields]
    shared = set.intersection(*lists) if lists else set()
    return {"fields": list(rule.fields), "reason": rule.reason} if shared else None


def _triggered(args: Mapping[str, Any], rule: Rule) -> bool:
    """A required_when/forbidden_when rule applies: `when` was given (one of `among`, if any)."""
    return rule.when is not None and _present(args, rule.when) and (
        not rule.among or any(args[rule.when] == v and type(args[rule.when]) is type(v) for v in rule.among))


def check_rules(args: Mapping[str, Any], rules: tuple[Rule, ...]) -> ToolError | None:
    for rule in rules:
        if rule.kind in ("required_when", "forbidden_when"):
            wrong = [] if not _triggered(args, rule) else [
                f for f in rule.fields if _present(args, f) == (rule.kind == "forbidden_when")]
            if wrong:
                return ToolError("invalid_field", rule.message or f"Invalid arguments: {rule.reason}",
                                 details={"field": wrong[0], "reason": rule.reason})
            continue
        if rule.kind in ("not_blank", "excludes", "disjoint", "distinct"):
            broken = _broken(args, rule)
            if broken is not None:
                return ToolError("invalid_field", rule.message or f"Invalid arguments: {rule.reason}",
                                 details=broken)
            continue
        present = [f for f in rule.fields if _present(args, f)]
        missing = [f for f in rule.fields if f not in present]
        if rule.kind == "requires" and rule.equals is not None:
            missing += [f for f in present if args[f] != rule.equals]
        if rule.kind in ("at_least_one", "exactly_one") and not present:
            details: dict[str, Any] = {"fields": list(rule.fields), "reason": rule.reason}
        elif rule.kind in ("not_together", "exactly_one") and len(present) > 1:
            details = {"fields": list(rule.fields), "reason": rule.reason}
        elif (rule.kind == "all_or_none" and present and missing) or (
            rule.kind == "requires" and rule.when and _present(args, rule.when) and missing
        ):
            details = {"field": missing[0], "reason": rule.reason}
        else:
            continue
        return ToolError("invalid_field", rule.message or f"Invalid arguments: {rule.reason}", details=details)
    return None


def with_rules(handler: Handler, rules: tuple[Rule, ...]) -> Handler:
    async def checked(ctx: Any, args: Any) -> Any:
        problem = check_rules(args, rules)
        if problem is not None:
            raise problem
        return await handler(ctx, args)

    checked.__name__ = getattr(handler, "__name__", "handler")
    checked.__qualname__ = checked.__name__
    return checked
