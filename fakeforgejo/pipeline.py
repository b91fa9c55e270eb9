"""The Forgejo side of the shared request pipeline (`fakegithub.app.ApiApp` drives it): token
authentication, Forgejo's token scopes, spec validation, handlers, response validation.

What differs from GitHub's pipeline: `Authorization: token <t>` (or `Bearer`), no rate limits
and no version header, `{message, url}` error bodies, scope categories per endpoint group.
"""

from __future__ import annotations

from typing import Any, Protocol

from fakeforgejo import issue_handlers  # noqa: F401  (registers the issue operations)
from fakeforgejo.handlers import HANDLERS, Ctx
from fakeforgejo.state import SCOPE_ISSUE, SCOPE_ORG, SCOPE_REPO, SCOPE_USER, ApiError, State, Token
from fakegithub.app import SpecPipeline
from fakegithub.asgi import Forge, Incoming
from fakegithub.faults import Fault
from fakegithub.handlers import Reply
from fakegithub.routing import Route

SWAGGER_URL = "/api/swagger"  # setting.API.SwaggerURL, the `url` of every error body
API_PREFIX = "/api/v1"

# which token scope category each operation's endpoint group requires (routers/api/v1/api.go)
OPERATION_SCOPES: dict[str, str] = {
    "userGetCurrent": SCOPE_USER,
    "repoGet": SCOPE_REPO, "repoGetRepoPermissions": SCOPE_REPO,
    "orgGet": SCOPE_ORG, "orgListRepos": SCOPE_ORG,
    "orgListLabels": SCOPE_ORG, "orgGetLabel": SCOPE_ORG, "orgCreateLabel": SCOPE_ORG,
    "orgEditLabel": SCOPE_ORG, "orgDeleteLabel": SCOPE_ORG,
    "issueListLabels": SCOPE_ISSUE, "issueGetLabel": SCOPE_ISSUE, "issueCreateLabel": SCOPE_ISSUE,
    "issueEditLabel": SCOPE_ISSUE, "issueDeleteLabel": SCOPE_ISSUE,
    "issueListIssues": SCOPE_ISSUE, "issueSearchIssues": SCOPE_ISSUE,
    "issueGetIssue": SCOPE_ISSUE, "issueCreateIssue": SCOPE_ISSUE, "issueEditIssue": SCOPE_ISSUE,
    "issueAddLabel": SCOPE_ISSUE, "issueRemoveLabel": SCOPE_ISSUE,
    "issueGetComments": SCOPE_ISSUE, "issueCreateComment": SCOPE_ISSUE,
    "issueGetMilestonesList": SCOPE_ISSUE, "issueGetMilestone": SCOPE_ISSUE,
    "repoGetAssignees": SCOPE_REPO, "userGet": SCOPE_USER,
}
HTML_500 = ("<!DOCTYPE html><html><head><title>Internal Server Error - Forgejo</title></head>"
            "<body><p>500 Internal Server Error</p></body></html>")


def error_body(base: str, message: str, errors: list[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "url": base + SWAGGER_URL}
    if errors is not None:
        body["errors"] = errors
    return body


class ForgejoForge(Forge, Protocol):
    """What Forgejo's pipeline asks of its fake besides the shared part (`fake.FakeForgejo`)."""

    @property
    def state(self) -> State: ...


class Pipeline(SpecPipeline):
    """Forgejo's request handling, run under the fake's lock (spec checks from SpecPipeline)."""

    fake: ForgejoForge

    def __init__(self, fake: ForgejoForge) -> None:
        super().__init__(fake)

    def token_for(self, incoming: Incoming) -> Token | None:
        """`parseToken`: `token <t>` (exactly) or `bearer <t>` (any case)."""
        parts = incoming.headers.get("authorization", "").split()
        if len(parts) != 2 or not (parts[0] == "token" or parts[0].lower() == "bearer"):
            return None
        return self.fake.state.tokens.get(parts[1])

    def version_problem(self, incoming: Incoming) -> str | None:
        return None  # Forgejo has no API version header

    def base_headers(self) -> dict[str, str]:
        return {"x-content-type-options": "nosniff"}

    def peek_headers(self, incoming: Incoming, route: Route | None, request_id: str) -> dict[str, str]:
        return self.base_headers()

    def no_route(self, incoming: Incoming, request_id: str) -> Reply:
        return Reply(404, error_body(incoming.base, "The target couldn't be found.", []), self.base_headers())

    def gateway_timeout(self, incoming: Incoming, route: Route | None, request_id: str) -> Reply:
        return Reply(504, error_body(incoming.base, "Gateway Timeout"), self.base_headers())

    def html_error_page(self) -> str:
        return HTML_500

    def fault_reply(self, incoming: Incoming, route: Route | None, fault: Fault, request_id: str) -> Reply:
        headers = self.base_headers()
        status = fault.status or 500
        body = fault.body if fault.body is not None else error_body(
            incoming.base, "" if status == 500 else {404: "The target couldn't be found."}.get(status, "error"))
        headers.update({k.lower(): v for k, v in fault.headers.items()})
        return self.finish(incoming, route, Reply(status, body, headers))

    def finish(self, incoming: Incoming, route: Route | None, reply: Reply) -> Reply:
        """Response validation, but for Forgejo's bare 403 (`ctx.Status(http.StatusForbidden)`:
        an issue edit or label change without write access), which sends no body although the
        description declares an APIForbiddenError one: what Forgejo sends is not a violation."""
        if reply.status == 403 and reply.body is None:
            return reply
        return super().finish(incoming, route, reply)

    def process(self, incoming: Incoming, route: Route, request_id: str) -> Reply:
        op = route.operation.operation_id
        headers = self.base_headers()
        token = self.token_for(incoming)
        if token is None:
            return self.finish(incoming, route, Reply(401, error_body(incoming.base, "token is required"), headers))
        category = OPERATION_SCOPES[op]
        write = incoming.method != "GET"
        if not token.allows(category, write):
            level = "write" if write else "read"
            message = f"token does not have at least one of required scope(s): [{level}:{category}]"
            return self.finish(incoming, route, Reply(403, error_body(incoming.base, message), headers))
        problems = self.check_request(incoming, route)
        if problems:
            # Forgejo's own binding answers 422 `[Field]: reason`; anything else the description
            # forbids is reported as the validator's text
            message = "; ".join(problems)
            return self.finish(incoming, route, Reply(422, error_body(incoming.base, message), headers))
        base = incoming.base + API_PREFIX
        ctx = Ctx(state=self.fake.state, params=route.params, query=incoming.query, body=incoming.json,
                  token=token, api=base, url=incoming.base + incoming.path)
        try:
            reply = HANDLERS[op](ctx)
        except ApiError as err:
            reply = Reply(err.status, error_body(incoming.base, err.message, err.errors))
        reply.headers = {**headers, **reply.headers}
        return self.finish(incoming, route, reply)
