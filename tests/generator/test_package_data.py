"""Generated `server.py` takes titles, descriptions, schemas (tools.json) and error codes
(errors.json) from its package's files through `ghmcp_runtime.serving.package_data`: what every
generated server declares is what the generator built."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from ghmcp_runtime.serving.package_data import PackageData

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(p.parent.name for p in (ROOT / "generated").glob("*/tools.json"))
# a forge's one server: no tools.json of its own (its parts' are read)
FORGES = sorted(p.parent.name for p in (ROOT / "generated").glob("*/server.py")
                if not (p.parent / "tools.json").exists())


@pytest.mark.parametrize("package", PACKAGES)
def test_a_generated_server_declares_what_the_generator_built(package: str) -> None:
    server = importlib.import_module(package).SERVER
    folder = ROOT / "generated" / package
    manifest = json.loads((folder / "MANIFEST.json").read_text(encoding="utf-8"))
    wire = {t["name"]: t for t in json.loads((folder / "tools.json").read_text(encoding="utf-8"))["tools"]}
    catalog = json.loads((folder / "errors.json").read_text(encoding="utf-8"))["codes"]
    assert {t.name: list(t.error_codes) for t in server.tools} == manifest["error_codes"]
    for tool in server.tools:
        published = wire[tool.name]
        assert (tool.title, tool.description, tool.input_schema, tool.output_schema) == (
            published["title"], published["description"], published["inputSchema"],
            published["outputSchema"])
    assert [(e.code, e.temporary, e.description, e.repair) for e in server.error_codes] == [
        (c["code"], c["temporary"], c["description"], c["repair"]) for c in catalog]


def test_package_data_needs_a_package() -> None:
    with pytest.raises(ValueError, match="__package__"):
        PackageData(None)


@pytest.mark.parametrize("package", FORGES)
def test_a_forge_server_serves_its_parts_tools_and_its_own_catalog(package: str) -> None:
    from ghmcp_runtime.serving.surface import SurfaceViews

    server = importlib.import_module(package).SERVER
    folder = ROOT / "generated" / package
    assert server.parts, f"{package} composes no per-file server"
    own = {t.name: t for part in server.parts for t in part.tools}
    assert [t.name for t in server.tools] == sorted(own)
    assert all(tool is own[tool.name] for tool in server.tools)
    assert all(server.part_of(t.name) is part for part in server.parts for t in part.tools)
    catalog = json.loads((folder / "errors.json").read_text(encoding="utf-8"))["codes"]
    assert [(e.code, e.temporary, e.description, e.repair, list(e.tools or ())) for e in server.error_codes] == [
        (c["code"], c["temporary"], c["description"], c["repair"], c["tools"]) for c in catalog]
    for entry in catalog:  # every wording of a code names tools that emit it
        assert entry["tools"] and all(entry["code"] in own[t].error_codes for t in entry["tools"])
    # what the generator wrote for the whole forge is what the runtime renders for it
    whole = SurfaceViews(server).view(SurfaceViews(server).full)
    assert whole.summary == (folder / "summary.md").read_text(encoding="utf-8")
    assert whole.errors == (folder / "errors.json").read_text(encoding="utf-8")
    assert whole.instructions.endswith(f"Capability fingerprint: {server.fingerprint}")
