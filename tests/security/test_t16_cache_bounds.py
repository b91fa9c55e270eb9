"""Security review t16: the Redis HTTP cache had no size bound (one caller: +151 MiB in 200
calls), and in memory one caller's reads could push out everyone else's. Both storages now hold a
byte bound overall and one per caller; a caller past its own loses its own oldest entries, never
another caller's."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.http_cache import HttpCache
from ghmcp_runtime.calls.upstream import ForgeUpstream
from tests.functional.conftest import OWNER, REPO, TOKEN
from tests.http.conftest import TOKEN_Y
from tests.http.test_http_cache_redis import read

pytestmark = pytest.mark.anyio
BODY = "B" * 60_000
PER_CALLER = 256 * 1024


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def big(fake: FakeGitHub, seeded: dict[str, Any]) -> list[int]:
    fake.add_token(TOKEN_Y, "hubot", scopes=("repo",), collaborator_on=f"{OWNER}/{REPO}")
    return [fake.add_issue(OWNER, REPO, f"big {i}", body=BODY, author="hubot") for i in range(12)]


def upstream(fake: FakeGitHub, where: str) -> ForgeUpstream:
    return ForgeUpstream(base_url="http://fake.test", transport=fake.asgi_transport(),
                         cache=HttpCache(where, max_bytes=4 * PER_CALLER, max_bytes_per_caller=PER_CALLER))


def revalidations(fake: FakeGitHub) -> list[int]:
    return [t.status for t in fake.timeline]


@pytest.mark.parametrize("where", ["memory", "redis"])
async def test_one_callers_reads_stay_within_its_bound_and_cost_no_one_else_an_entry(
    fake: FakeGitHub, big: list[int], where: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("redis_url") if where == "redis" else "memory"
    up = upstream(fake, url)
    await read(up, TOKEN_Y, "u_victim", big[0])  # the victim's entry
    for number in big:  # 12 x ~60 KB from one caller: 720 KB against a 256 KiB bound
        await read(up, TOKEN, "u_flood", number)
    fake.timeline.clear()
    await read(up, TOKEN_Y, "u_victim", big[0])
    assert revalidations(fake) == [304]  # still cached: the flood evicted only its own entries
    if where == "redis":
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(url)
        total = int(await client.get("ghmcp:http:bounds:total") or 0)
        entries = len(await client.keys("ghmcp:http:entry:*"))
        await client.aclose()
        assert total <= PER_CALLER + 70_000 and entries <= 6  # the victim's one, ≤ 4 of the flood's
    await up.aclose()
