"""One summary line for each answer field the runtime adds only when something happened.

`hidden_removed`, `withheld` and `stored_as_sent` are absent when there is nothing to say (no
hidden piece cut, nothing withheld, the text kept as sent), so an agent never wonders what a 0 or
a null means; where one is present, the capability summary (the `instructions` a client reads
once) says what it means. A server gets the line of each such field its outputs can carry. The
lines are the same words in every override file, so the forge server shows each once, labelled
with every toolset that carries it. (`outside_allowlist` is said by the surface's exposure
sentence, the only surface where it can appear.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from generator.build.ir import IRServer
from ghmcp_runtime.core.forges import FORGES
from ghmcp_runtime.core.model import (
    HIDDEN_FIELD,
    OUTSIDE_ALLOWLIST_FIELD,
    PREVIEW_EMPTY_FIELD,
    WITHHELD_FIELD,
)
from ghmcp_runtime.engine.stored import ALTERED, STORED

NOTES = {
    HIDDEN_FIELD: (
        HIDDEN_FIELD + " (on a row, only when not 0): pieces of the row's text that {forge}'s page "
        "hides (HTML comments, invisible and bidi characters) were cut here; {forge} still stores "
        "them, so writing that text back drops them. A row without it had nothing hidden."),
    WITHHELD_FIELD: (
        WITHHELD_FIELD + " (on a row, only under lockdown): the author's text (body, preview) is "
        "left out, because the author has no push access (untrusted_author) or that could not be "
        "checked (trust_unknown)."),
    PREVIEW_EMPTY_FIELD: (
        PREVIEW_EMPTY_FIELD + " (on a row, only when its preview is null): body_empty, the author "
        "wrote no text; hidden, all of it is what {forge}'s page hides."),
    STORED: (
        STORED + " (on a write's answer, only when false): {forge} keeps the text fields named in "
        "altered_fields otherwise than sent (e.g. a trimmed title); without it, {forge} keeps your "
        "text exactly as sent, so no read-back is needed."),
}

# Fields whose absence the summary explains (rule presence): altered_fields in stored_as_sent's
# line, outside_allowlist in the exposure sentence of a surface narrowed by --repos.
SAID_IN_SUMMARY = frozenset({*NOTES, ALTERED, OUTSIDE_ALLOWLIST_FIELD})


def _names(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        yield from schema.get("properties", {})
        for value in schema.values():
            yield from _names(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _names(value)


def explain_fields(server: IRServer) -> IRServer:
    """`server` with the summary line of each field in NOTES its tools' answers can carry."""
    carried = {name for tool in server.tools for name in _names(tool.success_schema)}
    forge = FORGES[server.forge].display_name if server.forge in FORGES else server.forge
    lines = [note.replace("{forge}", forge) for name, note in NOTES.items() if name in carried]
    if not lines:
        return server
    return dataclasses.replace(server, summary="\n".join([server.summary.rstrip("\n"), *lines]))
