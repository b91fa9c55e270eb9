"""Forge REST calls: URL building, headers, retries for reads, and status → ToolError mapping.

What differs per forge (headers, auth scheme, error bodies, rate-limit headers, parent probes)
comes from the server's forge profile (`ghmcp_runtime.core.forges`)."""

from __future__ import annotations

import json
import math
import posixpath
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import anyio

from ghmcp_runtime.base.lazy import lazy_module
from ghmcp_runtime.calls.context import ToolContext, UpstreamResponse
from ghmcp_runtime.calls.http_cache import PARTITION, HttpCache
from ghmcp_runtime.core.concurrent import DEFAULT_INFLIGHT_PER_CALLER, CallerSlots
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError, UpstreamError
from ghmcp_runtime.core.forge_clock import ForgeClock
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.forges import GITHUB
from ghmcp_runtime.core.logs import log_event
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.guards.caller import usable_token

if TYPE_CHECKING:
    import httpx
else:  # loaded by the first request, not at start-up (issue 24, cold start)
    httpx = lazy_module("httpx")

USER_AGENT = "ghmcp"  # a server sends its own name (`build_server`)
READ_METHODS = frozenset({"GET", "HEAD"})
MAX_REDIRECTS = 3
REDIRECTS = frozenset({301, 302, 303, 307, 308})
MOVED = ("{forge} redirects this request elsewhere (a renamed repository or a transferred "
         "issue); it is not repeated at another address, so nothing was changed. Read it to learn "
         "where it is now, then call again there.")
_PARAM = re.compile(r"\{([A-Za-z0-9_]+)\}")
# (seconds for any request phase, seconds to connect)
DEFAULT_TIMEOUT = (20.0, 5.0)

# tool-neutral: the idempotency runner replaces it with same-key advice when the call had a key
MAYBE_APPLIED = "the request may have been applied; read the resource before repeating the call"

TokenResolver = Callable[[ToolContext], str | None]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries for reads only; writes are never retried."""

    max_retries: int = 2
    base_delay_s: float = 0.25
    max_delay_s: float = 2.0
    max_total_wait_s: float = 5.0
    default_retry_after_ms: int = 1000  # suggested to the agent when the forge gives no hint

    def delay(self, attempt: int, hint_s: float | None, jitter: float) -> float:
        backoff = min(self.max_delay_s, self.base_delay_s * 2.0**attempt) * (0.5 + jitter / 2)
        return max(backoff, hint_s or 0.0)


class _Transient(Exception):
    """A read attempt that may succeed when repeated; carries the error to raise otherwise."""

    def __init__(self, error: ToolError, wait_hint_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.wait_hint_s = wait_hint_s


def credential_from_context(ctx: ToolContext) -> str | None:
    return ctx.credential


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_query_value(v) for v in value)
    return str(value)


class ForgeUpstream:
    def __init__(
        self,
        *,
        forge: ForgeProfile = GITHUB,
        base_url: str | None = None,
        api_version: str | None = None,
        token: TokenResolver = credential_from_context,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: httpx.Timeout | float | tuple[float, float] = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        jitter: Callable[[], float] = random.random,
        cache: HttpCache | None = None,
        inflight_per_caller: int = DEFAULT_INFLIGHT_PER_CALLER,
        user_agent: str = USER_AGENT,
    ) -> None:
        url = base_url or forge.default_api_url
        if not url:
            raise ValueError(f"{forge.api_url_env} is not set: say which {forge.display_name} "
                             "instance's API to call")
        self.forge = forge
        self.base_url = url.rstrip("/")
        self._origin = urlsplit(self.base_url)[:2]
        self._base_path = urlsplit(self.base_url).path  # "" for api.github.com, /api/v1 for Forgejo
        self._headers = {**forge.headers(api_version), "User-Agent": user_agent}
        self._token = token
        self._client = client
        self._owns_client = client is None
        self._transport = transport
        self._timeout = timeout
        self._retry = retry or RetryPolicy()
        self._clock = clock
        self._sleep = sleep
        self._jitter = jitter
        self._cache = cache  # conditional reads, per caller; applies to the client built here
        self.caller_slots = CallerSlots(inflight_per_caller)  # the shared pool, fairly
        self.forge_clock = ForgeClock()  # the forge's clock against ours, from every answer's Date

    def _http(self) -> httpx.AsyncClient:
        if self._client is None or (self._owns_client and self._client.is_closed):
            transport = self._transport
            if self._cache is not None:  # hishel's storages load on the first request (~170 ms)
                from ghmcp_runtime.calls.http_cache_store import caching_transport

                transport = caching_transport(transport or httpx.AsyncHTTPTransport(),
                                              self._cache.where, self._cache.bounds())
            timeout = self._timeout
            if isinstance(timeout, tuple):
                timeout = httpx.Timeout(timeout[0], connect=timeout[1])
            self._client = httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def url(self, template: str, path: Mapping[str, str | int], multi_segment: tuple[str, ...] = ()) -> str:
        def segment(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in multi_segment:  # a/b/c: each segment on its own, "" the collection itself
                parts = [quote(part, safe="") for part in str(path[name]).split("/")] if path[name] else []
            else:
                parts = [quote(str(path[name]), safe="")]
            if any(part in ("", ".", "..") for part in parts) or (not parts and name not in multi_segment):
                # URL normalization (here or at GitHub) would drop the segment and address
                # another resource: DELETE …/labels/.. is the issue itself. Never send it.
                raise ToolError("invalid_field", "A name cannot be empty, '.' or '..'.",
                                details={"reason": f"{name} is empty or a dot segment"})
            return "/".join(parts)

        return self.base_url + _PARAM.sub(segment, template)

    async def call(
        self,
        ctx: ToolContext,
        op: Operation,
        *,
        path: Mapping[str, str | int],
        query: Mapping[str, Any] | None,
        body: Any,
    ) -> UpstreamResponse:
        forge = self.forge
        token = self._token(ctx)
        if not token:
            raise ToolError(
                "missing_credential",
                f"No {forge.display_name} token is configured: set {forge.token_env}, or send an "
                "Authorization: Bearer header over HTTP.",
            )
        if not usable_token(token):
            # would crash header encoding (non-ASCII) or smuggle a header (CR/LF): never sent
            raise ToolError(
                "invalid_credential",
                f"The token is malformed ({forge.token_rule}); supply a valid token. Nothing was "
                f"sent to {forge.display_name}.",
            )
        url = self.url(op.path, path, op.multi_segment)
        params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        if op.method.upper() not in READ_METHODS:
            return await self._write(ctx, op, token, url, params, body, path)
        waited = 0.0
        for attempt in range(self._retry.max_retries + 1):
            try:
                return await self._read(ctx, op, token, url, params, attempt, path)
            except _Transient as t:
                delay = self._retry.delay(attempt, t.wait_hint_s, self._jitter())
                last = attempt == self._retry.max_retries
                if last or waited + delay > self._retry.max_total_wait_s:
                    raise t.error from None
                waited += delay
                await self._sleep(delay)
        raise AssertionError("unreachable")

    async def _read(
        self,
        ctx: ToolContext,
        op: Operation,
        token: str,
        url: str,
        params: dict[str, str],
        attempt: int,
        path: Mapping[str, str | int],
    ) -> UpstreamResponse:
        try:
            resp = await self._send(ctx, op, token, op.method, url, params, None, attempt)
        except httpx.RequestError as exc:
            raise _Transient(self._unavailable(None, None, exc)) from None
        if resp.status_code >= 500:
            err = self._unavailable(resp, resp.status_code)
            raise _Transient(err, _retry_after_s(resp))
        if resp.is_success:
            try:
                return _parsed(resp, op)
            except ValueError:
                raise _Transient(self._unavailable(resp, resp.status_code)) from None
        err = await self._map_error(ctx, op, token, resp, path)
        hint = _retry_after_s(resp)
        if err.code == "rate_limited" and hint is not None and resp.status_code in (403, 429):
            raise _Transient(err, hint)  # secondary limit with a short, explicit wait
        raise err

    async def _write(
        self,
        ctx: ToolContext,
        op: Operation,
        token: str,
        url: str,
        params: dict[str, str],
        body: Any,
        path: Mapping[str, str | int],
    ) -> UpstreamResponse:
        try:
            resp = await self._send(ctx, op, token, op.method.upper(), url, params, body, 0)
        # the request never reached the forge, so a write was certainly not applied
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol) as exc:
            raise self._unavailable(None, None, exc) from None
        except httpx.RequestError:
            raise self._unknown(None) from None
        if resp.status_code >= 500:
            raise self._unknown(resp)
        if resp.is_success:
            try:
                return _parsed(resp, op)
            except ValueError:
                raise self._unknown(resp) from None
        raise await self._map_error(ctx, op, token, resp, path)

    async def _send(
        self,
        ctx: ToolContext,
        op: Operation,
        token: str,
        method: str,
        url: str,
        params: dict[str, str],
        body: Any,
        attempt: int,
    ) -> httpx.Response:
        headers = {**self._headers, "Authorization": self.forge.authorization(token)}
        for _ in range(MAX_REDIRECTS + 1):
            start = time.perf_counter()
            status: int | None = None
            error: str | None = None
            forge_id: str | None = None
            cached: str | None = None
            sent_at = time.time()  # the wall clock idempotency records attempts with
            try:
                async with self.caller_slots.held(ctx.identity):
                    resp = await self._http().request(
                        method, url, params=params or None, headers=headers,
                        json=body if body is not None else None,
                        extensions={PARTITION: ctx.identity},
                    )
                status = resp.status_code
                if self.forge.request_id_header:
                    forge_id = resp.headers.get(self.forge.request_id_header)
                cached = _cache_outcome(resp)
                if cached != "not_modified":  # a cached answer's Date is as old as the answer
                    self.forge_clock.observe(resp.headers.get("date"), sent_at, time.time())
                self._note_rate_limit(ctx, resp)
            except httpx.RequestError as exc:
                error = type(exc).__name__
                raise
            finally:
                log_event(
                    "upstream", op=op.operation_id, method=method, status=status,
                    ms=round((time.perf_counter() - start) * 1000), attempt=attempt + 1,
                    request_id=ctx.request_id, upstream_request_id=forge_id, error=error, cache=cached,
                )
            location = resp.headers.get("location")
            if resp.status_code not in REDIRECTS or not location or not ctx.follow_redirects \
                    or method.upper() not in READ_METHODS:
                return resp  # a change is never repeated at another address (_classify: moved)
            # forges redirect renamed/transferred repositories; a read is repeated verbatim, and
            # only inside the API's own base path, so the token never reaches anything else
            target = resp.url.join(location)
            if not self._inside_api(target):
                return resp
            url, params = str(target), {}
        return resp

    def _inside_api(self, target: httpx.URL) -> bool:
        """Same scheme, host and port as the base URL, and a path under its base path (an
        instance may share its origin with other applications)."""
        if (target.scheme, target.netloc.decode()) != self._origin:
            return False
        path = posixpath.normpath(target.path) if target.path else "/"
        return not self._base_path or path == self._base_path or path.startswith(self._base_path + "/")

    def _note_rate_limit(self, ctx: ToolContext, resp: httpx.Response) -> None:
        names = self.forge.rate_limit
        if names is None:
            return
        remaining = _int(resp.headers.get(names.remaining))
        limit = _int(resp.headers.get(names.limit))
        if remaining is not None and limit is not None:
            ctx.note_rate_limit(remaining, limit)

    def _unavailable(
        self, resp: httpx.Response | None, status: int | None, exc: Exception | None = None
    ) -> UpstreamError:
        hint = _retry_after_s(resp) if resp is not None else None
        retry_ms = int(hint * 1000) if hint is not None else self._retry.default_retry_after_ms
        name = self.forge.display_name
        if exc is not None:
            reason = f"{name} did not answer in time" if isinstance(
                exc, httpx.TimeoutException) else f"the connection to {name} failed"
        elif status is not None and status >= 500:
            reason = f"{name} answered with server error {status}"
        else:
            reason = f"{name}'s answer could not be read"
        return UpstreamError(
            "upstream_unavailable", f"{name} is unavailable or did not answer in time; retry shortly.",
            temporary=True, retry_after_ms=retry_ms, details={"reason": reason}, status=status,
        )

    def _unknown(self, resp: httpx.Response | None) -> OutcomeUnknown:
        hint = _retry_after_s(resp) if resp is not None else None
        return OutcomeUnknown(
            "upstream_unavailable",
            f"{self.forge.display_name}'s answer to this change was lost; it may have been applied.",
            source=self.forge.display_name,
            temporary=True,
            retry_after_ms=int(hint * 1000) if hint else self._retry.default_retry_after_ms,
            details={"reason": MAYBE_APPLIED},
            status=resp.status_code if resp is not None else None,
        )

    async def _map_error(
        self,
        ctx: ToolContext,
        op: Operation,
        token: str,
        resp: httpx.Response,
        path: Mapping[str, str | int] | None,
    ) -> UpstreamError:
        err = await self._classify(ctx, op, token, resp, path)
        err.upstream_message = self.forge.errors.message(resp)  # what declared on_error rules may match
        return err

    async def _classify(
        self,
        ctx: ToolContext,
        op: Operation,
        token: str,
        resp: httpx.Response,
        path: Mapping[str, str | int] | None,
    ) -> UpstreamError:
        status = resp.status_code
        name = self.forge.display_name
        message = self.forge.errors.message(resp)
        if status in REDIRECTS:
            return UpstreamError(op.not_found, MOVED.format(forge=name), status=status,
                                 details={"reason": "it moved elsewhere"})
        if status == 401:
            return UpstreamError(
                "invalid_credential",
                f"{name} rejected the token; supply a valid, unexpired token.",
                status=status,
            )
        if status in (403, 429):
            limited = self._rate_limited(resp, message)
            if limited is not None:
                return limited
            refusal = self.forge.errors.refusal(resp, message)
            return UpstreamError(refusal.code, refusal.message, details=refusal.details, status=status)
        if status == 404:
            code = op.not_found
            missing = await self._missing_parent(ctx, token, path, op)
            if missing is not None:
                code = missing
            return _not_found(code, status)
        if status == 410:
            return _not_found(op.not_found, status, "it was deleted or transferred")
        if status == 409:
            return UpstreamError(
                "conflict",
                f"{name} reported a conflict with the current state of the resource.",
                details={"reason": "the resource changed or is in a state that forbids this"},
                status=status,
            )
        if status == 422:
            return self._unprocessable(ctx, resp)
        return UpstreamError(
            "upstream_unavailable",
            f"{name} answered with unexpected status {status}.",
            details={"reason": "the request was not applied"},
            status=status,
        )

    def _rate_limited(self, resp: httpx.Response, message: str) -> UpstreamError | None:
        headers, names = resp.headers, self.forge.rate_limit
        remaining = _int(headers.get(names.remaining)) if names else None
        retry_after = _retry_after_s(resp)
        name = self.forge.display_name
        if names is not None and remaining == 0 and retry_after is None:
            reset = _int(headers.get(names.reset))
            wait_ms = 60_000 if reset is None else max(0, math.ceil((reset - self._clock()) * 1000))
            reason = "the token's hourly request quota is used up"
        elif retry_after is not None or self.forge.errors.secondary_limit(message) or resp.status_code == 429:
            wait_ms = int((retry_after if retry_after is not None else self.forge.secondary_limit_wait_s) * 1000)
            reason = f"{name}'s secondary rate limit was hit; slow down" if names else \
                f"{name} asked to slow down"
        else:
            return None
        extra = {"rate_limit_remaining": max(0, remaining or 0)} if names else None
        return UpstreamError(
            "rate_limited",
            f"{name}'s rate limit for this token was reached.",
            temporary=True, retry_after_ms=wait_ms, details={"reason": reason},
            extra=extra, status=resp.status_code,
        )

    async def _missing_parent(
        self, ctx: ToolContext, token: str, path: Mapping[str, str | int] | None, op: Operation
    ) -> str | None:
        """The code of a parent resource (repository, organisation) a 404 is really about."""
        if path is None:
            return None
        for parent in self.forge.parents:
            if op.not_found == parent.code or not all(p in path for p in parent.params):
                continue
            probe = Operation(operation_id=parent.operation_id, method="GET", path=parent.path,
                              not_found=parent.code, success_status=(200,))
            url = self.url(probe.path, {p: path[p] for p in parent.params})
            try:
                resp = await self._send(ctx, probe, token, "GET", url, {}, None, 0)
            except httpx.RequestError:
                return None
            if resp.status_code == 404:
                return parent.code
        return None

    def _unprocessable(self, ctx: ToolContext, resp: httpx.Response) -> UpstreamError:
        raw_field, forge_code, reason = self.forge.errors.unprocessable(resp)
        details: dict[str, Any] = {"reason": reason}
        # the field is named only when it is one of the tool's: the forge's text is not echoed
        field = ctx.tool.field_map.get(raw_field) if raw_field else None
        if raw_field and field is None and raw_field in ctx.tool.input_schema.get("properties", {}):
            field = raw_field
        if field is not None:
            details["field"] = field
        where = f"`{details['field']}`" if "field" in details else "the request"
        return UpstreamError(
            "invalid_field",
            f"{self.forge.display_name} rejected {where}: {reason}.",
            details=details, status=422, github_code=forge_code,
        )


# the upstream's former name, kept while branches that construct it land
GitHubUpstream = ForgeUpstream


def _cache_outcome(resp: httpx.Response) -> str | None:
    """`not_modified` (GitHub's 304, body from the cache), `stored`, or None (no cache involved)."""
    status = resp.extensions.get("caching")
    if not isinstance(status, dict):
        return None
    if status.get("from_cache"):
        return "not_modified"
    return "stored" if status.get("stored") else None


def _parsed(resp: httpx.Response, op: Operation) -> UpstreamResponse:
    """A success answer; ValueError when its body is not JSON or not what `op` returns (a
    proxy's or a captive portal's page answered 200: nothing of it is taken for the resource)."""
    headers = {k.lower(): v for k, v in resp.headers.items()}
    empty = resp.status_code == 204 or not resp.content.strip()
    data = None if empty else json.loads(resp.content)
    if not op.is_answer(resp.status_code, data):
        raise ValueError(f"the answer to {op.operation_id} is not what it returns")
    return UpstreamResponse(status=resp.status_code, data=data, headers=headers)


def _retry_after_s(resp: httpx.Response | None) -> float | None:
    if resp is None:
        return None
    seconds = _int(resp.headers.get("retry-after"))
    return float(max(0, seconds)) if seconds is not None else None


_NOT_FOUND_MESSAGES = {
    "repo_not_found": "The repository was not found, or the token cannot see it.",
    "org_not_found": "The organisation was not found, or the token cannot see it.",
    "issue_not_found": "The issue was not found in this repository.",
    "comment_not_found": "The comment was not found in this repository.",
    "label_not_found": "The label was not found in this repository.",
    "milestone_not_found": "The milestone was not found in this repository.",
    "not_found": "What the call names was not found in this repository.",
}


PARENT_CODES = ("repo_not_found", "org_not_found")


def _not_found(code: str, status: int, reason: str | None = None) -> UpstreamError:
    thing = code.removesuffix("_not_found").replace("_", " ")
    message = _NOT_FOUND_MESSAGES.get(code, f"The {thing} was not found.")
    if reason is None:
        reason = ("it does not exist, or the token cannot see it" if code in PARENT_CODES
                  else "it does not exist in this repository")
    return UpstreamError(code, message, details={"reason": reason}, status=status)
