"""Canonical JSON: the bytes content-derived tokens (versions, cursors, keys) are hashed over."""

from __future__ import annotations

import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
