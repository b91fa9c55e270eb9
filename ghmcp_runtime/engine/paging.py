"""Page-number pagination behind HMAC cursors, shared by declared tools and hooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.core.errors import ToolError

# Arguments that change how rows are rendered, not which rows come back: a cursor ignores them.
DENSITY_PARAMS = ("detail",)


def without(args: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k not in names}


def cursor_binding(args: Mapping[str, Any], cursor_param: str) -> dict[str, Any]:
    """The arguments a cursor is bound to: everything that selects rows."""
    return without(args, cursor_param, *DENSITY_PARAMS)


def open_state(ctx: ToolContext, args: Mapping[str, Any], cursor_param: str) -> dict[str, Any]:
    """The state a cursor argument carries ({} without one); a bad cursor raises a ToolError
    whose repair restarts the listing, unless that would echo free-form values."""
    token = args.get(cursor_param)
    if token is None:
        return {}
    restart = without(args, cursor_param)
    try:
        return ctx.open_cursor(token, bound_to=cursor_binding(args, cursor_param),
                               field=cursor_param, restart_arguments=restart)
    except ToolError as err:
        if err.repair is not None and not set(restart) <= set(ctx.tool.echo_safe):
            # a restart repair would have to echo free-form values (query, labels, logins)
            err.repair = None
            err.message += f" Repeat your previous call without {cursor_param}."
        raise


def open_page(ctx: ToolContext, args: Mapping[str, Any], cursor_param: str) -> int:
    """The page a cursor argument points at (1 without one)."""
    return int(open_state(ctx, args, cursor_param).get("page", 1))


def next_cursor(ctx: ToolContext, args: Mapping[str, Any], cursor_param: str, page: int) -> str:
    return ctx.mint_cursor({"page": page + 1}, bound_to=cursor_binding(args, cursor_param))

