"""`/_fake/...`: drive a fake running in another process over HTTP (not spec-validated).

    POST   /_fake/faults            {"match": "issues/create", "kind": "status", "status": 502, ...}
    GET    /_fake/faults            DELETE /_fake/faults      DELETE /_fake/faults/{id}
    POST   /_fake/reset             back to the last checkpoint; clears faults, requests, violations
    GET    /_fake/violations        DELETE /_fake/violations
    GET    /_fake/requests          DELETE /_fake/requests
    GET    /_fake/timeline          DELETE /_fake/timeline   each request's start/end/status/budget
    POST   /_fake/latency           {"seconds": 0.1}: every API answer waits that long
    POST   /_fake/call/{helper}     seed helpers by name with JSON kwargs, e.g. add_issue
    GET    /_fake/state/{owner}/{repo}   issues (with comments), labels and milestones as JSON
    POST   /_fake/clock             {"set": "2024-05-01T00:00:00Z"} or {"advance": 60} (FakeClock only)
    GET    /_fake/health
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fakegithub import objects
from fakegithub.clock import FakeClock
from fakegithub.core import FakeForge
from fakegithub.state import Comment, Issue, Label, Milestone, Repo, Token, User

CALLABLE = frozenset(
    {
        "add_repo", "add_user", "add_token", "add_collaborator", "add_label", "add_milestone",
        "add_issue", "add_pull_request", "add_comment", "delete_issue", "set_rate_limit",
        "checkpoint", "reset",
    }
)


def _plain(value: Any) -> Any:
    if isinstance(value, (Repo,)):
        return value.full_name
    if isinstance(value, (User, Token)):
        return value.login
    if isinstance(value, (Label, Milestone, Issue, Comment)):
        return value.id
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


async def _json(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    data = await request.json()
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


def routes(fake: FakeForge) -> list[Route]:
    """The control routes of `fake` (a `FakeGitHub`: its `state` is GitHub's)."""
    async def health(_: Request) -> Response:
        return JSONResponse({"ok": True})

    async def add_fault(request: Request) -> Response:
        try:
            spec = await _json(request)
            fault = fake.faults.add(spec.pop("match", None), spec.pop("kind", "status"), **spec)
        except (TypeError, ValueError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(fault.describe(), status_code=201)

    async def list_faults(_: Request) -> Response:
        return JSONResponse([f.describe() for f in fake.faults])

    async def clear_faults(_: Request) -> Response:
        fake.faults.clear()
        return Response(status_code=204)

    async def remove_fault(request: Request) -> Response:
        found = fake.faults.remove(int(request.path_params["fault_id"]))
        return Response(status_code=204 if found else 404)

    async def reset(_: Request) -> Response:
        fake.reset()
        return Response(status_code=204)

    async def violations(request: Request) -> Response:
        if request.method == "DELETE":
            with fake.lock:
                fake.violations.clear()
            return Response(status_code=204)
        with fake.lock:
            return JSONResponse(list(fake.violations))

    def record_log(name: str) -> Callable[[Request], Awaitable[Response]]:
        """GET lists `fake.<name>` (named tuples as objects), DELETE empties it."""

        async def endpoint(request: Request) -> Response:
            with fake.lock:
                entries = getattr(fake, name)
                if request.method == "DELETE":
                    entries.clear()
                    return Response(status_code=204)
                return JSONResponse([e._asdict() for e in entries])

        return endpoint

    async def latency(request: Request) -> Response:
        try:
            seconds = float((await _json(request))["seconds"])
        except (KeyError, TypeError, ValueError) as exc:
            return JSONResponse({"error": f"expected {{\"seconds\": number}}: {exc}"}, status_code=400)
        if not 0 <= seconds <= 10:
            return JSONResponse({"error": "seconds must be between 0 and 10"}, status_code=400)
        fake.latency = seconds
        return JSONResponse({"seconds": seconds})

    async def call(request: Request) -> Response:
        name = request.path_params["helper"]
        if name not in CALLABLE:
            return JSONResponse({"error": f"unknown helper {name!r}", "helpers": sorted(CALLABLE)},
                                status_code=404)
        try:
            kwargs = await _json(request)
            result = getattr(fake, name)(**kwargs)
        except (TypeError, ValueError, KeyError) as exc:
            return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=400)
        return JSONResponse({"result": _plain(result)})

    async def state(request: Request) -> Response:
        api = str(request.base_url).rstrip("/")
        with fake.lock:
            repo = fake.state.find_repo(request.path_params["owner"], request.path_params["repo"])
            if repo is None:
                return JSONResponse({"error": "no such repository"}, status_code=404)
            issues = []
            for item in repo.issues.values():
                rendered = objects.issue(api, fake.state, repo, item)
                rendered["deleted"] = item.deleted
                rendered["comment_list"] = [objects.comment(api, fake.state, repo, c) for c in item.comments]
                issues.append(rendered)
            return JSONResponse({
                "issues": issues,
                "labels": [objects.label(api, repo, lb) for lb in repo.labels.values()],
                "milestones": [objects.milestone(api, fake.state, repo, m)
                               for m in repo.milestones.values()],
            })

    async def clock(request: Request) -> Response:
        current = fake.clock
        if not isinstance(current, FakeClock):
            return JSONResponse({"error": "the fake runs on the system clock"}, status_code=409)
        spec = await _json(request)
        with fake.lock:
            if "set" in spec:
                current.set(spec["set"])
            if "advance" in spec:
                current.advance(float(spec["advance"]))
            return JSONResponse({"now": current().isoformat()})

    return [
        Route("/_fake/health", health, methods=["GET"]),
        Route("/_fake/faults", add_fault, methods=["POST"]),
        Route("/_fake/faults", list_faults, methods=["GET"]),
        Route("/_fake/faults", clear_faults, methods=["DELETE"]),
        Route("/_fake/faults/{fault_id:int}", remove_fault, methods=["DELETE"]),
        Route("/_fake/reset", reset, methods=["POST"]),
        Route("/_fake/violations", violations, methods=["GET", "DELETE"]),
        Route("/_fake/requests", record_log("requests"), methods=["GET", "DELETE"]),
        Route("/_fake/timeline", record_log("timeline"), methods=["GET", "DELETE"]),
        Route("/_fake/latency", latency, methods=["POST"]),
        Route("/_fake/call/{helper}", call, methods=["POST"]),
        Route("/_fake/state/{owner}/{repo}", state, methods=["GET"]),
        Route("/_fake/clock", clock, methods=["POST"]),
    ]
