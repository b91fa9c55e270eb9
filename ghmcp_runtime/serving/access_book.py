"""What each caller's token can use, read once per token and kept.

`AccessBook` keeps one `TokenAccess` per caller identity (an HMAC of the token, so a token never
sits in memory twice), read with the forge's cheap scope read (`calls.scope_read`) the first time
the identity is seen and again after `ttl_s` (a token's owner may change its scopes), one read at
a time per identity however many requests wait for it. An answer it could not read is kept only
briefly, so a forge outage does not fix a caller's surface for long; a refusal the forge answers
later (`insufficient_scope`, `invalid_credential`) forgets the entry, so the next request reads
again. Bounded: the least recently used identity goes first.

Over HTTP, `AccessReader` (in the /mcp endpoint, after the caller is authenticated) makes sure
the request's token has been read before the request reaches the server, and puts what is known
into the request's scope, where `Served.caller_of` finds it. Without HTTP the operator's token is
read when the server starts (`Served.learn_local`).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from ghmcp_runtime.core.logs import call_fields, log_event
from ghmcp_runtime.guards.caller import SERVER_TOKEN_SCOPE_KEY, caller_id, usable_token
from ghmcp_runtime.guards.token_access import UNLISTED, TokenAccess

ACCESS_SCOPE_KEY = "ghmcp.token_access"  # the request's TokenAccess, in its ASGI scope
# set in a request's ASGI scope by a tools/call refused for a missing scope: the scopes to ask
# for (http_auth.ScopeChallenge answers with them)
CHALLENGE_SCOPE_KEY = "ghmcp.scope_challenge"
TTL_S = 600.0
UNREAD_TTL_S = 30.0  # the scopes could not be read: try again this soon
MAX_ENTRIES = 4096

Reader = Callable[[str], Awaitable[TokenAccess]]


class AccessBook:
    def __init__(self, read: Reader, *, ttl_s: float = TTL_S, max_entries: int = MAX_ENTRIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self._ttl_s = ttl_s
        self._max = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, TokenAccess]] = OrderedDict()
        self._pending: dict[str, anyio.Event] = {}

    def known(self, identity: str) -> TokenAccess | None:
        entry = self._entries.get(identity)
        if entry is None or entry[0] <= self._clock():
            return None
        self._entries.move_to_end(identity)
        return entry[1]

    async def learn(self, identity: str, token: str) -> TokenAccess:
        """The token's access: kept, or read now (once, however many callers ask meanwhile)."""
        while True:
            known = self.known(identity)
            if known is not None:
                return known
            pending = self._pending.get(identity)
            if pending is None:
                break
            await pending.wait()
            if identity not in self._entries:  # the read failed outright: read again
                break
        done = self._pending[identity] = anyio.Event()
        try:
            with call_fields(caller=identity, request_id="req_" + secrets.token_hex(6)):
                access = await self._read(token)
                log_event("token_scopes", access=access.describe())
            ttl = self._ttl_s if access.scopes is not None or access.kind in UNLISTED else UNREAD_TTL_S
            self._entries[identity] = (self._clock() + ttl, access)
            self._entries.move_to_end(identity)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
            return access
        finally:
            del self._pending[identity]
            done.set()

    def forget(self, identity: str) -> None:
        self._entries.pop(identity, None)


class AccessReader:
    """The /mcp endpoint's step that reads the request's token before the server sees the request."""

    def __init__(self, app: ASGIApp, book: AccessBook, identity_key: bytes,
                 server_token: str | None) -> None:
        self.app = app
        self.book = book
        self.key = identity_key
        self.server_token = server_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = self._token(scope)
        if token is not None and usable_token(token):
            try:
                scope[ACCESS_SCOPE_KEY] = await self.book.learn(caller_id(self.key, token), token)
            except Exception:  # never a reason to refuse the request: the forge judges the token
                log_event("token_scopes_unread", level=logging.WARNING, exc_info=True)
        await self.app(scope, receive, send)

    def _token(self, scope: Scope) -> str | None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        user: Any = scope.get("user")
        if isinstance(user, AuthenticatedUser):
            token: str = user.access_token.token
            return token
        return self.server_token if scope.get(SERVER_TOKEN_SCOPE_KEY) is True else None
