"""Security review t10: every caller shared one upstream connection pool with no per-caller
limit, so one caller with hundreds of requests in flight slowed everyone's calls (2.4 s -> 19 s).
Each caller now has at most `inflight_per_caller` requests in flight; its others wait for its
own, and another caller's request goes straight out."""

from __future__ import annotations

import time

import anyio
import httpx
import pytest

from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.model import Operation
from tests.runtime.runtime_support import make_ctx

pytestmark = pytest.mark.anyio
GET = Operation(operation_id="issues/get", method="GET", path="/repos/{owner}/{repo}/issues/{issue_number}",
                not_found="issue_not_found", success_status=(200,))
DELAY = 0.2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_one_callers_burst_waits_for_its_own_requests_not_anyone_elses() -> None:
    in_flight: dict[str, int] = {}
    most: dict[str, int] = {}

    async def github(request: httpx.Request) -> httpx.Response:
        who = request.headers["authorization"]
        in_flight[who] = in_flight.get(who, 0) + 1
        most[who] = max(most.get(who, 0), in_flight[who])
        await anyio.sleep(DELAY)
        in_flight[who] -= 1
        return httpx.Response(200, json={"number": 1})

    up = ForgeUpstream(base_url="https://api.github.com", transport=httpx.MockTransport(github),
                       inflight_per_caller=2)
    path = {"owner": "o", "repo": "r", "issue_number": 1}
    victim_took: list[float] = []

    async def burst() -> None:
        ctx = make_ctx(up, credential="ghp_flood0000000000000000000000000000000001", identity="c_flood")
        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(lambda: up.call(ctx, GET, path=path, query=None, body=None))

    async def victim() -> None:
        await anyio.sleep(DELAY / 4)  # the burst is queued by now
        ctx = make_ctx(up, credential="ghp_victim000000000000000000000000000000002", identity="c_victim")
        started = time.perf_counter()
        await up.call(ctx, GET, path=path, query=None, body=None)
        victim_took.append(time.perf_counter() - started)

    async with anyio.create_task_group() as group:
        group.start_soon(burst)
        group.start_soon(victim)
    await up.aclose()
    assert most["Bearer ghp_flood0000000000000000000000000000000001"] == 2
    assert victim_took[0] < 3 * DELAY  # one round trip, not behind the burst's five
    assert up.caller_slots.in_flight("c_flood") == 0 and not up.caller_slots._slots  # none kept
