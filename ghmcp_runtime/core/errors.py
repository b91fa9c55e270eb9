"""The one error envelope, its JSON schema, and the exception handlers raise to produce it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Codes the runtime itself can emit for any tool that talks to GitHub.
UNIVERSAL_CODES = (
    "missing_credential",
    "invalid_credential",
    "insufficient_scope",
    "invalid_field",
    "rate_limited",
    "upstream_unavailable",
)

# what a caller learns of an unexpected failure: no exception text, only where it was logged
INTERNAL_MESSAGE = "The server failed unexpectedly on this call; it was logged under the request_id."


class ToolError(Exception):
    """A tool failure an agent can act on. Rendered as an `isError` result with the envelope.

    `details` is `{field, reason, value?}` for one parameter or `{fields, reason}` across several,
    plus documented code-specific keys (e.g. `required_scopes`, `count`, `choices`). Never put free-form user
    values (titles, bodies, queries, label names, logins) in `details.value` or in `message`.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        temporary: bool = False,
        retry_after_ms: int | None = None,
        details: Mapping[str, Any] | None = None,
        repair: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.temporary = temporary
        self.retry_after_ms = retry_after_ms if temporary else None
        self.details = dict(details) if details else None
        self.repair = dict(repair) if repair else None
        self.extra = dict(extra) if extra else {}
        # arguments a repeat of the call passes to go on from what this one applied (a batch's
        # retry after a rate limit: the version its own writes left); never in the envelope
        self.resume: dict[str, Any] = {}

    def envelope(self, *, request_id: str, fingerprint: str) -> dict[str, Any]:
        env: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "temporary": self.temporary,
            "retry_after_ms": self.retry_after_ms,
        }
        if self.details:
            env["details"] = self.details
        if self.repair:
            env["repair"] = self.repair
        env.update(self.extra)
        env["request_id"] = request_id
        env["fingerprint"] = fingerprint
        return env


class UpstreamError(ToolError):
    """A ToolError mapped from a GitHub response; `status`/`github_code` let hooks refine it."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int | None = None,
        github_code: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(code, message, **kwargs)
        self.status = status  # HTTP status, None when no response arrived
        self.github_code = github_code  # GitHub's errors[0].code on a 422
        # GitHub's own `message` (for on_error's message_contains/matches; never shown as is)
        self.upstream_message = ""


class OutcomeUnknown(UpstreamError):
    """A write whose effect is unknown (timeout, lost response, 5xx): it may have been applied.

    The idempotency layer keeps the key pending on this error and recovers on the next attempt.
    """

    def __init__(self, code: str, message: str, *, source: str = "The forge", **kwargs: Any) -> None:
        super().__init__(code, message, **kwargs)
        self.source = source  # who lost the answer, for messages ("GitHub")

    def not_applied(self, why: str = "", reason: str = "the change was not applied; repeat the call") -> OutcomeUnknown:
        """Say that a re-read, once the write had ended, shows it was not applied (`why`: what
        else it shows, a sentence)."""
        self.message = (f"{self.source}'s answer to a change was lost; a re-read shows it was not "
                        f"applied.{' ' + why if why else ''}")
        self.details = {**(self.details or {}), "reason": reason}
        return self


@dataclass(slots=True)
class WriteLog:
    """What a call's writes have done so far, kept on its context (`ToolContext.writes`) by
    `writes.run_steps`: once a write was sent, every error the call raises, whoever built it
    (an error mapper in a hook included), is answered with exactly these fields (`annotate`)."""

    sent: bool = False
    applied: list[str] = field(default_factory=list)  # fields GitHub shows changed
    unknown: list[str] = field(default_factory=list)  # fields whose change is unknown
    after: Any = None  # the resource as the writes so far left it (None before the first)

    def annotate(self, err: ToolError) -> ToolError:
        if not self.sent:
            return err
        details = dict(err.details or {})
        if details.get("applied_fields") != self.applied:
            details["applied_fields"] = list(self.applied)
        err.details = details
        if self.applied and APPLIED not in err.message:
            err.message += f"{APPLIED}{', '.join(self.applied)}."
        if self.unknown and UNKNOWN not in err.message:
            err.message += f" Whether {', '.join(self.unknown)}{UNKNOWN}"
        return err


APPLIED = " Applied before the failure: "
UNKNOWN = " changed is unknown: read the resource first."


def repair(
    next_step: str, tool: str, arguments: Mapping[str, Any], alternative: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"next_step": next_step, "tool": tool, "arguments": dict(arguments)}
    if alternative:
        out["alternative"] = alternative
    return out


def jsonrpc_data(envelope: Mapping[str, Any], resource_uri: str | None = None) -> dict[str, Any]:
    """The same envelope for a JSON-RPC `error.data`: `code`/`message` renamed, nothing else."""
    data = {("machine_code" if k == "code" else "human_message" if k == "message" else k): v
            for k, v in envelope.items()}
    if resource_uri is not None:
        data["resource_uri"] = resource_uri
    return data


ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["code", "message", "temporary", "retry_after_ms", "request_id"],
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "temporary": {"type": "boolean"},
        "retry_after_ms": {"type": ["integer", "null"]},
        "details": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "field": {"type": "string"},
                "fields": {"type": "array", "items": {"type": "string"}},
                "value": {},
                "reason": {"type": "string"},
                "required_scopes": {"type": "array", "items": {"type": "string"}},
                "count": {"type": "integer"},
                "choices": {"type": "array", "items": {"type": "string"}},
                "applied_fields": {"type": "array", "items": {"type": "string"}},
                "concurrent_fields": {"type": "array", "items": {"type": "string"}},
                "candidates": {"type": "array", "items": {"type": "object"}},
                "allowed_repositories": {"type": "array", "items": {"type": "string"}},
            },
        },
        "repair": {
            "type": "object",
            "additionalProperties": False,
            "required": ["next_step", "tool", "arguments"],
            "properties": {
                "next_step": {"type": "string"},
                "tool": {"type": "string"},
                "arguments": {"type": "object"},
                "alternative": {"type": "string"},
            },
        },
        "rate_limit_remaining": {"type": "integer"},
        "request_id": {"type": "string"},
        "fingerprint": {"type": "string"},
    },
}


# What each tool's outputSchema carries for the error branch: the names of the envelope's
# always-present fields, nothing else. It accepts every real envelope (details, repair,
# fingerprint … are allowed) and rejects every success payload (none has `code`), so each result
# matches exactly one branch; the closed, typed ENVELOPE_SCHEMA is published once, in the
# error-catalog resource, instead of ~260 B of it in every tool.
ENVELOPE_OUTPUT_SCHEMA: dict[str, Any] = {"required": ENVELOPE_SCHEMA["required"]}
