"""Runtime library of generated MCP servers: upstream calls, errors, cursors, idempotency, app.

`run` and `build_server` import the MCP SDK (~0.5 s), so they load on first use; the model and
error types stay cheap to import (the generator imports them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ghmcp_runtime.context import ToolContext
from ghmcp_runtime.errors import ToolError, repair
from ghmcp_runtime.model import (
    Annotations,
    ErrorCode,
    FieldRule,
    Operation,
    ServerSpec,
    Shape,
    ToolSpec,
)

if TYPE_CHECKING:
    from ghmcp_runtime.app import build_server, run

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
        from ghmcp_runtime import app

        return getattr(app, name)
    raise AttributeError(f"module 'ghmcp_runtime' has no attribute {name!r}")
