"""`python -m fakeforgejo --port 8766 --seed demo`: run the fake standalone (API under /api/v1)."""

from __future__ import annotations

import argparse
import sys

from fakeforgejo.demo import DEMO_TOKEN, ORG, REPO, demo_fake
from fakeforgejo.fake import FakeForgejo
from fakegithub.serve import serve_forever


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakeforgejo", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--seed", choices=["demo", "empty"], default="demo")
    args = parser.parse_args(argv)
    fake = demo_fake() if args.seed == "demo" else FakeForgejo()
    if args.seed == "demo":
        print(f"fakeforgejo: {ORG}/{REPO} seeded; token {DEMO_TOKEN} (alice)", file=sys.stderr)
    print(f"fakeforgejo: FORGEJO_API_URL=http://{args.host}:{args.port}/api/v1", file=sys.stderr)
    serve_forever(fake.app, host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
