"""Rule `lockdown-repository` (build stage, once the tools are built): a lockdown rule's `repository` is an API URL naming the repository,
as the forge profile reads it (`ForgeProfile.repository_of`: `…/repos/{owner}/{repo}…`). A path
to anything else (`html_url`, a user's URL) leaves every row's repository unknown, so lockdown
withholds every row as `trust_unknown` at run time.

The evidence is the spec's: the value at that path in every documented answer of the server's
operations that answer with a source schema, else the schemas' own `example` there. A
description without examples (Forgejo's) gives no evidence; then the path must
end in a field named `url` or `*_url` other than a page's (`html_url`) or an avatar's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from generator.base.diagnostics import Diagnostic, Level
from generator.spec.answers import documented_answers
from generator.spec.pinned import index_operations, resolve_ref, success_body
from generator.spec.schemas import walk
from ghmcp_runtime.core.forges import FORGES, GITHUB
from ghmcp_runtime.core.projection import walk as walk_value
from ghmcp_runtime.core.refs import MISSING

if TYPE_CHECKING:
    from generator.base.yamlsrc import Located
    from generator.build.ir import IRShape

RULE = "lockdown-repository"
NOT_API = ("html_url", "avatar_url", "clone_url", "git_url", "ssh_url", "svn_url", "mirror_url",
           "original_url", "website")


def check(document: Mapping[str, Any], shapes: Iterable[IRShape], used: Iterable[str], forge_name: str,
          located: Located) -> list[Diagnostic]:
    """The problems of every shape's lockdown rule; `used` are the server's operations."""
    forge = FORGES.get(forge_name, GITHUB)
    wanted = set(used)
    ops = [op for op_id, op in index_operations(document).items() if op_id in wanted]
    out = []
    for shape in shapes:
        if shape.lockdown is None:
            continue
        path = shape.lockdown.repository
        evidence = _evidence(document, shape, ops)
        where = located.where(("shapes", shape.name, "lockdown", "repository"))
        wrong = [(label, value) for label, value in evidence
                 if not isinstance(value, str) or forge.repository_of(value) is None]
        if wrong:
            label, value = wrong[0]
            out.append(Diagnostic(Level.ERROR, where, f"lockdown.repository {'.'.join(path)!r} is not an API "
                                  f"URL naming the repository: {label} has {value!r}",
                                  f"name a field like {_example(forge.repository.path)} (GitHub: "
                                  "repository_url, or base.repo.url of a pull request)", RULE))
        elif not evidence and (path[-1] in NOT_API or not (path[-1] == "url" or path[-1].endswith("_url"))):
            out.append(Diagnostic(Level.ERROR, where, f"lockdown.repository {'.'.join(path)!r} does not name "
                                  "an API URL", f"name the field holding {_example(forge.repository.path)} "
                                  "(the spec gives no example to judge by: a field named url or *_url, not a "
                                  "page's html_url)", RULE))
    return out


def _example(path: str) -> str:
    return "https://<api>" + path.replace("{owner}", "octo-org").replace("{repo}", "roadmap") + "/…"


def _evidence(document: Mapping[str, Any], shape: IRShape, ops: list[Any]) -> list[tuple[str, Any]]:
    """The values documented answers show at the repository path; without any, the schemas'
    own examples there (GitHub's issue-comment schema has an odd `/repositories/42/…` one,
    while every documented comment answer names the repository)."""
    assert shape.lockdown is not None
    path = shape.lockdown.repository
    schemas = document.get("components", {}).get("schemas", {})
    sources = [(name, schemas[name]) for name in shape.sources if name in schemas]
    answered = []
    for op in ops:
        body = success_body(document, op)
        rows = (body.get("items") if body.get("type") == "array" else body) if body is not None else None
        if not any(_same(document, rows, node) for _, node in sources):
            continue
        for label, answer in documented_answers(document, op.operation_id):
            for row in answer if isinstance(answer, list) else [answer]:
                value = walk_value(row, path) if isinstance(row, Mapping) else MISSING
                if value is not MISSING and value is not None:
                    answered.append((f"{op.operation_id}'s documented {label}", value))
    if answered:
        return answered
    examples = [(name, walk(document, node, path)[0]) for name, node in sources]
    return [(f"the {name} schema's example", found["example"]) for name, found in examples
            if isinstance(found, Mapping) and "example" in found]


def _same(document: Mapping[str, Any], node: Any, source: Any) -> bool:
    return node is not None and resolve_ref(document, node) is source
