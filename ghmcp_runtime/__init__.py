"""Runtime library of generated MCP servers: upstream calls, errors, cursors, idempotency, app.

`run` and `build_server` import the MCP SDK (~0.5 s), so they load on first use; the model and
error types stay cheap to import (the generator imports them).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

# httpx's __init__ imports its command-line client (click, then pygments and rich) whenever it
# can, and gives up only when one is missing: click alone comes with uvicorn, so every server
# start paid for a CLI it never runs (issue 24, cold start). A None entry makes that import fail
# at once, as it does where those packages are absent: `httpx.main` is then httpx's own stub.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from ghmcp_runtime.base import moved  # noqa: E402

moved.install()  # the flat module names of before the layer split, for hooks and scripts

from ghmcp_runtime.calls.context import ToolContext  # noqa: E402
from ghmcp_runtime.core.errors import ToolError, repair  # noqa: E402
from ghmcp_runtime.core.model import (  # noqa: E402
    Annotations,
    ErrorCode,
    FieldRule,
    Operation,
    ServerSpec,
    Shape,
    ToolSpec,
)

if TYPE_CHECKING:
    from ghmcp_runtime.serving.app import build_server, run

__version__ = "0.1.0"  # of the ghmcp-runtime distribution; generated servers pin it exactly

__all__ = [
    "Annotations",
    "ErrorCode",
    "FieldRule",
    "Operation",
    "ServerSpec",
    "Shape",
    "ToolContext",
    "ToolError",
    "ToolSpec",
    "build_server",
    "repair",
    "run",
]


def __getattr__(name: str) -> Any:
    if name in ("run", "build_server"):
        from ghmcp_runtime.serving import app

        return getattr(app, name)
    raise AttributeError(f"module 'ghmcp_runtime' has no attribute {name!r}")
