"""Forge wiring: the sticky PR comment script against a loopback fake of GitHub's issue-comments
API (a real subprocess, real HTTP), and the .gitattributes that collapse generated files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".github" / "scripts" / "pr_comment.py"
REPO, PR, TOKEN, BOT = "octo-org/roadmap", "7", "ghs_forgetest", "github-actions[bot]"
MARKER = "<!-- generator-review -->"


class Comments:
    """Issue comments on one pull request, as GitHub's REST API serves them."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.calls: list[str] = []

    def add(self, login: str, body: str) -> None:
        self.items.append({"id": 1000 + len(self.items), "user": {"login": login}, "body": body})

    def bot_bodies(self) -> list[str]:
        return [c["body"] for c in self.items if c["user"]["login"] == BOT]


def handler_for(comments: Comments) -> type[BaseHTTPRequestHandler]:
    list_path = f"/repos/{REPO}/issues/{PR}/comments"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self) -> None:
            url = urlsplit(self.path)
            comments.calls.append(f"{self.command} {url.path}")
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self.reply(401, {"message": "Bad credentials"})
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length)) if length else None
            if self.command == "GET" and url.path == list_path:
                query = parse_qs(url.query)
                size, page = int(query["per_page"][0]), int(query["page"][0])
                return self.reply(200, comments.items[(page - 1) * size: page * size])
            if self.command == "POST" and url.path == list_path:
                comments.add(BOT, payload["body"])
                return self.reply(201, comments.items[-1])
            edit = re.fullmatch(rf"/repos/{REPO}/issues/comments/(\d+)", url.path)
            if self.command == "PATCH" and edit:
                for comment in comments.items:
                    if comment["id"] == int(edit.group(1)):
                        comment["body"] = payload["body"]
                        return self.reply(200, comment)
            return self.reply(404, {"message": "Not Found"})

        do_GET = do_POST = do_PATCH = handle_any

    return Handler


@pytest.fixture
def github() -> Iterator[tuple[str, Comments]]:
    comments = Comments()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(comments))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", comments
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def post(api: str, report: Path) -> str:
    env = {**os.environ, "GITHUB_API_URL": api, "GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO,
           "PR": PR, "RUN_URL": "https://forge.invalid/run/1"}
    done = subprocess.run([sys.executable, str(SCRIPT), str(report)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_each_push_updates_the_one_sticky_comment(github: tuple[str, Comments], tmp_path: Path) -> None:
    api, comments = github
    for i in range(150):  # the bot's comment lands on the second page of 100
        comments.add("octocat", f"comment {i}")
    comments.add("hubot", f"{MARKER}\nsomeone else's comment starting with the marker")
    report = tmp_path / "review.md"
    report.write_text("## Tool surface review\n\nfirst push\n", encoding="utf-8")
    assert post(api, report).startswith("created comment")
    report.write_text("## Tool surface review\n\nsecond push\n", encoding="utf-8")
    assert post(api, report).startswith("updated comment")
    report.write_text("## Tool surface review\n\nthird push\n", encoding="utf-8")
    assert post(api, report).startswith("updated comment")
    assert comments.bot_bodies() == [
        f"{MARKER}\n## Tool surface review\n\nthird push\n\n[Job summary](https://forge.invalid/run/1)\n"]
    assert comments.items[150]["body"].endswith("starting with the marker")  # not touched
    assert comments.calls.count(f"POST /repos/{REPO}/issues/{PR}/comments") == 1


def test_a_report_over_the_comment_limit_is_cut_at_a_line(github: tuple[str, Comments],
                                                           tmp_path: Path) -> None:
    api, comments = github
    report = tmp_path / "review.md"
    report.write_text("".join(f"- line {i:05d}\n" for i in range(7000)), encoding="utf-8")  # 91 KB
    post(api, report)
    (body,) = comments.bot_bodies()
    assert len(body) < 65_536
    kept = body.split("\n\n(cut at")[0]
    last_whole_line = 60_000 // len("- line 00000\n") - 1
    assert kept.startswith(MARKER) and kept.endswith(f"- line {last_whole_line:05d}")
    assert "whole report is in the [job summary](https://forge.invalid/run/1)" in body


def attribute(path: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "check-attr", "linguist-generated", "--", path],
                          capture_output=True, text=True, check=True)
    return done.stdout.rsplit(": ", 1)[1].strip()


@pytest.mark.parametrize(("path", "generated"), [
    ("generated/MANIFEST.json", "true"),
    ("generated/github_issues_mcp/server.py", "true"),
    ("generated/github_issues_mcp/types.py", "true"),
    ("generated/github_issues_mcp/py.typed", "true"),
    ("generated/github_issues_mcp/errors.json", "true"),
    ("generated/github_milestones_mcp/pyproject.toml", "true"),  # a package file of a later server
    ("generated/github_issues_mcp/tools.json", "false"),
    ("generated/github_issues_mcp/TOOLS.md", "false"),
    ("generated/github_milestones_mcp/tools.json", "false"),
    ("overrides/github_issues.yaml", "unspecified"),
])
def test_the_forge_collapses_generated_files_but_not_the_surface(path: str, generated: str) -> None:
    assert attribute(path) == generated
