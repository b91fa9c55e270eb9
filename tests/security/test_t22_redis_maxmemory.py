"""Security review t22: with the HTTP cache and the idempotency keys in one Redis whose
maxmemory policy evicts, one caller's cache flood pushed another caller's key out, and its retry
wrote twice. The cache is now bounded (test_t16_cache_bounds), each caller's keys are counted
(test_t11_n14_idempotency_quota), and the server warns at start when the keys' Redis may evict
them or holds the cache too (README: "Deploying over HTTP")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import redis

from ghmcp_runtime.stores.redis_store import eviction_warnings
from tests.http.http_support import http_server_process, redis_server, server_env


@pytest.fixture
def limited(redis_url: str) -> Iterator[Callable[[str], None]]:
    """Sets the session Redis's maxmemory policy, and puts its defaults back afterwards."""
    client = redis.Redis.from_url(redis_url)

    def policy(name: str) -> None:
        client.config_set("maxmemory", "64mb")
        client.config_set("maxmemory-policy", name)

    yield policy
    client.config_set("maxmemory", "0")
    client.config_set("maxmemory-policy", "noeviction")
    client.close()


@pytest.fixture
def evicting_redis(redis_url: str, limited: Callable[[str], None]) -> str:
    limited("allkeys-lru")
    return redis_url


def test_an_evicting_policy_and_a_shared_cache_are_warned_of(evicting_redis: str, fake_url: str) -> None:
    assert len(eviction_warnings(evicting_redis, http_cache=evicting_redis.replace("/0", "/1"))) == 2
    output: list[str] = []
    env = server_env(fake_url, GHMCP_IDEMPOTENCY_STORE=evicting_redis, GHMCP_HTTP_CACHE=evicting_redis)
    with http_server_process(env, output=output):
        pass
    reasons = [json.loads(line).get("reason", "") for line in output if line.startswith("{")]
    assert any("maxmemory-policy allkeys-lru" in r for r in reasons), reasons
    assert any("shares the idempotency Redis" in r for r in reasons), reasons


def test_a_redis_that_never_evicts_and_holds_no_cache_is_not(
    redis_url: str, limited: Callable[[str], None]
) -> None:
    limited("noeviction")
    with redis_server() as cache_url:
        assert eviction_warnings(redis_url, http_cache=cache_url) == []
    assert eviction_warnings(redis_url, http_cache="memory") == []
