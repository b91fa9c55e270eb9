"""Shared helpers for the lint, breaking-change and drift tests: the fixture, mutations, reports."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import yaml

from generator.__main__ import _print_diagnostics
from generator.build.builder import Builder
from generator.build.ir import IRServer
from generator.pipeline.generate import Inputs, Result, generate, load_inputs

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixture"
OVERRIDES = FIXTURE / "overrides" / "acme.yaml"
HOOKS = "tests/lint/fixture/overrides/acme_hooks.py"
SPEC_DIR = FIXTURE / "spec"
# issue 31's newcomer: a pull-request server on the pinned GitHub description (spec/), declared right
PULLS = FIXTURE / "pulls" / "pulls.yaml"
# issue 38: a Forgejo issues server on the pinned Forgejo description, whose names and types differ
FORGEJO = FIXTURE / "forgejo" / "forgejo.yaml"
CASES = HERE / "cases"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
UPDATE_COMMAND = "UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/lint"


@functools.cache
def base_inputs(base: str = "acme") -> Inputs:
    """The fixture a case mutates: `acme` (a small hand-written spec), `pulls` (GitHub's) or
    `forgejo` (Forgejo's)."""
    if base in ("pulls", "forgejo"):
        return load_inputs(PULLS if base == "pulls" else FORGEJO)
    return load_inputs(OVERRIDES, spec_dir=SPEC_DIR)


@functools.cache
def base_files() -> Mapping[str, str]:
    files = generate(base_inputs()).files
    assert files is not None, "the lint fixture itself must generate cleanly"
    return files


def baseline() -> dict[str, str]:
    """The base fixture's output as if committed: what the breaking-change check compares with."""
    files = base_files()
    return {k: v for k, v in files.items() if k.endswith("/tools.json") or k == "MANIFEST.json"}


def replaced(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"mutation target must occur exactly once: {old!r}"
    return text.replace(old, new)


def mutate(edits: list[dict[str, str]], *, with_baseline: bool = False,
           baseline_files: Mapping[str, str] | None = None, base: str = "acme") -> Inputs:
    inputs = base_inputs(base)
    text, sources = inputs.overrides_text, dict(inputs.sources)
    for edit in edits:
        if edit.get("in", "overrides") == "hooks":
            sources[HOOKS] = replaced(sources[HOOKS], edit["old"], edit["new"])
        else:
            text = replaced(text, edit["old"], edit["new"])
    base = dict(baseline_files) if baseline_files is not None else baseline() if with_baseline else {}
    return dataclasses.replace(inputs, overrides_text=text, sources=sources, baseline=base)


@contextlib.contextmanager
def ir_mutation(spec: Mapping[str, Any] | None) -> Iterator[None]:
    """Reach rules the override file cannot: merge `merge` into one IR tool's fields after build."""
    if not spec:
        yield
        return

    class Mutating(Builder):
        def build(self) -> IRServer | None:
            server = super().build()
            if server is None:
                return None
            tools = []
            for tool in server.tools:
                if tool.name == spec["tool"]:
                    changes = {k: {**getattr(tool, k), **v} if isinstance(v, dict) else v
                               for k, v in spec["merge"].items()}
                    tool = dataclasses.replace(tool, **changes)
                tools.append(tool)
            return dataclasses.replace(server, tools=tuple(tools))

    with mock.patch("generator.pipeline.generate.Builder", Mutating):
        yield


def run_case(case: Mapping[str, Any]) -> Result:
    inputs = mutate(case.get("replace", []), with_baseline=bool(case.get("baseline")),
                    base=case.get("base", "acme"))
    with ir_mutation(case.get("ir")):
        return generate(inputs)


def report(result: Result) -> str:
    """Exactly what `python -m generator generate` prints on stderr for this result."""
    buffer = io.StringIO()
    with contextlib.redirect_stderr(buffer):
        _print_diagnostics(result.diagnostics)
    if result.files is None:
        buffer.write("generation failed: nothing was written\n")
    return buffer.getvalue()


def load_case(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def compare_golden(expected: Path, actual: str) -> None:
    if UPDATE:
        expected.write_text(actual, encoding="utf-8")
        return
    assert expected.exists(), f"missing {expected.name}; create it with: {UPDATE_COMMAND}"
    want = expected.read_text(encoding="utf-8")
    assert actual == want, (f"{expected.relative_to(HERE.parent.parent)} differs; review, then update "
                            f"with: {UPDATE_COMMAND}\n--- expected\n{want}--- actual\n{actual}")
