"""The upstream client a server's settings describe: built with the first request that needs the
forge (a tool call, or reading a token's scopes), shared by everything after it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ghmcp_runtime.calls.http_cache import parse_setting as parse_http_cache
from ghmcp_runtime.calls.upstream import ForgeUpstream

if TYPE_CHECKING:
    from ghmcp_runtime.serving.served import Served


def default_upstream(served: Served) -> ForgeUpstream:
    """The upstream client `served`'s settings describe (checked already, at start)."""
    spec, settings = served.spec, served.settings
    cache = parse_http_cache(settings.http_cache)
    if cache is not None:
        cache = replace(cache, max_bytes=settings.http_cache_max_bytes,
                        max_bytes_per_caller=settings.http_cache_max_bytes_per_caller)
    return ForgeUpstream(
        forge=spec.forge,
        base_url=settings.api_url_for(spec.forge),
        api_version=spec.api_version,
        timeout=(settings.timeout_s, settings.connect_timeout_s),
        cache=cache,
        inflight_per_caller=settings.inflight_per_caller,
        user_agent=f"{spec.name}/{spec.version}",
    )
