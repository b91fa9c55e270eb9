"""The numbers in README.md's prose are their sources' numbers: each phrase below is found in the
README (at least once; whitespace is one space) and every number it holds is the value the code,
the override files, the pinned spec, the Makefile, the Dockerfile or the benchmarks hold now."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from mcp.types import INVALID_PARAMS
from mcp.types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from bench.agent_trial import KINDS
from ghmcp_runtime.calls.http_cache import Limits
from ghmcp_runtime.core.concurrent import MAX_CONCURRENT
from ghmcp_runtime.engine.recovery import CLOCK_SKEW_S
from ghmcp_runtime.guards.lockdown import CACHE_TTL_S
from ghmcp_runtime.serving.dynamic_toolsets import ENABLE, LIST, SHOW
from ghmcp_runtime.serving.http_transport import MAX_BODY_BYTES
from ghmcp_runtime.stores.idempotency import DEFAULT_TTL_S
from ghmcp_runtime.stores.setting import RESERVED_KEYS_PER_CALLER
from tests.support.doc_example import complete_example
from tests.support.readme import PROSE, README, number
from tests.support.servers import ROOT

MIB = 1024 * 1024
OVERRIDES = ROOT / "overrides"
FORGEJO_PIN = (ROOT / "spec" / "forgejo" / "PINNED.json").read_text(encoding="utf-8")
FORGEJO_VERSION = re.search(r'"version": "v([\d.]+)"', FORGEJO_PIN)[1]  # type: ignore[index]


def _override(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((OVERRIDES / name).read_text(encoding="utf-8"))
    return loaded


def _yaml_lines(name: str) -> int:
    """An override file's length as the README rounds it ("about 530 lines")."""
    return round(len((OVERRIDES / name).read_text(encoding="utf-8").splitlines()), -1)


def _one_operation_tool_lines() -> int:
    """The non-blank lines of docs/overrides.md's tool over one operation, github_get_release."""
    lines = complete_example().splitlines()
    start = lines.index("  - name: github_get_release")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  - name: "))
    return sum(1 for line in lines[start:end] if line.strip())


def _collection_page_size() -> int:
    """The page size of forgejo-labels-mcp's collection resources (the largest `limit` they accept)."""
    (size,) = {t["steps"][0]["paginate"]["page_size"] for t in _override("forgejo_labels.yaml")["resource_templates"]
               if "paginate" in t["steps"][0]}
    return int(size)


def _dockerfile(name: str) -> str:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    return re.search(rf"\b{name}=(\S+)", text)[1]  # type: ignore[index]


def _benchmarks_section(title: str) -> int:
    text = (ROOT / "docs" / "BENCHMARKS.md").read_text(encoding="utf-8")
    return int(re.search(rf"^## (\d+)\. {re.escape(title)}", text, re.M)[1])  # type: ignore[index]


def _requires_python() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["requires-python"]).removeprefix(">=")


# (phrase with one or more groups, what each group must read as, the value now)
CLAIMS: list[tuple[str, Callable[[str], Any], Callable[[], Any]]] = [
    (r"a tool over one GitHub operation is (\S+) lines of YAML", number, _one_operation_tool_lines),
    (r"forgejo_labels\.yaml` \(about (\S+) lines of YAML", number, lambda: _yaml_lines("forgejo_labels.yaml")),
    (r"lines of YAML for (\w+) tools", number, lambda: len(_override("forgejo_labels.yaml")["tools"])),
    (r"tools and (\w+) resources, no Python", number,
     lambda: len(_override("forgejo_labels.yaml")["resource_templates"])),
    (r"forgejo_issues\.yaml` \(about (\S+) lines of YAML", number, lambda: _yaml_lines("forgejo_issues.yaml")),
    (r"declares GitHub's issue tools for Forgejo, .*?: ((?:`forgejo_\w+`(?:, | and )?)+)",
     lambda s: set(re.findall(r"`(\w+)`", s)), lambda: {t["name"] for t in _override("forgejo_issues.yaml")["tools"]}),
    # the dynamic mode's tools: how many, and which
    (r"(\w+) tools at start|starts with (\w+) tools|(\w+) tools; the model|start with the (\w+) toolset tools",
     number, lambda: len((LIST, SHOW, ENABLE))),
    (r"tools: `github_(\w+)` \(every toolset.*?`github_(\w+)` \(one toolset's tools.*?`github_(\w+)` \(enable",
     str, lambda: (LIST, SHOW, ENABLE)),
    (r"`notifications/tools/list_changed` on a ([\d-]+) connection", str, lambda: LATEST_HANDSHAKE_VERSION),
    (r"`subscriptions/listen` stream of a ([\d-]+) one", str, lambda: LATEST_MODERN_VERSION),
    (r"JSON-RPC -(\d+)", int, lambda: -INVALID_PARAMS),
    (r"`GHMCP_MAX_CONCURRENT` \(upstream requests one tool call may have in flight, 1\u2013(\d+), default (\d+)",
     int, lambda: MAX_CONCURRENT),
    (r"within (\d+) s of GitHub's", int, lambda: CLOCK_SKEW_S),
    (r"keeps its key \((\w+) minutes\)|before its (\w+) minutes are up", number, lambda: DEFAULT_TTL_S / 60),
    (r"answers are cached per credential for (\w+) minutes", number, lambda: CACHE_TTL_S / 60),
    (r"each caller's first (\d+)|a caller's first (\d+) keys", int, lambda: RESERVED_KEYS_PER_CALLER),
    (r"Request bodies over (\d+) MiB are refused", int, lambda: MAX_BODY_BYTES / MIB),
    (r"; (\d+) MiB per entry\)", int, lambda: Limits().max_entry_bytes / MIB),
    (r"`page`/`limit` \(1\u2013(\d+)\)|cap (\d+) \(Forgejo's largest page\)", int, _collection_page_size),
    # the pinned Forgejo description, and the instance the opt-in test runs (any other vX.Y.Z in the
    # README would be read as Forgejo's too: reword this claim then)
    (r"(?<!VERSION=)\bv(\d+\.\d+\.\d+)|codeberg\.org/forgejo/forgejo:(\d+\.\d+\.\d+)", str, lambda: FORGEJO_VERSION),
    (r"`GHMCP_PORT` \(default (\d+)\)", str, lambda: _dockerfile("GHMCP_PORT")),
    (r"on `(python:[\d.]+-slim)`", str, lambda: _dockerfile("PYTHON_IMAGE").removesuffix("-bookworm")),
    (r"fresh machine: Python ([\d.]+)\+", str, _requires_python),
    (r"docs/BENCHMARKS\.md §(\d+)\)", int, lambda: _benchmarks_section("Cleaning untrusted text")),
    (r"a scripted agent through (\d+) issue tasks", int, lambda: len(KINDS)),
    (r"\d+ issue tasks \((\w+), (\w+) and (\w+)\)", str, lambda: set(KINDS.values())),
]


@pytest.mark.parametrize(("phrase", "read", "source"), CLAIMS, ids=[re.sub(r"[^A-Za-z0-9]+", "-", c[0])[:40].strip("-") for c in CLAIMS])
def test_a_number_in_the_prose_is_its_sources(phrase: str, read: Callable[[str], Any],
                                              source: Callable[[], Any]) -> None:
    found = list(re.finditer(phrase, PROSE))
    assert found, f"README.md no longer says {phrase!r}: reword this check with it"
    want = source()
    for match in found:
        values = [read(g) for g in match.groups() if g is not None]
        if isinstance(want, set) and len(values) > 1:
            assert set(values) == want, (match[0], want)
        elif isinstance(want, tuple | list) and len(values) == len(want):
            assert tuple(values) == tuple(want), (match[0], want)
        else:
            assert all(v == want for v in values), (match[0], want)


def test_make_fuzz_makes_the_calls_the_readme_promises() -> None:
    """`make fuzz` runs test_fuzz.py and test_fuzz_hostile.py at FUZZ_EXAMPLES calls per tool."""
    from tests.functional.test_fuzz import TOOLS as FUZZED
    from tests.reliability.reliability_support import TOOLS as HOSTILE

    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    per_tool = int(re.search(r"^\tFUZZ_EXAMPLES=(\d+) ", makefile, re.M)[1])  # type: ignore[index]
    promised = number(re.search(r"`make fuzz` \(≥ ([\d,]+) fuzzed calls\)", PROSE)[1])  # type: ignore[index]
    assert per_tool * (len(FUZZED) + len(HOSTILE)) >= promised, (per_tool, len(FUZZED), len(HOSTILE))



def test_the_toolset_summary_has_the_lines_it_says() -> None:
    said = re.search(r"Toolsets and read-only, in (\w+) lines.*?```sh\n(.*?)```", README, re.S)
    assert said, "README.md lost its toolset summary"
    assert number(said[1]) == len(said[2].splitlines()), said[2]
