"""Names for ids: find the rows of a listing whose `match` field is each of some strings (the
resolve recipe, `ghmcp_runtime.core.declared.Resolve`; the runner raises the declared error on a
miss).

    found = await find_rows(ctx, spec, path={"owner": "o", "repo": "r"}, query={"state": "open"},
                            wanted=["v1.1", "v2.0"])
    found.values    # name -> the matching row's `value` (e.g. the milestone number); absent: none
    found.choices   # the first `spec.choices` rows' names, for the error

One walk of the listing serves every name (a list parameter's, and every parameter resolved
through the same listing). A name matches when it is equal, or equal once ASCII letters are
folded and no other row's name folds the same (catalog.fold, the server's one case rule), also
once hidden characters and markup are removed as the error's `choices` show names (outbound.py
cleans them). An exact match anywhere wins over a folded one, so pages are read until every name
matched exactly (or the listing ends) before a folded match is taken.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.cleaning.untrusted import sanitize
from ghmcp_runtime.core.declared import Resolve
from ghmcp_runtime.core.projection import walk
from ghmcp_runtime.engine.catalog import fold


@dataclass(slots=True)
class Found:
    values: dict[str, Any] = field(default_factory=dict)
    choices: list[str] = field(default_factory=list)
    complete: bool = True  # every row was read (False: the listing has more than `pages` pages)


async def find_rows(ctx: ToolContext, spec: Resolve, *, path: Mapping[str, Any],
                    query: Mapping[str, Any], wanted: Sequence[str]) -> Found:
    found = Found()
    keys = {name: fold(name) for name in wanted}
    folded: dict[str, list[Any]] = {name: [] for name in wanted}
    size = ctx.forge.max_page_size
    for page in range(1, spec.pages + 1):
        resp = await ctx.call(spec.operation, path=path, query={**query, **ctx.forge.page_query(page, size)})
        for row in resp.data if isinstance(resp.data, list) else []:
            name = walk(row, spec.match)
            if not isinstance(name, str):
                continue
            if name in keys and name not in found.values:
                found.values[name] = walk(row, spec.value)
            shown = fold(sanitize(name)[0])  # as the choices show it
            for wanted_name, key in keys.items():
                if fold(name) == key or shown == key:
                    folded[wanted_name].append(walk(row, spec.value))
            if len(found.choices) < spec.choices:
                found.choices.append(name)
        if len(found.values) == len(keys) or not ctx.forge.has_more(resp, page, size):
            break
    else:
        found.complete = False
    for name, candidates in folded.items():
        if name not in found.values and len(candidates) == 1:
            found.values[name] = candidates[0]
    return found
