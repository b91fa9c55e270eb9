"""Contract checks: the pinned, patched spec trimmed to a fake's operations, via openapi-core.

Shared by the fakes of every forge (`fakeforgejo` builds its own `Contract`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
SPEC_HOST = "https://api.github.com"
DOCS = "https://docs.github.com/rest"

# Every operation the fake implements, in the spec's own ids.
OPERATIONS: tuple[str, ...] = (
    "repos/get",
    "issues/list-for-repo",
    "issues/get",
    "issues/create",
    "issues/update",
    "issues/lock",
    "issues/unlock",
    "issues/list-comments",
    "issues/create-comment",
    "issues/list-labels-for-repo",
    "issues/create-label",
    "issues/get-label",
    "issues/update-label",
    "issues/delete-label",
    "issues/add-labels",
    "issues/remove-label",
    "issues/set-labels",
    "issues/list-labels-on-issue",
    "issues/list-milestones",
    "issues/get-milestone",
    "issues/create-milestone",
    "issues/update-milestone",
    "issues/delete-milestone",
    "search/issues-and-pull-requests",
    "users/get-authenticated",
    "repos/list-for-authenticated-user",
    "repos/get-collaborator-permission-level",
    "issues/list-sub-issues",
    "issues/add-sub-issue",
    "issues/remove-sub-issue",
    "issues/reprioritize-sub-issue",
    "issues/get-parent",
    "issues/list-dependencies-blocked-by",
    "issues/list-dependencies-blocking",
    "issues/add-blocked-by-dependency",
    "issues/remove-dependency-blocked-by",
    "issues/list-assignees",
    "issues/check-user-can-be-assigned",
    "issues/add-assignees",
    "issues/remove-assignees",
    # pull requests, git data and contents (pull_handlers.py, git_handlers.py)
    "pulls/list",
    "pulls/get",
    "pulls/create",
    "pulls/update",
    "pulls/list-files",
    "pulls/list-reviews",
    "pulls/create-review",
    "pulls/list-review-comments",
    "pulls/request-reviewers",
    "pulls/remove-requested-reviewers",
    "pulls/merge",
    "pulls/update-branch",
    "repos/get-combined-status-for-ref",
    "checks/list-for-ref",
    "repos/list-branches",
    "git/create-ref",
    "repos/list-commits",
    "repos/get-commit",
    "repos/get-content",
    "repos/create-or-update-file-contents",
    "search/code",
)


@dataclass(frozen=True, slots=True)
class SpecOperation:
    operation_id: str
    method: str  # upper case
    path: str  # template, e.g. /repos/{owner}/{repo}/issues/{issue_number}
    statuses: frozenset[str]  # declared response status codes
    docs_url: str
    multi_segment: frozenset[str] = frozenset()  # path parameters that may hold `/` (x-multi-segment)


def _iter_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for value in node.values():
            yield from _iter_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _iter_refs(value)


def trim_spec(document: Mapping[str, Any], operation_ids: Iterable[str]) -> dict[str, Any]:
    """Keep only the given operations and the components they reference, transitively."""
    wanted = set(operation_ids)
    paths: dict[str, Any] = {}
    for path, item in document["paths"].items():
        keep = {m: op for m, op in item.items() if m in METHODS and op.get("operationId") in wanted}
        if keep:
            new = {k: v for k, v in item.items() if k not in METHODS}
            new.update(keep)
            paths[path] = new
            wanted -= {op["operationId"] for op in keep.values()}
    if wanted:
        raise KeyError(f"operationIds not in the spec: {sorted(wanted)}")
    components = document.get("components", {})
    kept: dict[str, dict[str, Any]] = {}
    todo = list(_iter_refs(paths))
    seen: set[str] = set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if not ref.startswith("#/components/"):
            raise ValueError(f"unsupported $ref {ref}")
        _, _, section, name = ref.split("/", 3)
        obj = components[section][name]
        kept.setdefault(section, {})[name] = obj
        todo.extend(_iter_refs(obj))
    out = {k: v for k, v in document.items() if k not in ("paths", "components", "webhooks", "x-webhooks", "tags")}
    out["paths"] = paths
    out["components"] = kept
    return out


class _Request:
    """The openapi-core request protocol, always addressed to the spec's server."""

    def __init__(
        self,
        host: str,
        method: str,
        raw_path: str,
        query_string: str,
        headers: Mapping[str, str],
        body: bytes,
        content_type: str,
    ) -> None:
        from openapi_core.datatypes import RequestParameters
        from werkzeug.datastructures import Headers, ImmutableMultiDict

        self.host_url = host
        self.method = method.lower()
        self.path = raw_path
        self.full_url_pattern = host + raw_path
        self.body = body
        self.content_type = content_type
        self.parameters = RequestParameters(
            path={},
            query=ImmutableMultiDict(parse_qsl(query_string, keep_blank_values=True)),
            header=Headers(dict(headers)),
            cookie=ImmutableMultiDict(),
        )


class _Response:
    def __init__(self, status: int, headers: Mapping[str, str], body: bytes, content_type: str) -> None:
        from werkzeug.datastructures import Headers

        self.status_code = status
        self.headers = Headers(dict(headers))
        self.data = body
        self.content_type = content_type


def _describe(exc: BaseException) -> list[str]:
    """Flatten an openapi-core error (and its schema errors) into readable lines."""
    cause = exc.__cause__
    schema_errors = list(getattr(cause, "schema_errors", None) or [])
    head = str(exc).split(":", 1)[0] if schema_errors else str(exc)
    if not schema_errors:
        text = str(exc) or exc.__class__.__name__
        if cause is not None and str(cause) and str(cause) not in text:
            text = f"{text} ({cause})"
        return [text]
    lines = []
    for err in schema_errors:
        where = "/".join(str(p) for p in getattr(err, "absolute_path", getattr(err, "path", ())))
        message = getattr(err, "message", str(err))
        lines.append(f"{head}: {'at ' + where + ': ' if where else ''}{message}")
    return lines


class Contract:
    """The trimmed spec, an openapi-core validator and an operation table; build once per process
    (`contract()` for GitHub's). `host` is where the description's servers say the API is."""

    def __init__(self, document: Mapping[str, Any], operations: Iterable[str] = OPERATIONS, *,
                 host: str = SPEC_HOST, docs: str = DOCS) -> None:
        from openapi_core import Config, OpenAPI

        self._lock = threading.Lock()  # shared by every fake in the process (serve() threads)
        self.host = host
        self.document = trim_spec(document, operations)
        self.openapi = OpenAPI.from_dict(self.document, config=Config(spec_validator_cls=None))
        self.operations: dict[str, SpecOperation] = {}
        for path, item in self.document["paths"].items():
            for method in METHODS:
                op = item.get(method)
                if isinstance(op, dict):
                    self.operations[op["operationId"]] = SpecOperation(
                        op["operationId"],
                        method.upper(),
                        path,
                        frozenset(str(s) for s in op.get("responses", {})),
                        str(op.get("externalDocs", {}).get("url", docs)),
                        frozenset(p["name"] for p in self._parameters(op) if p.get("x-multi-segment")),
                    )

    def _parameters(self, op: Mapping[str, Any]) -> list[dict[str, Any]]:
        found = []
        for param in op.get("parameters", []):
            ref = param.get("$ref")
            found.append(self.document["components"]["parameters"][ref.rsplit("/", 1)[-1]] if ref else param)
        return found

    def request_errors(
        self,
        method: str,
        raw_path: str,
        query_string: str,
        headers: Mapping[str, str],
        body: bytes,
        content_type: str = "application/json",
    ) -> list[str]:
        request = _Request(self.host, method, raw_path, query_string, headers, body, content_type)
        problems: list[str] = []
        with self._lock:
            for exc in self.openapi.iter_request_errors(request):
                problems.extend(_describe(exc))
        return problems

    def response_errors(
        self,
        method: str,
        raw_path: str,
        query_string: str,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        content_type: str = "application/json",
    ) -> list[str]:
        request = _Request(self.host, method, raw_path, query_string, {}, b"", "application/json")
        response = _Response(status, headers, body, content_type)
        problems: list[str] = []
        with self._lock:
            for exc in self.openapi.iter_response_errors(request, response):
                problems.extend(_describe(exc))
        return problems


_lock = threading.Lock()
_contract: Contract | None = None


def contract() -> Contract:
    """The process-wide contract (the spec load and trim cost ~0.5 s, paid once)."""
    global _contract
    with _lock:
        if _contract is None:
            from generator.api import forge_spec_document

            _contract = Contract(forge_spec_document())
        return _contract


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
