"""The functional and HTTP suites' fixtures (a fresh fake GitHub that fails the test on any spec
violation, its seed and URL, a Redis), for the security review's regression tests."""

from __future__ import annotations

from tests.functional.conftest import fake, pace_stamps, seeded
from tests.http.conftest import fake_url, redis_url, redis_url_session

__all__ = ["fake", "fake_url", "pace_stamps", "redis_url", "redis_url_session", "seeded"]
