"""The environment a generated server reads, for `--help` (README.md, "Configuration", has more)."""

from __future__ import annotations

from ghmcp_runtime.core.forge_profile import ForgeProfile

# every GHMCP_* variable the runtime reads (tests/runtime/test_help.py keeps this list complete)
VARIABLES: tuple[tuple[str, str], ...] = (
    ("GHMCP_SERVER_SECRET", "keys cursors and caller identities (hex; random per process when unset; "
                            "GHMCP_CURSOR_SECRET is still read)"),
    ("GHMCP_PUBLIC_URL", "HTTP: the URL clients use, named by the 401 challenge and the metadata"),
    ("GHMCP_AUTHORIZATION_SERVER", "HTTP: the OAuth authorization server to advertise"),
    ("GHMCP_ALLOW_INSECURE_API_URL", "1: accept a plain http:// API URL that is not loopback"),
    ("GHMCP_IDEMPOTENCY_STORE", "as --idempotency-store"),
    ("GHMCP_IDEMPOTENCY_KEYS_PER_CALLER", "live idempotency keys per caller (default 1000)"),
    ("GHMCP_IDEMPOTENCY_SHARED_KEYS", "live idempotency keys past each caller's first 10, all "
                                      "callers together (default 10000)"),
    ("GHMCP_HTTP_CACHE", "memory (default), off, or a redis:// URL: revalidated reads"),
    ("GHMCP_HTTP_CACHE_MAX_BYTES", "HTTP cache bytes in all (default 16 MiB)"),
    ("GHMCP_HTTP_CACHE_MAX_BYTES_PER_CALLER", "HTTP cache bytes per caller (default 4 MiB)"),
    ("GHMCP_MAX_CONCURRENT", "upstream requests in flight per tool call (default 4)"),
    ("GHMCP_MAX_INFLIGHT_PER_CALLER", "upstream requests in flight per caller (default 16)"),
    ("GHMCP_TIMEOUT_S", "upstream request timeout in seconds (default 20)"),
    ("GHMCP_CONNECT_TIMEOUT_S", "upstream connect timeout in seconds (default 5)"),
    ("GHMCP_WRITE_INTERVAL_S", "batches: seconds between write requests, per token (default 1)"),
    ("GHMCP_BATCH_MAX_WAIT_S", "batches: the longest rate-limit wait before stopping (default 60)"),
    ("GHMCP_LOCKDOWN", "as --lockdown"),
    ("GHMCP_READ_ONLY", "as --read-only"),
    ("GHMCP_TOOLSETS", "as --toolsets"),
    ("GHMCP_TOOLS", "as --tools"),
    ("GHMCP_EXCLUDE_TOOLS", "as --exclude-tools"),
    ("GHMCP_REPOS", "as --repos"),
    ("GHMCP_DYNAMIC_TOOLSETS", "as --dynamic-toolsets"),
    ("GHMCP_LOG_LEVEL", "DEBUG, INFO (default), WARNING or ERROR; logs are JSON lines on stderr"),
)


def help_epilog(forge: ForgeProfile) -> str:
    default = forge.default_api_url or "none: required"
    rows = [(forge.token_env, f"the {forge.display_name} token (stdio; over HTTP each caller sends its "
                              "own as Authorization: Bearer)"),
            (forge.api_url_env, f"the API base URL (default {default})"), *VARIABLES]
    width = max(len(name) for name, _ in rows)
    return "environment:\n" + "\n".join(f"  {name:<{width}}  {text}" for name, text in rows)
