"""Built-in error codes: what the runtime can emit for any tool, worded once per forge.

An override file lists only its own codes (or new wording for these); the catalog of a generated
server holds the codes its tools can emit. `{forge}` and `{token_env}` are the forge profile's
name and token variable (GitHub, GITHUB_TOKEN; Forgejo, FORGEJO_TOKEN).
"""

from __future__ import annotations

from generator.language.overrides import ErrorCodeDef
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.forges import GITHUB


def _code(temporary: bool, description: str, repair: str) -> ErrorCodeDef:
    return ErrorCodeDef(temporary=temporary, description=description, repair=repair)


_WORDING: dict[str, ErrorCodeDef] = {
    "missing_credential": _code(False, "No {forge} token was supplied.",
                                "Configure {token_env} (stdio) or send an Authorization bearer token (HTTP)."),
    "invalid_credential": _code(False, "{forge} rejected the token (expired or revoked).",
                                "Replace the token; retrying unchanged will not help."),
    "insufficient_scope": _code(False, "The token lacks a scope the call needs; details.required_scopes lists it.",
                                "Grant the listed scopes to the token, then retry."),
    "invalid_field": _code(False, "An argument is invalid; details names the field and why.",
                           "Fix the named field and call again."),
    "repo_not_found": _code(False, "The repository does not exist or the token cannot see it.",
                            "Check owner and repo."),
    "not_found": _code(False, "The requested item does not exist or the token cannot see it.",
                       "Check the identifying arguments named in details.field."),
    "org_not_found": _code(False, "The organisation does not exist or the token cannot see it.",
                           "Check org."),
    "issue_not_found": _code(False, "The issue does not exist, was deleted or was transferred.",
                             "Check the issue number."),
    "is_pull_request": _code(False, "The number is a pull request's, not an issue's (details.number, "
                             "details.url): issue tools neither read nor change pull requests, so "
                             "nothing was done.",
                             "Use a pull-request tool with that number (repair.tool names one where "
                             "this server has it); an issue search cannot find it."),
    "comment_not_found": _code(False, "The comment does not exist in the repository.",
                               "Check the comment id."),
    "label_not_found": _code(False, "A label named in the call does not exist in the repository.",
                             "Check the label name."),
    "milestone_not_found": _code(False, "The milestone does not exist in the repository.",
                                 "Check the milestone number."),
    "no_push_access": _code(False, "{forge} refused a change: the token's account has no push (write) "
                            "access to the repository. A token scope does not grant it.",
                            "Use a token of an account a maintainer gave write access, or leave the change "
                            "to one."),
    "issue_locked": _code(False, "The issue is locked and the caller may not change it.",
                          "Ask a collaborator with write access."),
    "conflict": _code(False, "{forge} reported a conflict with the current state; nothing was written.",
                      "Re-read the resource and retry with its current state."),
    "cursor_expired": _code(False, "The cursor is older than 15 minutes.",
                            "Repeat the same call without the cursor."),
    "rate_limited": _code(True, "{forge}'s rate limit is exhausted; retry_after_ms says when it resets.",
                          "Repeat the same call after retry_after_ms."),
    "upstream_unavailable": _code(True, "{forge} failed or timed out; writes were not retried blindly.",
                                  "Repeat the same call after retry_after_ms."),
    "outcome_unknown": _code(False, "An earlier call with this idempotency_key may have written, and "
                             "{forge}'s records cannot tell (several items by this account match "
                             "exactly, or too many changed since); nothing new was written.",
                             "Look with the tool in repair; if the item is missing, call again with "
                             "a new idempotency_key."),
    "confirmation_declined": _code(False, "The user did not confirm this destructive call when asked; "
                                   "nothing was changed.", "Ask the user; call again only if they agree."),
    "internal_error": _code(False, "The server hit an unexpected error; nothing more is known.",
                            "Report it with the request_id."),
}


def builtin_codes(forge: ForgeProfile) -> dict[str, ErrorCodeDef]:
    """The built-in codes worded for `forge`."""
    def worded(text: str) -> str:
        return text.replace("{forge}", forge.display_name).replace("{token_env}", forge.token_env)

    return {code: _code(d.temporary, worded(d.description), worded(d.repair)) for code, d in _WORDING.items()}


BUILTIN_CODES = builtin_codes(GITHUB)  # GitHub's wording (the golden cases' forge)
