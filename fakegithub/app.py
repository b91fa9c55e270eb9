"""The ASGI side: `ApiApp` (latency, faults, timeline, routing) drives a forge's request pipeline;
`Pipeline` is GitHub's (auth, rate limits, scopes, spec checks, handlers). `SpecPipeline` holds
what every forge's pipeline shares: spec checks of requests and responses, recorded as violations.
`fakeforgejo` plugs its own pipeline into the same `ApiApp`."""

from __future__ import annotations

import math
import time
import uuid
from datetime import timedelta
from email.utils import format_datetime
from typing import Any, Protocol

import anyio

from fakegithub import conditional
from fakegithub.asgi import (
    Forge,
    Incoming,
    InjectedReset,
    Message,
    Receive,
    Scope,
    Send,
    read_incoming,
)
from fakegithub.faults import GITHUB_HTML_500, Fault
from fakegithub.handlers import Ctx, Reply
from fakegithub.registry import HANDLERS
from fakegithub.routing import Route
from fakegithub.state import DOCS, ApiError, RateBucket, State, Token
from fakegithub.validation import dumps

API_VERSION = "2022-11-28"
RATE_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
JSON_TYPE = "application/json; charset=utf-8"
DEFAULT_LIMITS = {"core": 5000, "search": 30}
ANONYMOUS_LIMIT = 60
TIMEOUT_DEFAULT = 30.0
SLOW_BODY_DEFAULT = 0.5


def _request_id() -> str:
    h = uuid.uuid4().hex.upper()
    return f"{h[0:4]}:{h[4:9]}:{h[9:16]}:{h[16:23]}:{h[23:31]}"


class ForgePipeline(Protocol):
    """What `ApiApp` asks of a forge's pipeline; every method runs under the fake's lock."""

    def version_problem(self, incoming: Incoming) -> str | None: ...
    def process(self, incoming: Incoming, route: Route, request_id: str) -> Reply: ...
    def check_request(self, incoming: Incoming, route: Route) -> list[str]: ...
    def peek_headers(self, incoming: Incoming, route: Route | None, request_id: str) -> dict[str, str]: ...
    def fault_reply(self, incoming: Incoming, route: Route | None, fault: Fault, request_id: str) -> Reply: ...
    def no_route(self, incoming: Incoming, request_id: str) -> Reply: ...
    def gateway_timeout(self, incoming: Incoming, route: Route | None, request_id: str) -> Reply: ...
    def html_error_page(self) -> str: ...


class GitHubForge(Forge, Protocol):
    """What GitHub's pipeline asks of its fake besides the shared part (`fake.FakeGitHub`)."""

    @property
    def state(self) -> State: ...
    @property
    def anonymous_bucket(self) -> RateBucket: ...


class SpecPipeline:
    """Spec checks every forge's pipeline shares: a request the description rejects, and a
    response with a declared status the description rejects, are recorded as violations."""

    def __init__(self, fake: Forge) -> None:
        self.fake = fake

    def check_request(self, incoming: Incoming, route: Route) -> list[str]:
        """Spec problems of the request (each also recorded as a violation)."""
        problems = self.fake.contract.request_errors(
            incoming.method, route.checked_path(incoming.raw_path), incoming.query_string, incoming.headers,
            incoming.body, "application/json",  # forges parse JSON whatever the content type
        )
        for problem in problems:
            self.fake.violations.append(
                f"{incoming.method} {incoming.path} ({route.operation.operation_id}): "
                f"request: {problem}"
            )
        return problems

    def finish(self, incoming: Incoming, route: Route | None, reply: Reply) -> Reply:
        """Response validation for declared statuses."""
        if route is not None and str(reply.status) in route.operation.statuses:
            body = b"" if reply.body is None else dumps(reply.body)
            problems = self.fake.contract.response_errors(
                incoming.method, route.checked_path(incoming.raw_path), incoming.query_string, reply.status,
                reply.headers, body, JSON_TYPE if reply.body is not None else "",
            )
            for problem in problems:
                self.fake.violations.append(
                    f"{incoming.method} {incoming.path} ({route.operation.operation_id}): "
                    f"response {reply.status}: {problem}"
                )
        return reply


class Pipeline(SpecPipeline):
    """GitHub's request handling: auth, rate limits, OAuth scopes, spec checks, handlers."""

    fake: GitHubForge

    def __init__(self, fake: GitHubForge) -> None:
        super().__init__(fake)

    def version_problem(self, incoming: Incoming) -> str | None:
        version = incoming.headers.get("x-github-api-version")
        if version is not None and version != API_VERSION:
            return f"X-GitHub-Api-Version {version!r} (the fake speaks {API_VERSION})"
        return None

    def no_route(self, incoming: Incoming, request_id: str) -> Reply:
        return Reply(404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"},
                     self.peek_headers(incoming, None, request_id))

    def gateway_timeout(self, incoming: Incoming, route: Route | None, request_id: str) -> Reply:
        body = {
            "message": "We couldn't respond to your request in time. Sorry about that. Please try "
            "resubmitting your request and contact us if the problem persists.",
            "documentation_url": DOCS,
        }
        return Reply(504, body, self.peek_headers(incoming, route, request_id))

    def html_error_page(self) -> str:
        return GITHUB_HTML_500

    # rate limits ---------------------------------------------------------------------------

    def bucket(self, token: Token | None, resource: str) -> RateBucket:
        fake = self.fake
        now = fake.state.now()
        if token is None:
            bucket = fake.anonymous_bucket
        elif resource in token.buckets:
            bucket = token.buckets[resource]
        else:
            limit = DEFAULT_LIMITS.get(resource, 5000)
            bucket = token.buckets[resource] = RateBucket(limit, limit, now + timedelta(hours=1))
        if now >= bucket.reset:
            bucket.remaining = bucket.limit
            bucket.reset = now + timedelta(hours=1)
        return bucket

    @staticmethod
    def rate_headers(bucket: RateBucket, resource: str) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(bucket.limit),
            "x-ratelimit-remaining": str(bucket.remaining),
            "x-ratelimit-reset": str(math.floor(bucket.reset.timestamp())),
            "x-ratelimit-used": str(bucket.used),
            "x-ratelimit-resource": resource,
        }

    # the pipeline --------------------------------------------------------------------------

    def base_headers(self, route: Route | None, token: Token | None, resource: str,
                     request_id: str) -> dict[str, str]:
        headers = {
            "date": format_datetime(self.fake.state.shown_now(), usegmt=True),  # the fake's clock
            "x-github-request-id": request_id,
            "x-github-media-type": "github.v3; format=json",
            "x-github-api-version-selected": API_VERSION,
            "x-oauth-scopes": ", ".join(token.scopes) if token else "",
            "x-accepted-oauth-scopes": self.accepted_scopes(route),
        }
        if token is not None and token.installation:  # permissions, not OAuth scopes
            del headers["x-oauth-scopes"], headers["x-accepted-oauth-scopes"]
        return headers

    @staticmethod
    def accepted_scopes(route: Route | None) -> str:
        if route is not None and route.operation.path.startswith("/repos/"):
            return "repo"
        return ""

    @staticmethod
    def resource(route: Route | None) -> str:
        if route is not None and route.operation.operation_id.startswith("search/"):
            return "search"
        return "core"

    def token_for(self, incoming: Incoming) -> tuple[Token | None, str | None]:
        """(token, None) or (None, 401 message)."""
        auth = incoming.headers.get("authorization", "").strip()
        if not auth:
            return None, "Requires authentication"
        scheme, _, value = auth.partition(" ")
        if scheme.lower() not in ("bearer", "token") or not value.strip():
            return None, "Bad credentials"
        token = self.fake.state.tokens.get(value.strip())
        return (token, None) if token else (None, "Bad credentials")

    def process(self, incoming: Incoming, route: Route, request_id: str) -> Reply:
        """Auth, rate limit, scopes, spec validation, handler, response validation."""
        fake = self.fake
        op = route.operation
        resource = self.resource(route)
        token, auth_problem = self.token_for(incoming)
        headers = self.base_headers(route, token, resource, request_id)
        if token is None:
            bucket = self.bucket(None, resource)
            incoming.spent = bucket.remaining > 0
            bucket.remaining = max(0, bucket.remaining - 1)
            headers.update(self.rate_headers(bucket, resource))
            body = {"message": auth_problem, "documentation_url": DOCS, "status": "401"}
            return self.finish(incoming, route, Reply(401, body, headers))
        bucket = self.bucket(token, resource)
        if bucket.remaining <= 0:
            headers.update(self.rate_headers(bucket, resource))
            user = fake.state.user(token.login)
            message = (
                f"API rate limit exceeded for user ID {user.id}. If you reach out to GitHub Support "
                f"for help, please include the request ID {request_id}."
            )
            body = {"message": message, "documentation_url": RATE_DOCS, "status": "403"}
            return self.finish(incoming, route, Reply(403, body, headers))
        bucket.remaining -= 1
        incoming.spent = True
        headers.update(self.rate_headers(bucket, resource))

        if incoming.method != "GET" and op.path.startswith("/repos/"):
            repo = fake.state.find_repo(route.params.get("owner", ""), route.params.get("repo", ""))
            allowed = token.installation or "repo" in token.scopes or (
                "public_repo" in token.scopes and (repo is None or not repo.private)
            )
            if not allowed and not (repo is not None and repo.private):  # private: 404 below
                body = {
                    "message": "Resource not accessible by personal access token",
                    "documentation_url": op.docs_url,
                    "status": "403",
                }
                return self.finish(incoming, route, Reply(403, body, headers))

        problems = self.check_request(incoming, route)
        if problems:
            body = {
                "message": "Invalid request.\n\n" + "\n".join(problems),
                "documentation_url": op.docs_url,
                "status": "422",
            }
            return self.finish(incoming, route, Reply(422, body, headers))

        ctx = Ctx(
            state=fake.state,
            operation=op.operation_id,
            params=route.params,
            query=incoming.query,
            body=incoming.json,
            token=token,
            api=incoming.base,
            path=incoming.path,
            docs=op.docs_url,
        )
        try:
            reply = HANDLERS[op.operation_id](ctx)
        except ApiError as err:
            reply = Reply(err.status, err.body, err.headers)
        reply.headers = {**headers, **reply.headers}
        if incoming.method == "GET" and reply.status == 200 and reply.body is not None:
            reply = self.conditional(incoming, reply, bucket, resource)
        return self.finish(incoming, route, reply)

    def conditional(self, incoming: Incoming, reply: Reply, bucket: RateBucket, resource: str) -> Reply:
        """Validators on the 200; a 304 instead when the request's preconditions match, with the
        budget unit given back (GitHub does not count 304s against the primary rate limit)."""
        reply.headers.update(conditional.validators(reply.body, dumps(reply.body)))
        if not conditional.not_modified(incoming.headers, reply.headers):
            return reply
        bucket.remaining += 1
        incoming.spent = False
        headers = {k: v for k, v in reply.headers.items() if k != "content-type"}
        headers.update(self.rate_headers(bucket, resource))
        return Reply(304, None, headers)

    def peek_headers(self, incoming: Incoming, route: Route | None, request_id: str) -> dict[str, str]:
        """Standard headers (rate limit included) without spending any budget."""
        token, _ = self.token_for(incoming)
        resource = self.resource(route)
        headers = self.base_headers(route, token, resource, request_id)
        headers.update(self.rate_headers(self.bucket(token, resource), resource))
        return headers

    def fault_reply(self, incoming: Incoming, route: Route | None, fault: Fault,
                    request_id: str) -> Reply:
        headers = self.peek_headers(incoming, route, request_id)
        status = fault.status or 500
        body = fault.body if fault.body is not None else default_body(status, route)
        headers.update({k.lower(): v for k, v in fault.headers.items()})
        return self.finish(incoming, route, Reply(status, body, headers))


def default_body(status: int, route: Route | None) -> dict[str, Any]:
    docs = route.operation.docs_url if route else DOCS
    if status == 422:
        return {"message": "Validation Failed", "documentation_url": docs, "errors": [], "status": "422"}
    if status == 503:
        return {"code": "service_unavailable", "message": "Service Unavailable", "documentation_url": docs}
    if status == 429:
        return {"message": "API rate limit exceeded", "documentation_url": RATE_DOCS, "status": "429"}
    messages = {
        400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 410: "Gone",
        500: "Internal Server Error", 502: "Server Error", 504: "Gateway Timeout",
    }
    return {"message": messages.get(status, "Error"), "documentation_url": docs, "status": str(status)}


def _raw_headers(reply: Reply, body: bytes, content_type: str | None) -> list[tuple[bytes, bytes]]:
    headers = {k.lower(): v for k, v in reply.headers.items()}
    if content_type:
        headers["content-type"] = content_type
    if reply.status != 304:  # a 304's length would be the 200's; better none than a wrong one
        headers["content-length"] = str(len(body))
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


def encode(reply: Reply) -> tuple[bytes, str | None]:
    if reply.body is None:
        return b"", None
    if isinstance(reply.body, bytes):
        return reply.body, reply.headers.get("content-type", JSON_TYPE)
    return dumps(reply.body), JSON_TYPE


async def send_reply(send: Send, reply: Reply) -> None:
    body, content_type = encode(reply)
    await send({"type": "http.response.start", "status": reply.status,
                "headers": _raw_headers(reply, body, content_type)})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class ApiApp:
    """The raw ASGI app for a forge's API surface (mounted under the Starlette app)."""

    def __init__(self, fake: Forge, pipeline: ForgePipeline) -> None:
        self.fake = fake
        self.pipeline = pipeline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request after `fake.latency` seconds; log its start and end in the timeline."""
        started = time.monotonic()
        incoming = await read_incoming(scope, receive)
        with self.fake.lock:
            route = self.fake.router.match(incoming.method, incoming.raw_path)
            self.fake._record(incoming, route.operation.operation_id if route else None)
        status = 0

        async def delayed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if self.fake.latency > 0:
                    await anyio.sleep(self.fake.latency)
            await send(message)

        try:
            await self.respond(scope, receive, delayed_send, incoming, route)
        finally:
            self.fake._time(incoming, route.operation.operation_id if route else None, status,
                            started, time.monotonic())

    async def respond(self, scope: Scope, receive: Receive, send: Send, incoming: Incoming,
                      route: Route | None) -> None:
        fake = self.fake
        request_id = _request_id()
        operation = route.operation.operation_id if route else None
        with fake.lock:
            version = self.pipeline.version_problem(incoming)
            if version is not None:
                fake.violations.append(f"{incoming.method} {incoming.path}: {version}")
            fault = fake.faults.take(operation, incoming.method, incoming.path)
            short_circuit = fault is not None and fault.kind not in ("slow_body", "slow_commit") and not (
                fault.after_commit or fault.partial)
            if short_circuit and route is not None:
                self.pipeline.check_request(incoming, route)  # a bad request is still a violation
        if fault is not None and short_circuit:
            if fault.kind == "timeout":
                await self.stall(fault, receive)
                return await send_reply(send, self.gateway_timeout(incoming, route, request_id))
            if fault.kind == "reset":
                return await self.reset(scope, send, None)
            if fault.kind in ("status", "malformed_json", "html"):
                with fake.lock:
                    reply = self.prepared_fault(incoming, route, fault, request_id)
                return await send_reply(send, reply)
        if fault is not None and fault.kind == "slow_commit":
            await anyio.sleep(fault.delay if fault.delay is not None else 1.0)
        with fake.lock:
            if route is None:
                fake.violations.append(
                    f"{incoming.method} {incoming.path}: no such operation in the fake "
                    "(unimplemented or not in the spec)"
                )
                reply = self.pipeline.no_route(incoming, request_id)
            else:
                reply = self.pipeline.process(incoming, route, request_id)
        if fault is None:
            return await send_reply(send, reply)
        if fault.kind == "timeout":  # after_commit: the write happened, the response is lost
            await self.stall(fault, receive)
            return await send_reply(send, self.gateway_timeout(incoming, route, request_id))
        if fault.kind == "reset":
            return await self.reset(scope, send, reply if fault.partial else None)
        if fault.kind == "status":  # after_commit: the write happened, then an error surfaced
            with fake.lock:
                reply = self.pipeline.fault_reply(incoming, route, fault, request_id)
            return await send_reply(send, reply)
        if fault.kind == "slow_body":
            return await self.slow_body(send, reply, fault)
        return await send_reply(send, reply)

    def prepared_fault(self, incoming: Incoming, route: Route | None, fault: Fault,
                       request_id: str) -> Reply:
        if fault.kind == "status":
            return self.pipeline.fault_reply(incoming, route, fault, request_id)
        headers = self.pipeline.peek_headers(incoming, route, request_id)
        headers.update({k.lower(): v for k, v in fault.headers.items()})
        if fault.kind == "malformed_json":
            headers["content-type"] = JSON_TYPE
            return Reply(fault.status or 200, b'{"id": 1, "number": 1, "title": "trunc', headers)
        headers["content-type"] = "text/html; charset=utf-8"
        return Reply(fault.status or 500, self.pipeline.html_error_page().encode(), headers)

    def gateway_timeout(self, incoming: Incoming, route: Route | None, request_id: str) -> Reply:
        with self.fake.lock:
            return self.pipeline.gateway_timeout(incoming, route, request_id)

    async def stall(self, fault: Fault, receive: Receive) -> None:
        """Sleep `fault.delay` seconds, or until the client disconnects or the server stops."""
        closing = self.fake._closing
        delay = fault.delay if fault.delay is not None else TIMEOUT_DEFAULT
        with anyio.move_on_after(delay):
            async with anyio.create_task_group() as group:

                async def watch_disconnect() -> None:
                    while True:
                        message = await receive()
                        if message["type"] == "http.disconnect":
                            group.cancel_scope.cancel()
                            return

                group.start_soon(watch_disconnect)
                while not closing.is_set():
                    await anyio.sleep(0.05)
                group.cancel_scope.cancel()

    async def reset(self, scope: Scope, send: Send, partial: Reply | None) -> None:
        if partial is not None:
            body, content_type = encode(partial)
            await send({"type": "http.response.start", "status": partial.status,
                        "headers": _raw_headers(partial, body, content_type)})
            await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
        # abort() drops buffered bytes (a reset); close() flushes the partial body first
        drop = scope.get("extensions", {}).get("fakegithub.close" if partial else "fakegithub.abort")
        if callable(drop):
            drop()
        raise InjectedReset("connection reset by fault injection")

    async def slow_body(self, send: Send, reply: Reply, fault: Fault) -> None:
        body, content_type = encode(reply)
        await send({"type": "http.response.start", "status": reply.status,
                    "headers": _raw_headers(reply, body, content_type)})
        delay = fault.delay if fault.delay is not None else SLOW_BODY_DEFAULT
        size = max(1, math.ceil(len(body) / fault.chunks))
        pieces = [body[i : i + size] for i in range(0, len(body), size)] or [b""]
        for index, piece in enumerate(pieces):
            await anyio.sleep(delay)
            await send({"type": "http.response.body", "body": piece,
                        "more_body": index < len(pieces) - 1})
