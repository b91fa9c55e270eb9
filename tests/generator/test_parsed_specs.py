"""The parsed description kept outside the tree (generator/spec/parsed_specs.py): an unchanged one is
read without parsing JSON; a vendored file or a pin that changed is verified again, so a cached
entry never stands in for a check."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from generator.spec import pinned as spec_module
from generator.spec.pinned import SPEC_DIR, SpecError, load_pinned_spec


@pytest.fixture
def spec_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GHMCP_FORMAT_CACHE", str(tmp_path / "cache"))
    copy = tmp_path / "spec"
    copy.mkdir()
    for name in ("PINNED.json", json.loads((SPEC_DIR / "PINNED.json").read_text())["vendored_file"]):
        shutil.copy(SPEC_DIR / name, copy / name)
    return copy


def test_an_unchanged_description_is_read_without_parsing_json(
        spec_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_pinned_spec(spec_copy)
    assert list((spec_copy.parent / "cache" / "specs").glob("*.marshal"))

    real = json.loads

    def no_parse(text: str | bytes, **kwargs: object) -> object:
        assert len(text) < 100_000, "the description was parsed again"  # PINNED.json may be
        return real(text, **kwargs)

    monkeypatch.setattr(spec_module.json, "loads", no_parse)
    again = load_pinned_spec(spec_copy)
    assert again.document == first.document and again.pinned == first.pinned


def test_a_changed_vendored_file_is_verified_again(spec_copy: Path) -> None:
    load_pinned_spec(spec_copy)
    vendored = spec_copy / json.loads((spec_copy / "PINNED.json").read_text())["vendored_file"]
    document = json.loads(gzip.decompress(vendored.read_bytes()))
    document["info"]["title"] = "not the pinned description"
    vendored.write_bytes(gzip.compress(json.dumps(document).encode()))
    with pytest.raises(SpecError, match="does not match the pinned"):
        load_pinned_spec(spec_copy)


def test_a_changed_pin_is_verified_again(spec_copy: Path) -> None:
    load_pinned_spec(spec_copy)
    pinned = spec_copy / "PINNED.json"
    data = json.loads(pinned.read_text())
    pinned.write_text(json.dumps({**data, "sha256": "0" * 64}))
    with pytest.raises(SpecError, match="does not match the pinned"):
        load_pinned_spec(spec_copy)


def test_with_the_cache_off_nothing_is_kept(spec_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GHMCP_FORMAT_CACHE", "off")
    load_pinned_spec(spec_copy)
    assert not (spec_copy.parent / "cache").exists()
