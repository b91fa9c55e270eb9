"""Everything a server returns is built here, and every string in it is shown as a reader of
GitHub's page would see it.

Tool results and error envelopes, resource contents and read errors, JSON-RPC error data and
completions are made by the functions below only (tests/lint/test_outbound.py fails on any other
construction in the runtime, the generated servers or the hooks). Each walks what it returns and
cleans every string (`untrusted.sanitize`) except `Clean` ones: text the projector already
cleaned and counted in its row's `hidden_removed`, or the server's own text marked as such. So
text from GitHub that reaches a caller by any other road (an error's `details.choices`, a field
name a 422 echoes, a completion) is cleaned too; it just carries no count.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp import MCPError
from mcp.types import (
    CallToolResult,
    CompleteResult,
    Completion,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ReadResourceResult,
    TextContent,
    TextResourceContents,
)

from ghmcp_runtime.cleaning.untrusted import Clean, sanitize

__all__ = ["Clean", "completion", "input_required_result", "resource_json", "resource_result", "rpc_error", "tool_error",
           "tool_result", "visible"]


def visible(value: Any) -> Any:
    """`value` (JSON-like) with every string and key cleaned, `Clean` ones kept as they are."""
    if isinstance(value, str):
        return value if isinstance(value, Clean) else sanitize(value)[0]
    if isinstance(value, Mapping):
        return {k if k.isascii() and k.isidentifier() else visible(k): visible(v)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [visible(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_result(payload: Mapping[str, Any]) -> CallToolResult:
    """A successful call: `structuredContent` and the same JSON as text."""
    shown = visible(payload)
    return CallToolResult(content=[TextContent(type="text", text=_json(shown))],
                          structured_content=shown)


def input_required_result(key: str, message: str, form: Mapping[str, Any], state: str) -> InputRequiredResult:
    """A call answered with a question (2026-07-28's input_required): `message` asked with `form`
    under `key`; `state` is what the retry brings back."""
    params = ElicitRequestFormParams(message=visible(message), requested_schema=dict(form))
    return InputRequiredResult(input_requests={key: ElicitRequest(params=params)}, request_state=state)


def tool_error(envelope: Mapping[str, Any], text: str) -> CallToolResult:
    """A failed call: the error envelope, and `text` (its message and next step) as content."""
    return CallToolResult(content=[TextContent(type="text", text=visible(text))],
                          structured_content=visible(envelope), is_error=True)


def resource_result(uri: str, mime_type: str | None, text: str, *, ttl_ms: int,
                    cache_scope: Any) -> ReadResourceResult:
    """A resource read whose contents are `text` (a server document: mark it `Clean`)."""
    return ReadResourceResult(
        contents=[TextResourceContents(uri=uri, mime_type=mime_type, text=visible(text))],
        ttl_ms=ttl_ms, cache_scope=cache_scope)


def resource_json(uri: str, mime_type: str | None, body: Any, *, ttl_ms: int,
                  cache_scope: Any) -> ReadResourceResult:
    """A resource read whose contents are `body` as JSON."""
    return resource_result(uri, mime_type, Clean(_json(visible(body))), ttl_ms=ttl_ms,
                           cache_scope=cache_scope)


def rpc_error(code: int, message: str, data: Mapping[str, Any] | None = None) -> MCPError:
    """A JSON-RPC error (its `data`, when given, the error envelope's JSON-RPC form)."""
    if data is None:
        return MCPError(code, visible(message))
    return MCPError(code, visible(message), visible(data))


def completion(values: list[str], limit: int) -> CompleteResult:
    """Completion values (names from GitHub), the first `limit` of them."""
    shown = [visible(v) for v in values]
    return CompleteResult(completion=Completion(values=shown[:limit], total=len(shown),
                                                has_more=len(shown) > limit))
