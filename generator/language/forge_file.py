"""The forge file (`overrides/forges/<forge>.yaml`): what a forge's one server (`github-mcp`) is
beside its toolsets, which come from every override file of that forge. Strict like the override
files: unknown keys fail, every error located."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from generator.base.yamlsrc import Located, load_yaml
from generator.language.overrides import Identifier, StaticResourceDef, Strict, validate_located

FORGES_DIR = "forges"  # beside the override files: overrides/forges/*.yaml


class ForgeServerSection(Strict):
    name: str = Field(description="serverInfo.name and distribution, e.g. github-mcp")
    package: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="Python package to generate")
    title: str
    version: str
    description: str | None = Field(
        default=None, min_length=1, max_length=100,
        description="one line on what the server does, for its distribution, its MCP Registry entry "
        "(server.json allows 100 characters) and its MCP Bundle; default: '<title> MCP server'")
    forge: str = Field(description="the forge profile whose override files are its toolsets: "
                       "github or forgejo")
    summary: str = Field(description="the forge server's own capability-summary lines; a line "
                         "`Key: ...` replaces every override file's line with the same key")
    model_budget_bytes: int | None = Field(
        default=None, gt=0, description="budget for what a model reads of the default toolsets' "
        "tools/list (name, description and inputSchema of each tool, compact JSON)")


class ForgeFile(Strict):
    server: ForgeServerSection
    default_toolsets: list[Identifier] = Field(
        min_length=1, description="the toolsets served when neither --toolsets nor --tools "
        "selects any (`--toolsets default` names them too)")
    resources: list[StaticResourceDef] = Field(
        default_factory=list, description="the forge server's own documents (capability summary, "
        "error catalog); the override files' resource templates are served as they declare them")


def forge_files(overrides_dir: Path) -> list[Path]:
    """Every forge file, in name order."""
    return sorted((overrides_dir / FORGES_DIR).glob("*.yaml"))


def parse_forge_file(text: str, display: str) -> tuple[ForgeFile, Located]:
    located = load_yaml(text, display)
    return validate_located(ForgeFile, located), located
