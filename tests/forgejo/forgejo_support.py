"""forgejo-labels-mcp wired to a seeded Forgejo fake: in memory, over stdio and over HTTP."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from fakeforgejo import FakeForgejo
from forgejo_labels_mcp import SERVER
from ghmcp_runtime.calls.upstream import ForgeUpstream, RetryPolicy
from ghmcp_runtime.core.forges import FORGEJO
from ghmcp_runtime.core.model import ServerSpec
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, build_server

ROOT = Path(__file__).resolve().parents[2]
API = "https://forgejo.test/api/v1"  # where the in-process transport answers
# 40 hex digits, like Forgejo's access tokens
OWNER_TOKEN = "a1" * 20  # alice: owner of the organisation acme, every scope
MEMBER_TOKEN = "b2" * 20  # bob: writes acme/web's issues; reads the organisation, owns nothing
NO_ORG_TOKEN = "c3" * 20  # alice again, but a token without the organization scope
READ_TOKEN = "d4" * 20  # alice, read:issue and read:organization only
ORG, REPO = "acme", "web"
FAST_RETRY = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05, max_total_wait_s=0.5)


def seed(fake: FakeForgejo) -> dict[str, Any]:
    """acme (public organisation, owner alice) with acme/web and acme/api (public) and
    acme/vault (private: alice sees it as owner, bob does not); labels of both kinds; issues and
    pull requests carrying them."""
    fake.add_user("alice")
    fake.add_user("bob")
    fake.add_org(ORG, owners=["alice"], members=["bob"])
    fake.add_repo(ORG, REPO, collaborators={"bob": "write"})
    fake.add_repo(ORG, "api")
    fake.add_repo(ORG, "vault", private=True)
    fake.add_token(OWNER_TOKEN, "alice")
    fake.add_token(MEMBER_TOKEN, "bob", ("write:issue", "read:organization", "read:repository"))
    fake.add_token(NO_ORG_TOKEN, "alice", ("write:issue", "read:repository"))
    fake.add_token(READ_TOKEN, "alice", ("read:issue", "read:organization", "read:repository"))
    bug = fake.add_label("bug", "#d73a4a", "Something isn't working", repo=f"{ORG}/{REPO}")
    docs = fake.add_label("docs", "0075ca", repo=f"{ORG}/{REPO}")
    archived = fake.add_label("legacy", "cccccc", "old", repo=f"{ORG}/{REPO}", archived=True)
    security = fake.add_label("security", "#ee0701", "Security-relevant", org=ORG)
    priority = fake.add_label("priority", "#fbca04", org=ORG)
    fake.add_issue(f"{ORG}/{REPO}", "Crash on start", labels=[bug])
    fake.add_issue(f"{ORG}/{REPO}", "Old crash", labels=[bug], state="closed")
    fake.add_pull_request(f"{ORG}/{REPO}", "Fix crash", labels=[bug, security])
    fake.add_issue(f"{ORG}/api", "Token leak", labels=[security])
    fake.add_issue(f"{ORG}/vault", "Key rotation", labels=[security])
    return {"bug": bug.id, "docs": docs.id, "legacy": archived.id, "security": security.id,
            "priority": priority.id}


def in_memory_server(fake: FakeForgejo, token: str | None = OWNER_TOKEN, *,
                     exposure: ExposureFlags | None = None, timeout: float = 5.0,
                     spec: ServerSpec = SERVER) -> Any:
    upstream = ForgeUpstream(forge=FORGEJO, base_url=API, transport=fake.asgi_transport(),
                             timeout=timeout, retry=FAST_RETRY)
    settings = Settings(token=token, api_url=API, exposure=exposure or ExposureFlags())
    return build_server(spec, settings, upstream=upstream)


def stdio_params(base_url: str, token: str | None = OWNER_TOKEN, *args: str) -> StdioServerParameters:
    env = {"PATH": os.environ.get("PATH", ""), "FORGEJO_API_URL": f"{base_url}/api/v1",
           "GHMCP_CURSOR_SECRET": "forgejo-tests"}
    if token:
        env["FORGEJO_TOKEN"] = token
    return StdioServerParameters(command=sys.executable, args=["-m", "forgejo_labels_mcp", *args],
                                 env=env, cwd=str(ROOT))
