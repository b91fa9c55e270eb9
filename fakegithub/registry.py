"""Every operation the fake implements, registered: importing this module imports each handler
module once (they register with `handlers.handles`). Handler modules import `handlers`, never
this module, so registration makes no import circle."""

from __future__ import annotations

from fakegithub import (
    collaborator_handlers,
    git_handlers,
    milestone_handlers,
    pull_handlers,
    sub_issue_handlers,
)
from fakegithub.handlers import HANDLERS

MODULES = (collaborator_handlers, git_handlers, milestone_handlers, pull_handlers, sub_issue_handlers)

__all__ = ["HANDLERS", "MODULES"]
