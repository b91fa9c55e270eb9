"""GitHub REST calls: URL building, headers, retries for reads, and status → ToolError mapping."""

from __future__ import annotations

import json
import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import anyio
import httpx

from ghmcp_runtime.caller import usable_token
from ghmcp_runtime.context import ToolContext, UpstreamResponse
from ghmcp_runtime.errors import OutcomeUnknown, ToolError, UpstreamError
from ghmcp_runtime.github_clock import GitHubClock
from ghmcp_runtime.host_guard import is_loopback
from ghmcp_runtime.http_cache import PARTITION, HttpCache
from ghmcp_runtime.logs import log_event
from ghmcp_runtime.model import Operation

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_API_VERSION = "2022-11-28"
USER_AGENT = "github-issues-mcp"
READ_METHODS = frozenset({"GET", "HEAD"})
MAX_REDIRECTS = 3
_PARAM = re.compile(r"\{([A-Za-z0-9_]+)\}")
# GitHub's refusal on a locked conversation ("Unable to create comment because issue is locked.");
# "Repository access blocked" or a locked repository are something else
_ISSUE_LOCKED = re.compile(r"\b(issue|conversation)\b[^.]{0,40}?\blocked\b", re.IGNORECASE)
_BLOCKED = re.compile(r"\bblocked\b", re.IGNORECASE)
DEFAULT_TIMEOUT = httpx.Timeout(20.0, connect=5.0)
# failures where the request never reached GitHub, so a write was certainly not applied
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)

UNAVAILABLE = "GitHub is unavailable or did not answer in time; retry shortly."
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
    default_retry_after_ms: int = 1000  # suggested to the agent when GitHub gives no hint

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


def check_api_url(url: str, *, allow_insecure: bool = False) -> None:
    """Refuse an API URL that would send tokens in clear text across a network."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError("GITHUB_API_URL must be an https:// URL")
    if not (allow_insecure or is_loopback(parts.hostname)):
        raise ValueError(
            "GITHUB_API_URL is plain http:// to a host that is not loopback, so every token would "
            "cross the network in clear text; use https://, or set GHMCP_ALLOW_INSECURE_API_URL=1"
        )


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


class GitHubUpstream:
    def __init__(
        self,
        *,
        base_url: str = DEFAULT_API_URL,
        api_version: str = DEFAULT_API_VERSION,
        token: TokenResolver = credential_from_context,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        jitter: Callable[[], float] = random.random,
        cache: HttpCache | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._origin = urlsplit(self.base_url)[:2]
        self._headers = {
            # GitHub's media type first; plain JSON as well, which GitHub serves identically and
            # which mocks built from the OpenAPI description (whose responses say
            # application/json) can negotiate instead of answering 406
            "Accept": "application/vnd.github+json, application/json;q=0.9",
            "User-Agent": USER_AGENT,
            "X-GitHub-Api-Version": api_version,
        }
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
        self.github_clock = GitHubClock()  # GitHub's clock against ours, from every answer's Date

    def _http(self) -> httpx.AsyncClient:
        if self._client is None or (self._owns_client and self._client.is_closed):
            transport = self._transport
            if self._cache is not None:
                transport = self._cache.transport(transport or httpx.AsyncHTTPTransport())
            self._client = httpx.AsyncClient(
                transport=transport, timeout=self._timeout, follow_redirects=False
            )
        return self._client

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    def url(self, template: str, path: Mapping[str, str | int]) -> str:
        def segment(m: re.Match[str]) -> str:
            value = quote(str(path[m.group(1)]), safe="")
            if value in ("", ".", ".."):
                # URL normalization (here or at GitHub) would drop the segment and address
                # another resource: DELETE …/labels/.. is the issue itself. Never send it.
                raise ToolError("invalid_field", "A name cannot be empty, '.' or '..'.",
                                details={"reason": f"{m.group(1)} is empty or a dot segment"})
            return value

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
        token = self._token(ctx)
        if not token:
            raise ToolError(
                "missing_credential",
                "No GitHub token is configured: set GITHUB_TOKEN, or send an "
                "Authorization: Bearer header over HTTP.",
            )
        if not usable_token(token):
            # would crash header encoding (non-ASCII) or smuggle a header (CR/LF): never sent
            raise ToolError(
                "invalid_credential",
                "The token is malformed (GitHub tokens are ASCII letters, digits and -._~+/= "
                "only); supply a valid token. Nothing was sent to GitHub.",
            )
        url = self.url(op.path, path)
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
                return _parsed(resp)
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
        except _NOT_SENT as exc:
            raise self._unavailable(None, None, exc) from None
        except httpx.RequestError:
            raise self._unknown(None) from None
        if resp.status_code >= 500:
            raise self._unknown(resp)
        if resp.is_success:
            try:
                return _parsed(resp)
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
        headers = {**self._headers, "Authorization": f"Bearer {token}"}
        for _ in range(MAX_REDIRECTS + 1):
            start = time.perf_counter()
            status: int | None = None
            error: str | None = None
            gh_id: str | None = None
            cached: str | None = None
            sent_at = time.time()  # the wall clock idempotency records attempts with
            try:
                resp = await self._http().request(
                    method, url, params=params or None, headers=headers,
                    json=body if body is not None else None,
                    extensions={PARTITION: ctx.identity},
                )
                status, gh_id = resp.status_code, resp.headers.get("x-github-request-id")
                cached = _cache_outcome(resp)
                if cached != "not_modified":  # a cached answer's Date is as old as the answer
                    self.github_clock.observe(resp.headers.get("date"), sent_at, time.time())
                self._note_rate_limit(ctx, resp)
            except httpx.RequestError as exc:
                error = type(exc).__name__
                raise
            finally:
                log_event(
                    "upstream", op=op.operation_id, method=method, status=status,
                    ms=round((time.perf_counter() - start) * 1000), attempt=attempt + 1,
                    request_id=ctx.request_id, github_request_id=gh_id, error=error, cache=cached,
                )
            location = resp.headers.get("location")
            if resp.status_code not in (301, 302, 307, 308) or not location \
                    or not ctx.follow_redirects:
                return resp
            # GitHub redirects renamed/transferred repositories; the request is repeated
            # verbatim, and only to the same origin, so the token never leaves it.
            target = resp.url.join(location)
            if (target.scheme, target.netloc.decode()) != self._origin:
                return resp
            url, params = str(target), {}
        return resp

    def _note_rate_limit(self, ctx: ToolContext, resp: httpx.Response) -> None:
        remaining = _int(resp.headers.get("x-ratelimit-remaining"))
        limit = _int(resp.headers.get("x-ratelimit-limit"))
        if remaining is not None and limit is not None:
            ctx.note_rate_limit(remaining, limit)

    def _unavailable(
        self, resp: httpx.Response | None, status: int | None, exc: Exception | None = None
    ) -> UpstreamError:
        hint = _retry_after_s(resp) if resp is not None else None
        retry_ms = int(hint * 1000) if hint is not None else self._retry.default_retry_after_ms
        if exc is not None:
            reason = "GitHub did not answer in time" if isinstance(
                exc, httpx.TimeoutException) else "the connection to GitHub failed"
        elif status is not None and status >= 500:
            reason = f"GitHub answered with server error {status}"
        else:
            reason = "GitHub's answer could not be read"
        return UpstreamError(
            "upstream_unavailable", UNAVAILABLE, temporary=True, retry_after_ms=retry_ms,
            details={"reason": reason}, status=status,
        )

    def _unknown(self, resp: httpx.Response | None) -> OutcomeUnknown:
        hint = _retry_after_s(resp) if resp is not None else None
        return OutcomeUnknown(
            "upstream_unavailable",
            "GitHub's answer to this change was lost; it may have been applied.",
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
        status = resp.status_code
        message = _github_message(resp)
        if status == 401:
            return UpstreamError(
                "invalid_credential",
                "GitHub rejected the token; supply a valid, unexpired token.",
                status=status,
            )
        if status in (403, 429):
            limited = self._rate_limited(resp, message)
            if limited is not None:
                return limited
            if status == 403 and _ISSUE_LOCKED.search(message):
                return UpstreamError(
                    "issue_locked",
                    "The issue is locked; only collaborators with write access can comment.",
                    details={"reason": "the conversation on this issue is locked"},
                    status=status,
                )
            return _insufficient_scope(resp, status, message)
        if status == 404:
            code = op.not_found
            if code != "repo_not_found" and await self._repo_missing(ctx, token, path, op):
                code = "repo_not_found"
            return _not_found(code, status)
        if status == 410:
            return _not_found(op.not_found, status, "it was deleted or transferred")
        if status == 409:
            return UpstreamError(
                "conflict",
                "GitHub reported a conflict with the current state of the resource.",
                details={"reason": "the resource changed or is in a state that forbids this"},
                status=status,
            )
        if status == 422:
            return _unprocessable(ctx, resp)
        return UpstreamError(
            "upstream_unavailable",
            f"GitHub answered with unexpected status {status}.",
            details={"reason": "the request was not applied"},
            status=status,
        )

    def _rate_limited(self, resp: httpx.Response, message: str) -> UpstreamError | None:
        headers = resp.headers
        remaining = _int(headers.get("x-ratelimit-remaining"))
        retry_after = _retry_after_s(resp)
        secondary = "secondary rate limit" in message.lower() or "abuse" in message.lower()
        if remaining == 0 and retry_after is None:
            reset = _int(headers.get("x-ratelimit-reset"))
            wait_ms = 60_000 if reset is None else max(0, math.ceil((reset - self._clock()) * 1000))
            reason = "the token's hourly request quota is used up"
        elif retry_after is not None or secondary or resp.status_code == 429:
            wait_ms = int((retry_after if retry_after is not None else 60) * 1000)
            reason = "GitHub's secondary rate limit was hit; slow down"
        else:
            return None
        return UpstreamError(
            "rate_limited",
            "GitHub's rate limit for this token was reached.",
            temporary=True, retry_after_ms=wait_ms, details={"reason": reason},
            extra={"rate_limit_remaining": max(0, remaining or 0)}, status=resp.status_code,
        )

    async def _repo_missing(
        self, ctx: ToolContext, token: str, path: Mapping[str, str | int] | None, op: Operation
    ) -> bool:
        if path is None or "owner" not in path or "repo" not in path:
            return False
        probe = Operation(
            operation_id="repos/get", method="GET", path="/repos/{owner}/{repo}",
            not_found="repo_not_found", success_status=(200,),
        )
        url = self.url(probe.path, {"owner": path["owner"], "repo": path["repo"]})
        try:
            resp = await self._send(ctx, probe, token, "GET", url, {}, None, 0)
        except httpx.RequestError:
            return False
        return resp.status_code == 404


def _cache_outcome(resp: httpx.Response) -> str | None:
    """`not_modified` (GitHub's 304, body from the cache), `stored`, or None (no cache involved)."""
    status = resp.extensions.get("caching")
    if not isinstance(status, dict):
        return None
    if status.get("from_cache"):
        return "not_modified"
    return "stored" if status.get("stored") else None


def _parsed(resp: httpx.Response) -> UpstreamResponse:
    headers = {k.lower(): v for k, v in resp.headers.items()}
    if resp.status_code == 204 or not resp.content.strip():
        return UpstreamResponse(status=resp.status_code, data=None, headers=headers)
    return UpstreamResponse(status=resp.status_code, data=json.loads(resp.content), headers=headers)


def _retry_after_s(resp: httpx.Response | None) -> float | None:
    if resp is None:
        return None
    seconds = _int(resp.headers.get("retry-after"))
    return float(max(0, seconds)) if seconds is not None else None


def _github_message(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else ""


def _scopes(value: str | None) -> list[str]:
    return [s.strip() for s in (value or "").split(",") if s.strip()]


def _insufficient_scope(resp: httpx.Response, status: int, message: str) -> UpstreamError:
    accepted = _scopes(resp.headers.get("x-accepted-oauth-scopes"))
    granted = set(_scopes(resp.headers.get("x-oauth-scopes")))
    missing = [s for s in accepted if s not in granted] or ["repo"]
    if _BLOCKED.search(message) and not any(s not in granted for s in accepted):
        return UpstreamError(
            "insufficient_scope",
            "GitHub refused: access is blocked (for the repository or the account), not for a "
            "missing scope; another token scope will not help.",
            details={"reason": "GitHub blocked access to this resource"}, status=status,
        )
    if "x-oauth-scopes" in resp.headers:
        reason = "the token lacks a scope this call needs"
    else:
        reason = "the token is not permitted to do this (fine-grained tokens: grant Issues access)"
    return UpstreamError(
        "insufficient_scope",
        "The token is not allowed to do this; use a token with the required scopes.",
        details={"required_scopes": missing, "reason": reason},
        status=status,
    )


_NOT_FOUND_MESSAGES = {
    "repo_not_found": "The repository was not found, or the token cannot see it.",
    "issue_not_found": "The issue was not found in this repository.",
    "comment_not_found": "The comment was not found in this repository.",
    "label_not_found": "The label was not found in this repository.",
    "milestone_not_found": "The milestone was not found in this repository.",
}


def _not_found(code: str, status: int, reason: str | None = None) -> UpstreamError:
    thing = code.removesuffix("_not_found").replace("_", " ")
    message = _NOT_FOUND_MESSAGES.get(code, f"The {thing} was not found.")
    if reason is None:
        reason = ("it does not exist, or the token cannot see it" if code == "repo_not_found"
                  else "it does not exist in this repository")
    return UpstreamError(code, message, details={"reason": reason}, status=status)


_422_REASONS = {
    "missing": "refers to something that does not exist",
    "missing_field": "is required",
    "invalid": "has an invalid value or format",
    "already_exists": "another resource already has this value",
    "unprocessable": "GitHub could not process this value",
    "custom": "GitHub rejected this value",
}


def _unprocessable(ctx: ToolContext, resp: httpx.Response) -> UpstreamError:
    try:
        data = resp.json()
    except ValueError:
        data = None
    errors = data.get("errors") if isinstance(data, dict) else None
    first = errors[0] if isinstance(errors, list) and errors else None
    details: dict[str, Any] = {"reason": "GitHub rejected the request as unprocessable"}
    gh_code: str | None = None
    if isinstance(first, dict):
        gh_code = first.get("code") if isinstance(first.get("code"), str) else None
        raw_field = first.get("field")
        if isinstance(raw_field, str) and raw_field:
            details["field"] = ctx.tool.field_map.get(raw_field, raw_field)
        details["reason"] = _422_REASONS.get(gh_code or "", "GitHub rejected this value")
    where = f"`{details['field']}`" if "field" in details else "the request"
    return UpstreamError(
        "invalid_field",
        f"GitHub rejected {where}: {details['reason']}.",
        details=details, status=422, github_code=gh_code,
    )
