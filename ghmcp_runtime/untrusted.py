"""Untrusted text as an agent gets it: what GitHub's page hides is removed, and counted.

`sanitize` first removes hidden markup (HTML comments and their kin, outside code: see
`markup`), then invisible characters everywhere (see `invisible`). The count tells the agent that
something was there: each removed piece of markup and each removed character counts one.
"""

from __future__ import annotations

from ghmcp_runtime.invisible import strip_invisible
from ghmcp_runtime.markup import strip_hidden_markup


def sanitize(text: str) -> tuple[str, int]:
    """`text` as a reader of GitHub's page sees it, and how many hidden pieces were removed."""
    visible, markup = strip_hidden_markup(text)
    visible, characters = strip_invisible(visible)
    return visible, markup + characters
