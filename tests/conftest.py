"""Shared test configuration."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "generated"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

pytest_plugins = ["tests.support.prism"]  # the session-scoped `prism` mock fixture


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
