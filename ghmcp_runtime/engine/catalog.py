"""Names that must exist: map names a caller gave to the exact names of a repository catalog.

The names-must-exist recipe (labels on create/update today). Hooks call it now; a declarative
runner calls the same functions later:

    exact = await require_names(
        ctx, catalog=ops.ISSUES_LIST_LABELS_FOR_REPO, lookup=ops.ISSUES_GET_LABEL,
        path={"owner": "octo-org", "repo": "roadmap"},
        names={"add_labels": ["BUG", "docs"], "remove_labels": ["wontfix"]},
        repair=repair("list_labels", "github_list_labels", {...}),
    )
    # {"add_labels": ["bug", "docs"], "remove_labels": ["wontfix"]}: same order, exact names;
    # or ToolError label_not_found: details.field(s), "no such label: add_labels[1]", the repair.

`catalog` lists the items (paged as the forge pages, each item has `name`); `lookup` (optional) reads one
item by `{name}` in its path. Names are never echoed: errors give parameter indexes only.

Case rule (the only one for label names in the server): a name matches a catalog entry when it is
equal, or equal once ASCII letters are folded. GitHub compares label names case-insensitively but
does not document its rule beyond ASCII (is `straße` the label `STRASSE`?), so every other name,
and every name absent from the first catalog page, is asked of GitHub through `lookup`, whose
answer carries the exact name under GitHub's own rule. Without `lookup`, more catalog pages are
read and unmatched names are missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.core.concurrent import gather
from ghmcp_runtime.core.errors import ToolError, UpstreamError
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.core.transforms import fold_name

MAX_PAGES = 100  # without a lookup: at most 10,000 entries are read
_UNADDRESSABLE = ("", ".", "..")  # dot segments cannot be a path segment: catalog only
fold = fold_name  # a name's comparison key


class _Index:
    def __init__(self) -> None:
        self.exact: set[str] = set()
        self.folded: dict[str, str] = {}

    def add(self, names: Iterable[str]) -> None:
        for name in names:
            self.exact.add(name)
            self.folded.setdefault(fold(name), name)

    def find(self, name: str) -> str | None:
        return name if name in self.exact else self.folded.get(fold(name))


async def _page(ctx: ToolContext, catalog: Operation, path: Mapping[str, str | int],
                page: int, key: str = "name", query: Mapping[str, Any] | None = None) -> tuple[list[str], bool]:
    size = ctx.forge.max_page_size
    resp = await ctx.call(catalog, path=path, query={**(query or {}), **ctx.forge.page_query(page, size)})
    return [str(item[key]) for item in resp.data], ctx.forge.has_more(resp, page, size)


async def list_names(ctx: ToolContext, catalog: Operation, path: Mapping[str, str | int],
                     *, pages: int = MAX_PAGES) -> list[str]:
    """Every name of the catalog, in its order (at most `pages` pages)."""
    names: list[str] = []
    for page in range(1, pages + 1):
        chunk, more = await _page(ctx, catalog, path, page)
        names += chunk
        if not more:
            break
    return names


async def _look_up(ctx: ToolContext, lookup: Operation, path: Mapping[str, str | int],
                   name: str, key: str = "name", param: str = "name") -> str | None:
    """The exact name of one entry; a bodiless yes (204, e.g. an assignee check) keeps `name`."""
    try:
        resp = await ctx.call(lookup, path={**path, param: name})
    except ToolError as err:
        if err.code == lookup.not_found or (isinstance(err, UpstreamError) and err.status == 404):
            return None
        raise
    return str(resp.data[key]) if isinstance(resp.data, Mapping) else name


async def resolve_names(ctx: ToolContext, *, catalog: Operation, path: Mapping[str, str | int],
                        names: Sequence[str], lookup: Operation | None = None,
                        key: str = "name", param: str = "name",
                        query: Mapping[str, Any] | None = None) -> list[str | None]:
    """The exact catalog name for each of `names` (same order), None where none exists. `key` is
    the entries' name field, `param` the lookup's path parameter (assignees: login, assignee),
    `query` the catalog's fixed filters (milestones: state all)."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return []
    index = _Index()
    chunk, more = await _page(ctx, catalog, path, 1, key, query)
    index.add(chunk)
    found = {name: index.find(name) for name in wanted}
    ask = [n for n in wanted if found[n] is None and (lookup is None or n in _UNADDRESSABLE)]
    page = 1
    while ask and more and page < MAX_PAGES:
        page += 1
        chunk, more = await _page(ctx, catalog, path, page, key, query)
        index.add(chunk)
        found.update({n: index.find(n) for n in ask})
        ask = [n for n in ask if found[n] is None]
    if lookup is not None:
        missing = [n for n in wanted if found[n] is None and n not in _UNADDRESSABLE]
        exact = await gather([partial(_look_up, ctx, lookup, path, n, key, param) for n in missing])
        found.update(zip(missing, exact, strict=True))
    return [found[name] for name in names]


async def require_names(ctx: ToolContext, *, catalog: Operation, path: Mapping[str, str | int],
                        names: Mapping[str, Sequence[str]], lookup: Operation | None = None,
                        repair: Mapping[str, Any] | None = None, code: str = "label_not_found",
                        kind: str = "label", key: str = "name", param: str = "name",
                        absent: str = "do not exist in the repository",
                        query: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """The exact names per parameter (same order), or `code` naming every missing index.

    One catalog read serves every parameter; nothing is written, so the error says so."""
    every = [name for field in names.values() for name in field]
    exact = iter(await resolve_names(ctx, catalog=catalog, path=path, names=every, lookup=lookup,
                                     key=key, param=param, query=query))
    resolved = {field: [next(exact) for _ in values] for field, values in names.items()}
    where = [f"{field}[{i}]" for field, values in resolved.items()
             for i, name in enumerate(values) if name is None]
    if where:
        fields = sorted({w.partition("[")[0] for w in where})
        details: dict[str, Any] = {"reason": f"no such {kind}: {', '.join(where)}", "count": len(where)}
        details.update({"field": fields[0]} if len(fields) == 1 else {"fields": fields})
        raise ToolError(
            code,
            f"{len(where)} {kind} name(s) {absent}; nothing was changed.",
            details=details, repair=repair,
        )
    return {field: [n for n in values if n is not None] for field, values in resolved.items()}
