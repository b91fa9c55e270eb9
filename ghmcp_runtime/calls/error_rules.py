"""Which declared `on_error` rules match an upstream failure, the server-wide rules, and the
ToolError a declared error envelope builds.

A rule's `Match` may test GitHub's status, errors[0].code, the code the runtime chose, the field
it names, the failed request's method, and GitHub's own `message` (a case-insensitive substring
or a regular expression), so one status can mean several things: a 403 "Must have push access"
is not a missing token scope.

Server-wide rules (the override file's top-level `on_error`) refine every upstream failure of
every tool, hooks included, in `ToolContext.call`; a step's own `on_error` then sees their code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ghmcp_runtime.core.declared import ErrorSpec, Match, OnError
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError, UpstreamError
from ghmcp_runtime.core.refs import MISSING, Scope, render

SHARED_DETAILS = frozenset({"field", "fields", "value", "reason"})


@lru_cache(maxsize=256)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def matches(when: Match, err: ToolError, method: str | None = None) -> bool:
    upstream = err if isinstance(err, UpstreamError) else None
    message = upstream.upstream_message if upstream is not None else ""
    field = (err.details or {}).get("field")
    return ((when.status is None or when.status == (upstream.status if upstream else None))
            and (when.github_code is None or when.github_code == (upstream.github_code if upstream else None))
            and (when.code is None or when.code == err.code)
            and (when.field is None or when.field == field)
            and (not when.method or method in when.method)
            and (when.message_contains is None or when.message_contains.casefold() in message.casefold())
            and (when.message_matches is None or _pattern(when.message_matches).search(message) is not None))


def refine(rules: Sequence[OnError], err: UpstreamError, method: str,
           args: Mapping[str, Any]) -> ToolError:
    """`err` as the first matching server-wide rule answers it (itself when none matches; a lost
    answer is never re-labelled: its outcome is unknown, whatever GitHub said before)."""
    if isinstance(err, OutcomeUnknown):
        return err
    for rule in rules:
        if matches(rule.when, err, method):
            refined = build_error(rule.error, Scope(args, {}, {}), err)
            if isinstance(refined, ToolError) and not isinstance(refined, UpstreamError):
                upstream = UpstreamError(refined.code, refined.message, status=err.status,
                                         github_code=err.github_code, temporary=refined.temporary,
                                         retry_after_ms=refined.retry_after_ms, details=refined.details,
                                         repair=refined.repair, extra=refined.extra)
                upstream.upstream_message = err.upstream_message
                return upstream
            return refined
    return err


def repair_of(spec: ErrorSpec, scope: Scope) -> dict[str, Any] | None:
    """A declared repair with its references rendered against `scope`."""
    if spec.repair is None:
        return None
    r = spec.repair
    out: dict[str, Any] = {"next_step": r.next_step, "tool": r.tool,
                           "arguments": render(dict(r.arguments), scope)}
    if r.alternative:
        out["alternative"] = render(r.alternative, scope)
    return out


def build_error(spec: ErrorSpec, scope: Scope, base: ToolError | None = None,
                details: Mapping[str, Any] | None = None) -> ToolError:
    """A ToolError from a declared envelope, keeping what `base` carried where `spec` is silent
    (under another code, only the details every code shares: a 403's `required_scopes` is not
    the push-access code's)."""
    merged: dict[str, Any] = dict(base.details or {}) if base is not None else {}
    if base is not None and spec.code is not None and spec.code != base.code:
        merged = {k: v for k, v in merged.items() if k in SHARED_DETAILS}
    if spec.field is not None:
        merged["field"] = spec.field
    if spec.reason is not None:
        merged["reason"] = render(spec.reason, scope)
    for name, template in spec.details.items():
        if (value := render(template, scope)) is not MISSING:
            merged[name] = value
    merged.update(details or {})
    message = render(spec.message, scope) if spec.message is not None else (
        base.message if base is not None else "The call failed.")
    err = ToolError(
        spec.code or (base.code if base is not None else "internal_error"),
        message,
        temporary=base.temporary if base is not None and spec.code is None else False,
        retry_after_ms=base.retry_after_ms if base is not None and spec.code is None else None,
        details=merged or None,
        repair=repair_of(spec, scope) or (base.repair if base is not None else None),
        extra=base.extra if base is not None and spec.code is None else None,
    )
    return err
