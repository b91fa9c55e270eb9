"""Runtime library of generated MCP servers: upstream calls, errors, cursors, idempotency, app.

`run` and `build_server` import the MCP SDK (~0.5 s), and `ToolContext` the call machinery, so
they load on first use; the model types stay cheap to import (the generator and every server's
declaration import them, before `tools/list` is answered).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

# httpx's __init__ imports its command-line client (click, then pygments and rich) whenever it
# can, and gives up only when one is missing: click alone comes with uvicorn, so every server
# start paid for a CLI it never runs (issue 24, cold start). A None entry makes that import fail
# at once, as it does where those packages are absent: `httpx.main` is then httpx's own stub.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

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
    from ghmcp_runtime.calls.context import ToolContext
    from ghmcp_runtime.core.errors import ToolError, repair
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


_LOADED_ON_USE = {
    "run": "ghmcp_runtime.serving.app",
    "build_server": "ghmcp_runtime.serving.app",
    "ToolContext": "ghmcp_runtime.calls.context",
    "ToolError": "ghmcp_runtime.core.errors",
    "repair": "ghmcp_runtime.core.errors",
}


def __getattr__(name: str) -> Any:
    module = _LOADED_ON_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'ghmcp_runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
