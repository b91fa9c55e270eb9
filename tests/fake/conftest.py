"""Fixtures for the fake GitHub's own tests: a small seeded repository and an in-process client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from fake_support import START, TOKEN, seed

from fakegithub import FakeClock, FakeGitHub


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def fake(clock: FakeClock) -> Iterator[FakeGitHub]:
    github = FakeGitHub(clock=clock)
    yield github
    assert github.violations == [], github.violations


@pytest.fixture
def seeded(fake: FakeGitHub) -> dict[str, int]:
    return seed(fake)


@pytest.fixture
async def gh(fake: FakeGitHub, seeded: dict[str, int]) -> AsyncIterator[httpx.AsyncClient]:
    async with fake.client(TOKEN) as client:
        yield client
