"""Destructive calls confirmed by the user through the protocol (`declared.Confirm`).

* A 2026-07-28 client that declares form elicitation gets an `input_required` result (MRTR): one
  yes/no question, and a `requestState` naming what is confirmed (the SDK's RequestStateBoundary
  seals it, bound to the tool, its arguments and the caller). Its retry carries the answer; an
  answer to another question (the items changed in between) is asked again.
* A 2025-11-25 client that declares form elicitation is asked with `elicitation/create` during
  the call, when the connection can carry a request to it (stdio; not stateless HTTP).
* Every other client keeps the explicit-parameter path unchanged: the call's own arguments
  (`delete_mode: force`, or a dry run before the real call) are the confirmation.

A declined or dismissed question answers `confirmation_declined`; nothing was written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.versioning import canonical_json

QUESTION = "confirm"  # the key of the one input request, and of the form's one field
FORM = {
    "type": "object",
    "properties": {QUESTION: {"type": "boolean", "title": "Go ahead",
                              "description": "true to proceed; this cannot be undone"}},
    "required": [QUESTION],
}
DECLINED = "The user did not confirm this destructive call; nothing was changed."


class InputRequired(Exception):
    """Raised inside a call that must first ask the user: the app answers `input_required`
    with `message` as the question and `digest` as the state the retry brings back."""

    def __init__(self, message: str, digest: str) -> None:
        super().__init__(message)
        self.message = message
        self.digest = digest


def digest(tool: str, args: Mapping[str, Any], items: Sequence[Any] = ()) -> str:
    """What a confirmation is about: the tool, its arguments and the items it will change."""
    return hashlib.sha256(canonical_json([tool, dict(args), list(items)])).hexdigest()[:32]


def accepted(action: str, content: Mapping[str, Any] | None) -> None:
    """Return when the answer confirms; raise confirmation_declined otherwise."""
    if action != "accept" or not content or content.get(QUESTION) is not True:
        raise ToolError("confirmation_declined", DECLINED,
                        details={"reason": f"the user answered {action}"
                                 if action != "accept" else "the user did not tick the confirmation"})
