"""Stopping the processes tests start (servers, fakes): politely first, then for sure."""

from __future__ import annotations

import subprocess
from typing import Any


def stop(proc: subprocess.Popen[Any], grace_s: float = 10.0) -> None:
    """Terminate `proc`, kill it if it outlives `grace_s`, and reap it."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(grace_s)
