"""Fixtures for streamable HTTP, the Redis idempotency store and scale-out across replicas."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, TOKEN, fake, seed
from tests.http.http_support import redis_server

__all__ = ["fake"]  # the functional suite's fake fixture (fresh fake, no spec violations at teardown)

# user X is the functional tests' token (octocat); user Y is a second collaborator (hubot)
TOKEN_X = TOKEN
TOKEN_Y = "ghp_httptestsseconduser00000000000000002"
LOGIN_X, LOGIN_Y = "octocat", "hubot"


@pytest.fixture(scope="session")
def redis_url_session() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture
def redis_url(redis_url_session: str) -> Iterator[str]:
    """The session's redis-server, emptied before each test."""
    import redis

    client = redis.Redis.from_url(redis_url_session)
    client.flushdb()
    client.close()
    yield redis_url_session


@pytest.fixture
def seeded(fake: FakeGitHub) -> dict[str, Any]:
    """The functional seed (35 comments on `first`, so comment cursors exist) plus user Y."""
    info = seed(fake)
    fake.add_token(TOKEN_Y, LOGIN_Y, scopes=("repo",), collaborator_on=f"{OWNER}/{REPO}")
    return info


@pytest.fixture
def fake_url(fake: FakeGitHub, seeded: dict[str, Any]) -> Iterator[str]:
    with fake.serve() as url:
        yield url
