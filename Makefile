# Thin targets over Python entry points. Every target creates .venv and installs pinned
# dependencies on first use, so `make generate` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv generate check diff test lint dist demo update-spec bench fuzz compat conformance bench-oversized clean-venv

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

# The runtime and every generated server, installed editable from their own pyproject.toml (only
# what changed since the last run; generator/packaging/venv_sync.py). A server that `make generate` adds is
# installed right after it is written: its console script and `python -m <package>` work at once.
venv: $(STAMP)
	@$(PY) -m generator.packaging.venv_sync

generate: venv
	$(PY) -m generator generate
	@$(PY) -m generator.packaging.venv_sync

check: venv
	$(PY) -m generator check

diff: venv
	$(PY) -m generator diff

test: venv
	$(PY) -m pytest

lint: venv
	$(VENV)/bin/ruff check generator ghmcp_runtime generated fakegithub tests bench .github/scripts
	$(VENV)/bin/mypy --strict generator ghmcp_runtime $(patsubst %/pyproject.toml,%,$(wildcard generated/*/pyproject.toml)) .github/scripts
	$(VENV)/bin/actionlint -shellcheck $(VENV)/bin/shellcheck -pyflakes ""
	$(VENV)/bin/hadolint Dockerfile

# Wheels of the runtime and of every generated server into dist/ (each directory is its own
# distribution; see docs/ARCHITECTURE.md); install with `pip install --find-links dist ...`. Then
# one sdist per distribution (hatchling run from inside the directory, whose own modules would
# shadow the standard library's under `python -m`) and one MCP Bundle per server
# (dist/<name>-<version>.mcpb, uv runs it; generator/packaging/bundle.py), packed by the pinned
# @anthropic-ai/mcpb CLI that npm installs into the git-ignored .mcpb/ on first use.
DISTRIBUTIONS = ghmcp_runtime $(patsubst %/pyproject.toml,%,$(wildcard generated/*/pyproject.toml))
dist: venv
	$(PY) -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist $(addprefix ./,$(DISTRIBUTIONS))
	for d in $(DISTRIBUTIONS); do (cd $$d && $(CURDIR)/$(VENV)/bin/hatchling build -t sdist -d $(CURDIR)/dist) || exit 1; done
	$(PY) -m generator.packaging.bundle dist

demo: venv
	$(PY) -m fakegithub.transcript

# FORGE=forgejo re-vendors Forgejo's description (converted with swagger2openapi, installed by npm
# into the git-ignored .swagger2openapi/ on first use); SOURCE=file skips the download.
update-spec: venv
	@test -n "$(VERSION)" || (echo "usage: make update-spec VERSION=x.y.z [FORGE=github|forgejo] [SOURCE=file]" >&2; exit 2)
	$(PY) -m generator.review.update_spec $(VERSION) --forge $(or $(FORGE),github) $(if $(SOURCE),--source $(SOURCE))

# MCP Inspector CLI 2.12.0 (installed into the git-ignored .compat/ by npm on first use) against
# the stdio server and the demo fake, legacy and modern eras; then github-mcp --dynamic-toolsets
# through the Inspector CLI and its connection CLI mcpdo (stdio and HTTP); needs node and npm.
compat: venv
	$(PY) tests/compat/inspector_compat.py
	$(PY) tests/compat/dynamic_compat.py

# The official MCP conformance suite (server mode, 0.2.0-alpha.11; Node 22 comes from npm when
# the node on PATH is older) against the HTTP server, wires 2025-11-25 and 2026-07-28, with the
# known failures in tests/compat/conformance-baseline.yml; ~10 s after the first install.
conformance: venv
	$(PY) tests/compat/conformance.py

# Oversized tool arguments over HTTP: longest event-loop stall and RSS growth per case (~1 min).
bench-oversized: venv
	$(PY) bench/oversized.py

# Side-by-side benchmarks (< 5 min): generation, cold start, tool surface, per-call overhead,
# response size, HTTP throughput and load, each next to a peer measured in the same run; writes
# docs/BENCHMARKS.md and bench/results.json. FastMCP 4.1.6 goes into bench/.peer-venv on first use.
# `make bench ONLY=roundtrips,rate_limit` re-measures just those sections (~2 min).
bench: venv
	$(PY) bench/run.py $(if $(ONLY),--only $(ONLY))

# Long fuzz: 2 property tests x 9 tools x 560 examples = 10,080 calls (make test runs 40 per tool),
# plus the label-meaning and pull-request-page properties (4 x 560 examples), and 11,200 hostile
# Markdown documents against GitHub's own renderer (cmark-gfm) as the oracle (make test: 600).
fuzz: venv
	FUZZ_EXAMPLES=560 $(PY) -m pytest -q tests/functional/test_fuzz.py tests/reliability/test_fuzz_hostile.py \
		tests/reliability/test_fuzz_labels.py tests/runtime/test_markup.py

clean-venv:
	rm -rf $(VENV)
