"""Sections of docs/overrides.md written from the code that decides them, so the page cannot
drift from it: the verbs rule `name-verb` accepts, and how an operation's not-found code is
chosen. Each sits between `<!-- generated: <name> … -->` and `<!-- end generated -->`;
`make generate` rewrites it, `make check` names the page while it is stale."""

from __future__ import annotations

import re

from generator.build.builder import NOT_FOUND_BY_COLLECTION, NOT_FOUND_BY_PARAM, REPO_PARAMS
from generator.lint.text import SYNONYMS, VERBS

SECTION = re.compile(r"(<!-- generated: (?P<name>[a-z-]+)[^>]*-->\n)(?P<body>.*?)(<!-- end generated -->)",
                     re.DOTALL)


def _codes(pairs: dict[str, str], form: str) -> str:
    return ", ".join(f"{form.format(key)} → `{code}`" for key, code in sorted(pairs.items()))


def verbs() -> str:
    synonyms = "; ".join(", ".join(f"`{v}`" for v in sorted(group)) for group in SYNONYMS)
    return (f"**Verbs** (rule `name-verb`): {', '.join(f'`{v}`' for v in sorted(VERBS))}. Synonyms "
            f"are not used side by side in one server ({synonyms}); `create` (a new object) and `add` "
            "(to a parent's collection) are distinct on purpose.\n")


def not_found() -> str:
    repo = "/".join(f"`{p}`" for p in REPO_PARAMS)
    return ("**Not-found codes.** A 404 answer, and a 410 Gone (then `details.reason` \"it was deleted "
            "or transferred\"), is the operation's not-found code, chosen by its last path parameter: "
            f"{_codes(NOT_FOUND_BY_PARAM, '`{{{}}}`')}; {repo} or none → `repo_not_found`; any other "
            f"parameter by the collection before it: {_codes(NOT_FOUND_BY_COLLECTION, '`{}/{{…}}`')}; "
            "else `not_found`. A 404 of an operation under a repository (organisation) is "
            "`repo_not_found` (`org_not_found`) when that parent does not exist: the runtime asks "
            "the forge before answering. Server-wide `on_error` rules may give these failures your own "
            "codes; a code no failure of a tool keeps any more (`{when: {code: not_found}, code: "
            "pull_request_not_found}`) leaves that tool's codes and the catalog (rule `error-reach`).\n")


SECTIONS = {"verbs": verbs, "not-found": not_found}


def render(text: str) -> str:
    """`text` with every generated section rewritten (unknown names are left as they are)."""
    def fill(match: re.Match[str]) -> str:
        make = SECTIONS.get(match["name"])
        return match.group(0) if make is None else match.group(1) + make() + match.group(4)

    return SECTION.sub(fill, text)
