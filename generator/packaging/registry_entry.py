"""A server's MCP Registry entry, `generated/<package>/server.json`: what the registry lists and a
client installs it from (the PyPI distribution, run over stdio or streamable HTTP, and every
environment variable the runtime reads), validated against the registry's published schema
(vendored: spec/mcp-registry/) and the rule the registry adds when it accepts a publish.

The name is `io.github.<owner>/<server name>`, `<owner>` from the root project's Repository URL:
the registry grants that namespace to whoever signs in as the GitHub account, and to that
repository's Actions workflows by OIDC, so the release workflow can publish without a stored
secret (a domain namespace would need DNS or HTTP proof the project does not have).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from generator.base.diagnostics import Diagnostic, DiagnosticError, Level, Where
from generator.packaging.requirements import Packaging
from generator.spec.pinned import REPO_ROOT, SPEC_DIR
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.serving.environment import Transport, Variable, variables

SCHEMA_DIR = SPEC_DIR / "mcp-registry"
PYPI = "https://pypi.org"
HTTP_PORT = "8000"  # the console script's --port default


@cache
def registry_schema(directory: Path = SCHEMA_DIR) -> dict[str, Any]:
    """The vendored server.json schema, refused unless its sha256 is the pinned one."""
    pinned = json.loads((directory / "PINNED.json").read_text(encoding="utf-8"))
    raw = (directory / pinned["vendored_file"]).read_bytes()
    if hashlib.sha256(raw).hexdigest() != pinned["sha256"]:
        path = directory / pinned["vendored_file"]
        shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
        raise DiagnosticError([Diagnostic(
            Level.ERROR, Where(str(shown)), "sha256 does not match PINNED.json",
            "re-vendor it as spec/mcp-registry/README.md says")])
    schema: dict[str, Any] = json.loads(raw)
    return schema


def one_line_description(declared: str | None, title: str) -> str:
    """A server's description as its distribution's Summary and its registry entry carry it."""
    return " ".join((declared or f"{title} MCP server").split())


def registry_name(packaging: Packaging, server_name: str) -> str:
    return f"{packaging.registry_namespace}/{server_name}"


def _input(v: Variable, forge: ForgeProfile) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": v.name, "description": v.text}
    if v.kind != "string":
        entry["format"] = v.kind
    if v.name == forge.api_url_env and forge.default_api_url:
        entry["default"] = forge.default_api_url
    if v.required:
        entry["isRequired"] = True
    if v.secret:
        entry["isSecret"] = True
    return entry


def _environment(forge: ForgeProfile, transport: Transport) -> list[dict[str, Any]]:
    return [_input(v, forge) for v in variables(forge) if transport in v.transports]


def _packages(name: str, version: str, forge: ForgeProfile) -> list[dict[str, Any]]:
    base = {"registryType": "pypi", "registryBaseUrl": PYPI, "identifier": name, "version": version,
            "runtimeHint": "uvx"}
    stdio = {**base, "transport": {"type": "stdio"}, "environmentVariables": _environment(forge, "stdio")}
    token = {"description": f"a {forge.display_name} token: each caller acts with its own",
             "isRequired": True, "isSecret": True}
    http = {
        **base,
        "packageArguments": [
            {"type": "named", "name": "--transport", "value": "http",
             "description": "serve streamable HTTP at http://127.0.0.1:PORT/mcp"},
            {"type": "named", "name": "--port", "valueHint": "port", "default": HTTP_PORT,
             "format": "number", "description": "the HTTP port on 127.0.0.1"},
        ],
        "transport": {"type": "streamable-http", "url": "http://127.0.0.1:{port}/mcp",
                      "headers": [{"name": "Authorization", "value": "Bearer {token}", **token,
                                   "variables": {"token": token}}]},
        "environmentVariables": _environment(forge, "http"),
    }
    return [stdio, http]


def server_json(*, name: str, title: str, description: str, version: str, package: str,
                forge: ForgeProfile, packaging: Packaging, where: Where) -> str:
    """`server.json` of one server, or a DiagnosticError (at `where`) naming what the registry
    would refuse."""
    schema = registry_schema()
    data = {
        "$schema": schema["$id"],
        "name": registry_name(packaging, name),
        "title": title,
        "description": description,
        "version": version,
        "repository": {"url": packaging.repository, "source": "github",
                       "subfolder": f"generated/{package}"},
        "packages": _packages(name, version, forge),
    }
    problems = registry_problems(data)
    if problems:
        raise DiagnosticError([Diagnostic(
            Level.ERROR, where, f"server.json would be refused by the MCP Registry: {p}",
            "server.description allows 100 characters; names and versions follow the registry's "
            "schema (spec/mcp-registry/)") for p in problems])
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_TEMPLATE = re.compile(r"\{([^{}]+)\}")


def registry_problems(data: dict[str, Any]) -> list[str]:
    """What the registry refuses in `data`: the schema's errors, then a package transport URL
    naming a variable its package does not define (the registry's `validatePackageTransport`)."""
    from jsonschema import Draft7Validator

    validator = Draft7Validator(registry_schema(), format_checker=Draft7Validator.FORMAT_CHECKER)
    out = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
           for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))]
    for i, pkg in enumerate(data.get("packages") or ()):
        defined = _defined(pkg)
        url = (pkg.get("transport") or {}).get("url", "")
        out += [f"packages/{i}/transport/url: {{{v}}} names no argument or environment variable "
                "of the package" for v in _TEMPLATE.findall(url) if v not in defined]
    return out


def _defined(pkg: dict[str, Any]) -> set[str]:
    arguments: Sequence[dict[str, Any]] = [*pkg.get("runtimeArguments", ()), *pkg.get("packageArguments", ())]
    return ({e["name"] for e in pkg.get("environmentVariables", ())}
            | {a[k] for a in arguments for k in ("name", "valueHint") if a.get(k)})
