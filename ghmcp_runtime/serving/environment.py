"""The environment a generated server reads: for `--help` and for what the generator publishes about
it (the MCP Registry's `server.json`, the `.mcpb` manifest). README.md, "Configuration", has more."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ghmcp_runtime.core.forge_profile import ForgeProfile

Transport = Literal["stdio", "http"]
BOTH: tuple[Transport, ...] = ("stdio", "http")
HTTP: tuple[Transport, ...] = ("http",)


@dataclass(frozen=True, slots=True)
class Variable:
    name: str
    text: str
    # a credential, or a value that may carry one (a redis:// URL with a password)
    secret: bool = False
    kind: Literal["string", "number", "boolean"] = "string"  # booleans read true/false (or 1/0)
    transports: tuple[Transport, ...] = BOTH  # where it has an effect
    required: bool = False


# every GHMCP_* variable the runtime reads (tests/runtime/test_help.py keeps this list complete)
VARIABLES: tuple[Variable, ...] = (
    Variable("GHMCP_SERVER_SECRET", "keys cursors and caller identities (hex; random per process "
             "when unset; GHMCP_CURSOR_SECRET is still read)", secret=True),
    Variable("GHMCP_PUBLIC_URL", "HTTP: the URL clients use, named by the 401 challenge and the "
             "metadata", transports=HTTP),
    Variable("GHMCP_AUTHORIZATION_SERVER", "HTTP: the OAuth authorization server to advertise",
             transports=HTTP),
    Variable("GHMCP_ALLOW_INSECURE_API_URL", "true: accept a plain http:// API URL that is not "
             "loopback", kind="boolean"),
    Variable("GHMCP_IDEMPOTENCY_STORE", "memory (default, one process) or a redis:// URL shared by "
             "replicas (as --idempotency-store)", secret=True),
    Variable("GHMCP_IDEMPOTENCY_KEYS_PER_CALLER", "live idempotency keys per caller (default 1000)",
             kind="number"),
    Variable("GHMCP_IDEMPOTENCY_SHARED_KEYS", "live idempotency keys past each caller's first 10, "
             "all callers together (default 10000)", kind="number"),
    Variable("GHMCP_HTTP_CACHE", "memory (default), off, or a redis:// URL: revalidated reads",
             secret=True),
    Variable("GHMCP_HTTP_CACHE_MAX_BYTES", "HTTP cache bytes in all (default 16 MiB)", kind="number"),
    Variable("GHMCP_HTTP_CACHE_MAX_BYTES_PER_CALLER", "HTTP cache bytes per caller (default 4 MiB)",
             kind="number"),
    Variable("GHMCP_MAX_CONCURRENT", "upstream requests in flight per tool call (default 4)",
             kind="number"),
    Variable("GHMCP_MAX_INFLIGHT_PER_CALLER", "upstream requests in flight per caller (default 16)",
             kind="number"),
    Variable("GHMCP_TIMEOUT_S", "upstream request timeout in seconds (default 20)", kind="number"),
    Variable("GHMCP_CONNECT_TIMEOUT_S", "upstream connect timeout in seconds (default 5)",
             kind="number"),
    Variable("GHMCP_WRITE_INTERVAL_S", "batches: seconds between write requests, per token "
             "(default 1)", kind="number"),
    Variable("GHMCP_BATCH_MAX_WAIT_S", "batches: the longest rate-limit wait before stopping "
             "(default 60)", kind="number"),
    Variable("GHMCP_LOCKDOWN", "true: withhold text by authors without push access to public "
             "repositories (as --lockdown)", kind="boolean"),
    Variable("GHMCP_READ_ONLY", "true: hide every tool that writes (as --read-only)", kind="boolean"),
    Variable("GHMCP_TOOLSETS", "comma-separated toolsets to serve, 'all' or 'default' (as "
             "--toolsets)"),
    Variable("GHMCP_TOOLS", "comma-separated tools to serve on top of the toolsets (as --tools)"),
    Variable("GHMCP_EXCLUDE_TOOLS", "comma-separated tools to hide (as --exclude-tools)"),
    Variable("GHMCP_REPOS", "repository allowlist, e.g. octo-org/*,me/app (as --repos)"),
    Variable("GHMCP_DYNAMIC_TOOLSETS", "true: start small, the model enables toolsets (as "
             "--dynamic-toolsets)", kind="boolean"),
    Variable("GHMCP_LOG_LEVEL", "DEBUG, INFO (default), WARNING or ERROR; logs are JSON lines on "
             "stderr"),
)


def forge_variables(forge: ForgeProfile) -> tuple[Variable, Variable]:
    """The forge's own token and API URL variables (GITHUB_TOKEN / GITHUB_API_URL, …)."""
    default = forge.default_api_url
    return (Variable(forge.token_env, f"the {forge.display_name} token (stdio; over HTTP each "
                     "caller sends its own as Authorization: Bearer)", secret=True, required=True,
                     transports=("stdio",)),
            Variable(forge.api_url_env, f"the API base URL (default {default or 'none: required'})",
                     required=default is None))


def variables(forge: ForgeProfile) -> tuple[Variable, ...]:
    """Every variable a server of `forge` reads, its forge's own first."""
    return (*forge_variables(forge), *VARIABLES)


def help_epilog(forge: ForgeProfile) -> str:
    rows = variables(forge)
    width = max(len(v.name) for v in rows)
    return "environment:\n" + "\n".join(f"  {v.name:<{width}}  {v.text}" for v in rows)
