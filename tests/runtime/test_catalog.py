"""catalog.require_names / resolve_names against the fake GitHub (its label catalog)."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_support import TOKEN, make_ctx

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.engine.catalog import fold, require_names, resolve_names

pytestmark = pytest.mark.anyio
LIST = Operation(operation_id="issues/list-labels-for-repo", method="GET", path="/repos/{owner}/{repo}/labels",
                 not_found="repo_not_found", success_status=(200,))
GET = Operation(operation_id="issues/get-label", method="GET", path="/repos/{owner}/{repo}/labels/{name}",
                not_found="label_not_found", success_status=(200,))
PATH = {"owner": "octo", "repo": "hello"}


def world(*names: str, filler: int = 0) -> FakeGitHub:
    fake = FakeGitHub()
    fake.add_token(TOKEN, "octocat", scopes=("repo",))
    fake.add_repo("octo", "hello")
    for i in range(filler):
        fake.add_label("octo", "hello", f"-{i:04d}")  # sorts before the names under test
    for name in names:
        fake.add_label("octo", "hello", name)
    return fake


def ctx_for(fake: FakeGitHub) -> Any:
    return make_ctx(ForgeUpstream(base_url="http://fake.test", transport=fake.asgi_transport()))


def reads(fake: FakeGitHub) -> list[str]:
    return [r.operation_id or "" for r in fake.requests]


def test_fold_is_ascii_only() -> None:
    assert fold("Bug-REPORT") == "bug-report"
    assert fold("STRASSE") != fold("straße") and fold("ÉTÉ") == "ÉtÉ"


async def test_exact_names_in_order_one_catalog_page_and_github_settles_the_rest() -> None:
    fake = world("bug", "STRASSE", "needs,info")
    exact = await require_names(ctx_for(fake), catalog=LIST, lookup=GET, path=PATH,
                                names={"add": ["BUG", "straße", "needs,info"], "remove": ["Bug"]})
    assert exact == {"add": ["bug", "STRASSE", "needs,info"], "remove": ["bug"]}
    assert reads(fake) == ["issues/list-labels-for-repo", "issues/get-label"]  # only straße asked


async def test_missing_names_are_counted_by_index_across_parameters() -> None:
    fake = world("bug")
    repair = {"next_step": "list", "tool": "github_list_labels", "arguments": PATH}
    with pytest.raises(ToolError) as refused:
        await require_names(ctx_for(fake), catalog=LIST, lookup=GET, path=PATH, repair=repair,
                            names={"add_labels": ["bug", "nope"], "remove_labels": ["gone"]})
    err = refused.value
    assert err.code == "label_not_found" and err.repair == repair
    assert err.details == {"fields": ["add_labels", "remove_labels"], "count": 2,
                           "reason": "no such label: add_labels[1], remove_labels[0]"}
    assert err.message.startswith("2 label name(s) do not exist") and "nope" not in err.message


async def test_past_the_first_page_names_are_looked_up_not_paged() -> None:
    fake = world("zz-last", filler=1500)
    assert await resolve_names(ctx_for(fake), catalog=LIST, lookup=GET, path=PATH,
                               names=["ZZ-last", "zz-none"]) == ["zz-last", None]
    assert reads(fake).count("issues/list-labels-for-repo") == 1


async def test_without_a_lookup_the_catalog_is_paged_and_only_ascii_case_folds() -> None:
    fake = world("zz-last", "STRASSE", filler=250)
    assert await resolve_names(ctx_for(fake), catalog=LIST, path=PATH,
                               names=["ZZ-LAST", "strasse", "straße"]) == ["zz-last", "STRASSE", None]
    assert reads(fake).count("issues/list-labels-for-repo") == 3


async def test_dot_names_cannot_be_looked_up_so_the_catalog_is_paged_for_them() -> None:
    fake = world(".", "..", filler=150)
    assert await resolve_names(ctx_for(fake), catalog=LIST, lookup=GET, path=PATH,
                               names=["..", "."]) == ["..", "."]
    assert "issues/get-label" not in reads(fake)
    assert reads(fake).count("issues/list-labels-for-repo") == 2
