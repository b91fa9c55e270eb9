"""File content a forge answers encoded (a contents API's base64 `content` beside its `encoding`):
decoded for a row before untrusted text is cleaned, and cut to a size with a sentinel saying so.

A shape field names a decoder (`decode:`); the decoder reads the value and the object holding it
(its sibling `encoding`). Text is UTF-8 without NUL bytes; anything else is binary, which no row
carries as text. An answer without content (`encoding: none`, a file too large for the API) has
no text either.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

Decoder = Callable[[Any, Any], Any]

TEXT, BINARY, TOO_LARGE = "text", "binary", "too_large"
# the sentinel a cut text ends with; {shown} and {total} are UTF-8 bytes
CUT = "[… truncated: the first {shown} of {total} bytes are shown]"  # on a line of its own


def _bytes(value: Any, holder: Any) -> bytes | str | None:
    """The decoded bytes; TOO_LARGE when the answer carries none; None without content."""
    encoding = holder.get("encoding") if isinstance(holder, Mapping) else None
    if not isinstance(value, str):
        return None
    if encoding not in (None, "base64"):
        return TOO_LARGE
    try:
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def base64_text(value: Any, holder: Any) -> Any:
    """The content as text; None when it is binary, absent or too large to be answered."""
    data = _bytes(value, holder)
    return _text(data) if isinstance(data, bytes) else None


def content_kind(value: Any, holder: Any) -> Any:
    """text, binary or too_large; None without content (a directory entry, a symlink)."""
    data = _bytes(value, holder)
    if data is None or data == TOO_LARGE:
        return data
    assert isinstance(data, bytes)
    return TEXT if _text(data) is not None else BINARY


DECODERS: dict[str, Decoder] = {"base64_text": base64_text, "content_kind": content_kind}


def cut(text: str, limit: int) -> tuple[str, str]:
    """(`text` within `limit` UTF-8 bytes, the sentinel to append): cut at the last line break
    inside the limit, else at a character boundary; ("text", "") when it fits. The sentinel goes
    after the cut text is cleaned, so no markup left open at the cut can hide it."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, ""
    head = data[:limit].decode("utf-8", "ignore")
    line = head.rfind("\n")
    if line > 0:
        head = head[: line + 1]
    shown = len(head.encode("utf-8"))
    sentinel = CUT.format(shown=f"{shown:,}", total=f"{len(data):,}")
    return head, sentinel if head.endswith("\n") else "\n" + sentinel
