"""The fake over real HTTP: serve(), the /_fake control plane, faults on sockets, the CLI, the demo."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from fake_support import OWNER, REPO, TOKEN, seed

from fakegithub import DEMO_TOKEN, FakeGitHub, demo_fake

R = f"/repos/{OWNER}/{REPO}"
ROOT = Path(__file__).resolve().parents[2]


def client(url: str, token: str | None = TOKEN, timeout: float = 5.0) -> httpx.Client:
    headers = {"x-github-api-version": "2022-11-28"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    return httpx.Client(base_url=url, headers=headers, timeout=timeout)


def test_serve_over_real_http_with_socket_faults(fake: FakeGitHub) -> None:
    seed(fake)
    stack = ExitStack()
    url = stack.enter_context(fake.serve())
    with stack, client(url) as gh:
        assert url.startswith("http://127.0.0.1:")
        issue = gh.get(f"{R}/issues/1").json()
        assert issue["url"] == f"{url}{R}/issues/1"  # URLs use the address the client used
        created = gh.post(f"{R}/issues", json={"title": "over http"})
        assert created.status_code == 201 and created.json()["number"] == 5

        before = len(fake.issues(OWNER, REPO))
        fake.faults.add("issues/create", "timeout", after_commit=True, delay=10)
        with client(url, timeout=0.3) as impatient, pytest.raises(httpx.ReadTimeout):
            impatient.post(f"{R}/issues", json={"title": "lost response"})
        assert len(fake.issues(OWNER, REPO)) == before + 1

        fake.faults.add("issues/get", "reset")
        with pytest.raises(httpx.RemoteProtocolError):
            gh.get(f"{R}/issues/1")
        fake.faults.add("issues/get", "reset", partial=True)
        with pytest.raises(httpx.RemoteProtocolError):
            gh.get(f"{R}/issues/1")
        fake.faults.add("issues/get", "slow_body", delay=0.05, chunks=4)
        assert gh.get(f"{R}/issues/1").json()["number"] == 1
        fake.faults.add("issues/get", "timeout", delay=30)  # left pending: must not block stop
        with client(url, timeout=0.2) as impatient, pytest.raises(httpx.ReadTimeout):
            impatient.get(f"{R}/issues/1")
        assert gh.get(f"{R}/issues/1").status_code == 200
        started = time.monotonic()
        stack.close()  # stops uvicorn
    assert time.monotonic() - started < 3


def test_control_plane(fake: FakeGitHub) -> None:
    with fake.serve() as url, client(url) as gh, client(url, token=None) as control:
        assert control.get("/_fake/health").json() == {"ok": True}
        assert control.post("/_fake/call/add_repo", json={"owner": OWNER, "name": REPO}).status_code == 200
        control.post("/_fake/call/add_token", json={"token": TOKEN, "login": "octocat"})
        number = control.post("/_fake/call/add_issue",
                              json={"owner": OWNER, "repo": REPO, "title": "seeded remotely",
                                    "labels": ["bug"]}).json()["result"]
        assert number == 1
        control.post("/_fake/call/checkpoint")
        assert control.post("/_fake/call/nope").status_code == 404
        assert control.post("/_fake/call/add_issue", json={"bogus": 1}).status_code == 400

        added = control.post("/_fake/faults", json={"match": "issues/get", "kind": "status",
                                                     "status": 503, "times": 1})
        assert added.status_code == 201 and added.json()["match"]["operation"] == "issues/get"
        assert len(control.get("/_fake/faults").json()) == 1
        assert gh.get(f"{R}/issues/1").status_code == 503
        assert gh.get(f"{R}/issues/1").status_code == 200
        assert control.post("/_fake/faults", json={"kind": "explode"}).status_code == 400

        gh.post(f"{R}/issues", json={"title": "after checkpoint"})
        state = control.get(f"/_fake/state/{OWNER}/{REPO}").json()
        assert [i["title"] for i in state["issues"]] == ["seeded remotely", "after checkpoint"]
        assert [lb["name"] for lb in state["labels"]] == ["bug"]
        requests = control.get("/_fake/requests").json()
        assert [r["operation_id"] for r in requests] == ["issues/get", "issues/get", "issues/create"]

        gh.get(f"{R}/issues", params={"state": "bogus"})
        assert len(control.get("/_fake/violations").json()) == 1
        assert control.post("/_fake/reset").status_code == 204
        assert control.get("/_fake/violations").json() == []
        assert control.get("/_fake/requests").json() == []
        state = control.get(f"/_fake/state/{OWNER}/{REPO}").json()
        assert [i["title"] for i in state["issues"]] == ["seeded remotely"]
        assert control.post("/_fake/clock", json={"advance": 60}).status_code == 200  # FakeClock


def test_demo_seed() -> None:
    fake = demo_fake()
    titles = [i.title for i in fake.issues("octo-org", "roadmap", pull_requests=False)]
    assert len(titles) == 12 and len(fake.issues("octo-org", "roadmap")) == 14
    names = fake.label_names("octo-org", "roadmap")
    assert {"bug", "enhancement", "good first issue", "triage"} <= set(names) and len(names) == 8
    assert len(fake.milestones("octo-org", "roadmap")) == 2
    assert fake.comments("octo-org", "roadmap", 1)
    with fake.serve() as url, client(url, DEMO_TOKEN) as gh:
        every = gh.get("/repos/octo-org/roadmap/issues", params={"state": "all", "per_page": 100})
        assert len(every.json()) == 14
        found = gh.get("/search/issues", params={"q": "repo:octo-org/roadmap is:issue label:bug is:open"})
        assert found.json()["total_count"] == 3
        assert gh.post("/repos/octo-org/roadmap/issues/1/comments", json={"body": "hi"}).status_code == 201
    assert fake.violations == []
    fake.reset()
    assert len(fake.comments("octo-org", "roadmap", 1)) == 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_cli_runs_standalone() -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "fakegithub", "--port", str(port), "--seed", "demo"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/_fake/health", timeout=0.5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the fake did not start"
            time.sleep(0.05)
        with client(url, DEMO_TOKEN) as gh:
            assert gh.get("/repos/octo-org/roadmap").json()["full_name"] == "octo-org/roadmap"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)  # reaps the process and closes the stderr pipe
