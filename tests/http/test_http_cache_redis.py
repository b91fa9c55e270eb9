"""The conditional-read cache shared by replicas through Redis (the idempotency store's server)."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.calls.cursors import HmacCursorCodec
from ghmcp_runtime.calls.http_cache import HttpCache
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.core.projection import ShapeProjector
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from tests.functional.conftest import OWNER, REPO, TOKEN
from tests.http.conftest import TOKEN_Y

pytestmark = pytest.mark.anyio
GET_ISSUE = Operation(operation_id="issues/get", method="GET",
                      path="/repos/{owner}/{repo}/issues/{issue_number}",
                      not_found="issue_not_found", success_status=(200,))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def replica(fake: FakeGitHub, redis_url: str) -> ForgeUpstream:
    return ForgeUpstream(base_url="http://fake.test", transport=fake.asgi_transport(),
                          cache=HttpCache(redis_url))


async def read(up: ForgeUpstream, token: str, identity: str, number: int) -> Any:
    from github_issues_mcp import SERVER

    ctx = ToolContext(tool=SERVER.tools[0], request_id="req_1", identity=identity, arguments={},
                      upstream=up, cursors=HmacCursorCodec(b"k"),
                      idempotency=IdempotencyRunner(MemoryStore()), projector=ShapeProjector({}),
                      credential=token)
    path = {"owner": OWNER, "repo": REPO, "issue_number": number}
    return (await up.call(ctx, GET_ISSUE, path=path, query=None, body=None)).data


async def test_replicas_share_revalidated_reads_per_caller(
    fake: FakeGitHub, seeded: dict[str, Any], redis_url: str
) -> None:
    import redis.asyncio as aioredis

    one, two = replica(fake, redis_url), replica(fake, redis_url)
    number = seeded["first"]
    first = await read(one, TOKEN, "u_x", number)
    assert await read(two, TOKEN, "u_x", number) == first  # the other replica revalidates it
    assert await read(two, TOKEN_Y, "u_y", number) == first  # another caller: its own request
    assert [(t.status, t.spent) for t in fake.timeline] == [(200, True), (304, False), (200, True)]
    client = aioredis.Redis.from_url(redis_url)
    keys = await client.keys("*")
    assert keys and all(k.startswith(b"ghmcp:http") for k in keys)
    for key in keys:  # no token is written to Redis
        kind = await client.type(key)
        values = [await client.get(key)] if kind == b"string" else (
            await client.lrange(key, 0, -1) if kind == b"list" else
            await client.hvals(key) if kind == b"hash" else  # the byte bounds' bookkeeping
            [m for m, _ in await client.zrange(key, 0, -1, withscores=True)])
        assert not any(TOKEN.encode() in v or TOKEN_Y.encode() in v for v in values if v)
    await client.aclose()
    await one.aclose()
    await two.aclose()
