"""Which declared `on_error` rules match an upstream failure, and the server-wide rules.

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

from ghmcp_runtime.core.declared import Match, OnError
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError, UpstreamError


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
            from ghmcp_runtime.core.refs import Scope
            from ghmcp_runtime.engine.runner import build_error  # the runner imports the context

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
