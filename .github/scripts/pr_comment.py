"""Post a report as one sticky pull-request comment: the first run creates it, later runs edit it.

    python .github/scripts/pr_comment.py REPORT.md

Environment: GITHUB_TOKEN, GITHUB_REPOSITORY (owner/name), PR (the pull request number),
GITHUB_API_URL (default https://api.github.com), RUN_URL (linked as the job summary),
COMMENT_AUTHOR (default github-actions[bot], the login behind the workflow's GITHUB_TOKEN).
The comment is found by its first line, a hidden marker, among the author's comments on the PR.
Standard library only: it runs on the runner's Python before or without the project's venv.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- generator-review -->"
LIMIT = 60_000  # GitHub refuses comment bodies over 65,536 characters
PAGE = 100


def body(report: str, run_url: str) -> str:
    if len(report) > LIMIT:
        kept = report[:LIMIT].rsplit("\n", 1)[0]
        tail = f"\n\n(cut at {LIMIT:,} characters: the whole report is in the [job summary]({run_url}))\n"
        return f"{MARKER}\n{kept}{tail}"
    return f"{MARKER}\n{report.rstrip()}\n\n[Job summary]({run_url})\n"


class GitHub:
    def __init__(self, api: str, token: str) -> None:
        self.api = api.rstrip("/")
        self.token = token

    def call(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            f"{self.api}{path}", method=method,
            data=None if payload is None else json.dumps(payload).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")


def find(github: GitHub, repo: str, pr: str, author: str) -> int | None:
    page = 1
    while True:
        comments = github.call("GET", f"/repos/{repo}/issues/{pr}/comments?per_page={PAGE}&page={page}")
        for comment in comments:
            if comment["user"]["login"] == author and comment["body"].startswith(MARKER):
                return int(comment["id"])
        if len(comments) < PAGE:
            return None
        page += 1


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    env = os.environ
    repo, pr = env["GITHUB_REPOSITORY"], env["PR"]
    github = GitHub(env.get("GITHUB_API_URL", "https://api.github.com"), env["GITHUB_TOKEN"])
    text = body(Path(argv[0]).read_text(encoding="utf-8"), env.get("RUN_URL", ""))
    found = find(github, repo, pr, env.get("COMMENT_AUTHOR", "github-actions[bot]"))
    if found is None:
        made = github.call("POST", f"/repos/{repo}/issues/{pr}/comments", {"body": text})
        print(f"created comment {made['id']}")
    else:
        github.call("PATCH", f"/repos/{repo}/issues/comments/{found}", {"body": text})
        print(f"updated comment {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
