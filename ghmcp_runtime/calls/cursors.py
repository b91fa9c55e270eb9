"""Opaque, HMAC-protected, stateless pagination cursors bound to tool, query and caller."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from ghmcp_runtime.core.errors import ToolError, repair
from ghmcp_runtime.core.versioning import canonical_json

MAX_TOKEN_CHARS = 4096
_VERSION = 1


def _b64e(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()[:32]


class HmacCursorCodec:
    """token = base64url(payload JSON) "." base64url(HMAC-SHA256(payload)).

    The payload holds the handler state (e.g. page numbers) in the clear but never the
    credential: identity is already a hash, the query is bound by digest.
    """

    def __init__(
        self,
        secret: bytes | None,
        ttl_s: float = 900,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = secret if secret else secrets.token_bytes(32)
        self._ttl_s = ttl_s
        self._clock = clock

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()

    def mint(
        self, *, tool: str, identity: str, bound_to: Mapping[str, Any], state: Mapping[str, Any]
    ) -> str:
        body = {
            "v": _VERSION,
            "t": tool,
            "i": identity,
            "q": _digest(bound_to),
            "s": dict(state),
            "e": int(self._clock() + self._ttl_s),
        }
        payload = canonical_json(body)
        return _b64e(payload) + "." + _b64e(self._mac(payload))

    def open(
        self,
        token: str,
        *,
        tool: str,
        identity: str,
        bound_to: Mapping[str, Any],
        field: str,
        restart_arguments: Mapping[str, Any],
    ) -> dict[str, Any]:
        def invalid(reason: str) -> ToolError:
            return ToolError(
                "invalid_field",
                "The cursor is not valid for this call; restart the listing without it.",
                details={"field": field, "reason": reason},
                repair=repair("restart_without_cursor", tool, restart_arguments),
            )

        body = self._verify(token)
        if body is None:
            raise invalid("not a cursor issued by this server, or it was altered")
        if body.get("t") != tool:
            raise invalid("the cursor was issued by a different tool")
        if body.get("i") != identity:
            raise invalid("the cursor was issued to a different caller")
        if body.get("q") != _digest(bound_to):
            raise invalid("the cursor was issued for different query arguments")
        expiry = body.get("e")
        if not isinstance(expiry, int) or self._clock() >= expiry:
            raise ToolError(
                "cursor_expired",
                "The cursor has expired; restart the listing without it.",
                details={"field": field, "reason": self._lifetime()},
                repair=repair("restart_without_cursor", tool, restart_arguments),
            )
        state = body.get("s")
        if not isinstance(state, dict):
            raise invalid("not a cursor issued by this server, or it was altered")
        return state

    def _lifetime(self) -> str:
        if self._ttl_s >= 60:
            return f"cursors expire {int(self._ttl_s // 60)} minutes after they are issued"
        return f"cursors expire {int(self._ttl_s)} seconds after they are issued"

    def _verify(self, token: Any) -> dict[str, Any] | None:
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS or token.count(".") != 1:
            return None
        encoded, sig = token.split(".")
        try:
            payload, mac = _b64d(encoded), _b64d(sig)
        except (binascii.Error, ValueError):
            return None
        if not hmac.compare_digest(mac, self._mac(payload)):
            return None
        try:
            body = json.loads(payload)
        except ValueError:
            return None
        if not isinstance(body, dict) or body.get("v") != _VERSION:
            return None
        return body
