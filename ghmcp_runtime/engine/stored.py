"""Whether GitHub holds the text a write sent exactly as sent (`declared.Stored`).

A write's answer is GitHub's copy of the resource, so comparing it with what was sent tells an
agent, without a read-back, whether the text it wrote is the text GitHub keeps: GitHub trims
titles, for instance. Text is compared exactly (a changed character or line ending is a
difference); null and "" count as the same (GitHub answers null for an empty body). The rows an
agent reads are cleaned of hidden markup, so they cannot show this; the answer's
`stored_as_sent: false` (present only then) does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ghmcp_runtime.core.projection import walk
from ghmcp_runtime.engine.settle import same

STORED = "stored_as_sent"  # the output saying the texts sent are GitHub's texts
ALTERED = "altered_fields"  # the output naming the parameters whose text GitHub changed


def altered(sent: Mapping[str, Any], shown: Any, fields: Mapping[str, tuple[str, ...]],
            names: Mapping[str, str] | None = None) -> list[str]:
    """The parameters (`names` maps a body field to its parameter) whose sent text `shown`, the
    resource GitHub answered with, holds differently; only fields in `sent` are compared."""
    out: list[str] = []
    for key, path in fields.items():
        if key in sent and not same(sent[key], walk(shown, path) if isinstance(shown, Mapping) else None):
            out.append((names or {}).get(key, key))
    return out


def outputs(changed_text: list[str]) -> dict[str, Any]:
    """Nothing when GitHub keeps the text as sent; else `stored_as_sent: false` and
    `altered_fields` (a field saying nothing happened is absent: the summary says so)."""
    return {STORED: False, ALTERED: changed_text} if changed_text else {}
