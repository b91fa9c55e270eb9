from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakeforgejo import FakeForgejo
from tests.forgejo.forgejo_support import seed


@pytest.fixture
def fake() -> Iterator[FakeForgejo]:
    forgejo = FakeForgejo()
    yield forgejo
    forgejo.assert_no_violations()


@pytest.fixture
def ids(fake: FakeForgejo) -> dict[str, Any]:
    return seed(fake)
