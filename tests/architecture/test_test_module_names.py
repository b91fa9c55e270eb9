"""Test modules have unique file names: the test folders are not packages, so pytest imports each
module by its bare name and a second `test_x.py` in another folder stops the whole run at
collection ("import file mismatch") — which a run of one folder never shows."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if not any(part.startswith(".") for part in path.relative_to(TESTS).parts):
            where[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
