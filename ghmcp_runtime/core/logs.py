"""JSON-lines logging to stderr (stdout is the stdio JSON-RPC channel), with token redaction.

Callers never pass tokens or bodies; `redact` is only the last line of defence.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ghmcp_runtime.cleaning.invisible import CANDIDATE_CLASS
from ghmcp_runtime.core.forges import FORGES

LOGGER_NAME = "ghmcp"
REDACTED = "[redacted]"

# fields every log line of the current call carries (e.g. the caller id), set by `call_fields`
_CALL_FIELDS: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "ghmcp_call_fields", default=None)

# a token of any forge by its prefix (`ForgeProfile.token_prefixes`), or what follows an
# Authorization scheme of any forge ("Bearer", Forgejo's "token") when it looks like a
# credential (8+ token characters, not letters only): "no usable bearer token" is a sentence,
# not a secret. Every forge's, whichever forge the server talks to: this is the last defence
_PREFIXES = "|".join(sorted({re.escape(p) for forge in FORGES.values() for p in forge.token_prefixes}))
_SCHEMES = "|".join(sorted({re.escape(forge.auth_scheme) for forge in FORGES.values()}))
_TOKEN = re.compile(
    rf"(?:(?:{_PREFIXES})[A-Za-z0-9_]{{8,}}"
    rf"|(?i:{_SCHEMES})\s+(?=[A-Za-z0-9._~+/=-]*[0-9_.~+/=-])[A-Za-z0-9._~+/=-]{{8,}})"
)
# every _TOKEN match starts with one of these, and JSON encoding (ensure_ascii=False) keeps them
# as they are: a line without them has nothing to redact (most lines; checked once per line)
_TOKEN_START = re.compile(rf"{_PREFIXES}|(?i:{_SCHEMES})")
# characters a terminal or viewer would act on or hide (controls, bidi, invisible format and
# tag characters): written as JSON escapes, so a log line reads as what it holds
_UNSAFE = re.compile(f"[{CANDIDATE_CLASS}\u2028\u2029]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def redact(value: Any) -> Any:
    """Replace anything that looks like a forge token, recursively through dicts and lists."""
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
        if record.name != LOGGER_NAME:  # a library's record (SDK, uvicorn) routed through here
            line["logger"] = record.name
        line.update(_CALL_FIELDS.get() or {})
        fields = getattr(record, "fields", None)
        if isinstance(fields, Mapping):
            line.update((k, v) for k, v in fields.items() if v is not None)
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        text = json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":"))
        if _TOKEN_START.search(text) is not None:
            text = json.dumps(redact(line), ensure_ascii=False, default=str, separators=(",", ":"))
        return _UNSAFE.sub(_escaped, text)


class _StderrHandler(logging.Handler):
    # Looks sys.stderr up at emit time, so redirected/captured stderr is honoured.
    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def _json_handler() -> _StderrHandler:
    handler = _StderrHandler()
    handler.setFormatter(JsonFormatter())
    return handler


def _level() -> str:
    level = os.environ.get("GHMCP_LOG_LEVEL", "INFO").upper()
    return level if level in logging.getLevelNamesMapping() else "INFO"


def get_logger() -> logging.Logger:
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_json_handler())
        logger.propagate = False
        logger.setLevel(_level())
    return logger


# uvicorn configures its own loggers from this dict (uvicorn.run(log_config=...)); every one of
# them propagates to the root logger, which `route_library_logs` gives the JSON handler.
UVICORN_LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {name: {"handlers": [], "propagate": True}
                for name in ("uvicorn", "uvicorn.error", "uvicorn.access")},
}


def route_library_logs() -> None:
    """Every stderr line a JSON line: the SDK's, uvicorn's and warnings' records go through the
    same formatter (the root logger), instead of Python's plain-text last-resort handler."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(handler)
    root.addHandler(_json_handler())
    root.setLevel(max(logging.WARNING, logging.getLevelNamesMapping()[_level()]))
    logging.captureWarnings(True)
    get_logger()


@contextmanager
def call_fields(**fields: Any) -> Iterator[None]:
    """Add `fields` to every log line emitted inside the block (this task and its children)."""
    token = _CALL_FIELDS.set({**(_CALL_FIELDS.get() or {}), **fields})
    try:
        yield
    finally:
        _CALL_FIELDS.reset(token)


def log_event(event: str, *, level: int = logging.INFO, exc_info: bool = False, **fields: Any) -> None:
    get_logger().log(level, event, exc_info=exc_info, extra={"fields": fields})


def elapsed_ms(start: float) -> int:
    return round((time.perf_counter() - start) * 1000)
