"""JSON-lines logging to stderr (stdout is the stdio JSON-RPC channel), with token redaction.

Callers never pass tokens or bodies; `redact` is only the last line of defence.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from collections.abc import Mapping
from typing import Any

LOGGER_NAME = "ghmcp"
REDACTED = "[redacted]"

_TOKEN = re.compile(
    r"(?:gh[pousr]_[A-Za-z0-9_]{8,}|github_pat_[A-Za-z0-9_]{8,}|(?i:bearer)\s+[^\s\"',;]+)"
)


def redact(value: Any) -> Any:
    """Replace anything that looks like a GitHub token, recursively through dicts and lists."""
    if isinstance(value, str):
        return _TOKEN.sub(REDACTED, value)
    if isinstance(value, Mapping):
        return {str(k): redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, Mapping):
            line.update((k, v) for k, v in fields.items() if v is not None)
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(redact(line), ensure_ascii=False, default=str, separators=(",", ":"))


class _StderrHandler(logging.Handler):
    # Looks sys.stderr up at emit time, so redirected/captured stderr is honoured.
    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def get_logger() -> logging.Logger:
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(JsonFormatter())
        logger.addHandler(handler)
        logger.propagate = False
        level = os.environ.get("GHMCP_LOG_LEVEL", "INFO").upper()
        logger.setLevel(level if level in logging.getLevelNamesMapping() else "INFO")
    return logger


def log_event(event: str, *, level: int = logging.INFO, exc_info: bool = False, **fields: Any) -> None:
    get_logger().log(level, event, exc_info=exc_info, extra={"fields": fields})


def elapsed_ms(start: float) -> int:
    return round((time.perf_counter() - start) * 1000)
