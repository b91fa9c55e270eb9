"""Reading what a token is allowed, the way its forge tells it (the profile's `ScopeRead`).

GitHub: every answer to a classic or OAuth-app token carries `X-OAuth-Scopes`; `GET /rate_limit`
spends no rate-limit budget, so it is the read. Fine-grained, App user and installation tokens
never get the header (their permissions are not listed), so they are not asked about at all.
Forgejo: a token that may read its own account (`read:user`) may list the account's tokens, each
with its scopes and last eight characters; a token without that scope stays unknown.

Anything else (a network failure, a 5xx, a rejected token) leaves the scopes unknown: the caller
then keeps every tool and the forge's refusals stand, as without this read.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.logs import log_event
from ghmcp_runtime.guards.token_access import UNLISTED, TokenAccess

MAX_TOKEN_PAGES = 4  # Forgejo: an account's tokens, at the largest page each


async def read_access(upstream: ForgeUpstream, forge: ForgeProfile, token: str) -> TokenAccess:
    kind = forge.scopes.kind(token)
    read = forge.scope_read
    if read is None or kind in UNLISTED:
        return TokenAccess(kind)
    try:
        scopes = await (_from_header(upstream, forge, token) if read.header
                        else _from_token_list(upstream, forge, token))
    except httpx.RequestError as exc:
        log_event("token_scopes_unread", level=logging.WARNING, reason=type(exc).__name__)
        scopes = None
    return TokenAccess(kind, scopes)


def parse_scopes(value: str) -> frozenset[str]:
    return frozenset(s.strip() for s in value.split(",") if s.strip())


async def _from_header(upstream: ForgeUpstream, forge: ForgeProfile, token: str) -> frozenset[str] | None:
    read = forge.scope_read
    assert read is not None and read.header is not None
    resp = await upstream.answer(read.operation, token)
    raw = resp.headers.get(read.header)
    if resp.status == 401 or resp.status >= 500 or raw is None:
        return None
    return parse_scopes(raw)


async def _from_token_list(upstream: ForgeUpstream, forge: ForgeProfile,
                           token: str) -> frozenset[str] | None:
    read = forge.scope_read
    assert read is not None and read.account_param and read.tail_field and read.scopes_field
    me = await upstream.answer(forge.viewer, token)
    login = me.data.get(forge.login_field) if me.status == 200 and isinstance(me.data, dict) else None
    if not isinstance(login, str) or not login:
        return None
    found: list[frozenset[str]] = []
    for page in range(1, MAX_TOKEN_PAGES + 1):
        resp = await upstream.answer(read.operation, token, path={read.account_param: login},
                                     query=forge.page_query(page, forge.max_page_size))
        rows: Any = resp.data
        if resp.status != 200 or not isinstance(rows, list):
            return None
        found += [frozenset(str(s) for s in row.get(read.scopes_field) or ())
                  for row in rows if isinstance(row, dict) and row.get(read.tail_field) == token[-8:]]
        if len(rows) < forge.max_page_size:
            break
    # two of the account's tokens ending alike, with different scopes: which one is this?
    return found[0] if len(set(found)) == 1 else None
