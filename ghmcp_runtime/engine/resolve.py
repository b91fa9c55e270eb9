"""Names for ids: find the row of a listing whose `match` field is a given string (the resolve
recipe, `ghmcp_runtime.core.declared.Resolve`; the runner raises the declared error on a miss).

    found = await find_row(ctx, spec, path={"owner": "o", "repo": "r"}, query={"state": "open"},
                           wanted="v1.1")
    found.value     # the matching row's `value` (e.g. the milestone number), MISSING if none
    found.choices   # the first `spec.choices` rows' names, for the error

A name matches when it is equal, or equal once ASCII letters are folded and no other row's name
folds the same (catalog.fold, the server's one case rule), also once hidden characters and
markup are removed as the error's `choices` show names (outbound.py cleans them). An exact match anywhere wins over a
folded one, so every page is read before a folded match is taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.cleaning.untrusted import sanitize
from ghmcp_runtime.core.declared import Resolve
from ghmcp_runtime.core.projection import walk
from ghmcp_runtime.core.refs import MISSING
from ghmcp_runtime.engine.catalog import fold


@dataclass(slots=True)
class Found:
    value: Any = MISSING
    choices: list[str] = field(default_factory=list)
    complete: bool = True  # every row was read (False: the listing has more than `pages` pages)


async def find_row(ctx: ToolContext, spec: Resolve, *, path: Mapping[str, Any],
                   query: Mapping[str, Any], wanted: str) -> Found:
    found = Found()
    folded: list[Any] = []
    key = fold(wanted)
    size = ctx.forge.max_page_size
    for page in range(1, spec.pages + 1):
        resp = await ctx.call(spec.operation, path=path, query={**query, **ctx.forge.page_query(page, size)})
        for row in resp.data if isinstance(resp.data, list) else []:
            name = walk(row, spec.match)
            if not isinstance(name, str):
                continue
            if name == wanted:
                found.value = walk(row, spec.value)
                return found
            if fold(name) == key or fold(sanitize(name)[0]) == key:  # as the choices show it
                folded.append(walk(row, spec.value))
            if len(found.choices) < spec.choices:
                found.choices.append(name)
        if not ctx.forge.has_more(resp, page, size):
            break
    else:
        found.complete = False
    if len(folded) == 1:
        found.value = folded[0]
    return found
