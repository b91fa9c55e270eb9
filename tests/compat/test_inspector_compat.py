"""`make compat` inside the test suite: the MCP Inspector CLI against the stdio server, both eras.

Needs node and npm (it installs the pinned Inspector into .compat/ on first use); without them the
driver exits 2 and this test fails with the driver's message. Takes about a minute.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DRIVER = Path(__file__).resolve().with_name("inspector_compat.py")


def test_inspector_cli_accepts_the_server_in_both_eras() -> None:
    done = subprocess.run([sys.executable, str(DRIVER)], capture_output=True, text=True,
                          timeout=600)
    print(done.stdout)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-8000:]}\n{done.stderr[-4000:]}"


def test_dynamic_toolsets_through_the_inspector_cli_and_mcpdo_in_both_eras() -> None:
    """tests/compat/dynamic_compat.py: github-mcp --dynamic-toolsets grows on enable, as the
    Inspector's own clients see it (stdio: the same connection's tools/list; HTTP: the header)."""
    driver = DRIVER.with_name("dynamic_compat.py")
    done = subprocess.run([sys.executable, str(driver)], capture_output=True, text=True, timeout=900)
    print(done.stdout)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-8000:]}\n{done.stderr[-4000:]}"
