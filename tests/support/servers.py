"""Every server of the repository, discovered from `overrides/*.yaml` (one file, one server) and
`overrides/forges/*.yaml` (one forge, one server of all its files): the test matrices take their
servers from here, so a new override file is tested without a test edit."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = ROOT / "overrides"


@dataclass(frozen=True, slots=True)
class Server:
    overrides: Path
    name: str  # the distribution and console script
    package: str  # generated/<package>/
    forge: str = "github"  # the forge profile (ghmcp_runtime.core.forges): its token and URL variables

    def env(self, api_url: str, token: str) -> dict[str, str]:
        """The variables that point the server at `api_url` with `token` (GITHUB_*, FORGEJO_*)."""
        from ghmcp_runtime.core.forges import FORGES

        profile = FORGES[self.forge]
        return {profile.api_url_env: api_url, profile.token_env: token}

    @property
    def directory(self) -> Path:
        return self.overrides.parents[1] / "generated" / self.package

    def __str__(self) -> str:  # pytest ids
        return self.package


def discover(overrides: Path = OVERRIDES) -> list[Server]:
    found = []
    for path in sorted(overrides.glob("*.yaml")):
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        server = data["server"]
        found.append(Server(path, server["name"], server["package"], server.get("forge", "github")))
    return found


SERVERS = discover()


@dataclass(frozen=True, slots=True)
class ForgeServer:
    """A forge's one server (overrides/forges/<forge>.yaml), made of that forge's SERVERS."""

    declaration: Path
    name: str
    package: str
    forge: str
    parts: tuple[Server, ...]

    def env(self, api_url: str, token: str) -> dict[str, str]:
        return self.parts[0].env(api_url, token)

    def __str__(self) -> str:
        return self.package


def discover_forges(overrides: Path = OVERRIDES) -> list[ForgeServer]:
    found = []
    for path in sorted((overrides / "forges").glob("*.yaml")):
        server = yaml.safe_load(path.read_text(encoding="utf-8"))["server"]
        parts = tuple(s for s in discover(overrides) if s.forge == server["forge"])
        found.append(ForgeServer(path, server["name"], server["package"], server["forge"], parts))
    return found


FORGE_SERVERS = discover_forges()


@cache
def built(server: Server) -> Any:
    """The server's IR (`generator.build.ir.IRServer`) as `make generate` builds it."""
    from generator.pipeline.run_all import generate_all
    from generator.spec.pinned import SpecCache

    (result,) = generate_all(server.overrides.parent, specs=SpecCache(), only=server.overrides).results
    assert result.server is not None and result.ok, "\n".join(d.render() for d in result.diagnostics)
    return result.server


# an error result that is not an answer: Prism refused the request (`invalid_field`), a crash, or
# the upstream unreachable; a code the tool declares for the data it got is an answer
NOT_AN_ANSWER = frozenset({"invalid_field", "internal_error", "upstream_unavailable"})


def read_tools(server: Server) -> list[Any]:
    """The server's read-only tools (`IRTool`), each called with its own `example` by the tests."""
    reads = [t for t in built(server).tools if t.annotations.read_only]
    assert reads, f"{server.package} has no read-only tool to call"
    return reads


def read_operations(server: Server) -> list[str]:
    """Every operation the read-only tools call: what a Prism mock must serve for them."""
    return sorted({op.operation_id for tool in read_tools(server) for op in tool.operations})


def answer_problem(tool: Any, result: Any) -> str | None:
    """Why a tool result is not an answer to its example call, None when it is one."""
    if not result.is_error:
        return None
    code = result.structured_content.get("code")
    if code in NOT_AN_ANSWER or code not in tool.error_codes:
        return f"{tool.name}: {result.structured_content}"
    return None
