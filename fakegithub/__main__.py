"""`python -m fakegithub --port 8765 --seed demo`: run the fake standalone."""

from __future__ import annotations

import argparse
import sys

from fakegithub.demo import DEMO_TOKEN, demo_fake
from fakegithub.fake import FakeGitHub
from fakegithub.serve import serve_forever


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakegithub", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", choices=["demo", "empty"], default="demo")
    args = parser.parse_args(argv)
    fake = demo_fake() if args.seed == "demo" else FakeGitHub()
    if args.seed == "demo":
        print(f"fakegithub: octo-org/roadmap seeded; token {DEMO_TOKEN} (octocat)", file=sys.stderr)
    print(f"fakegithub: listening on http://{args.host}:{args.port} (control: /_fake/...)",
          file=sys.stderr)
    serve_forever(fake.app, host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
