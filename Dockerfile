# The HTTP deployment of one generated server: the wheels of the runtime and of every generated
# server (a forge server such as github_mcp is made of the per-file ones), built here from the
# checkout and installed as files (never a same-named distribution from an index) with the pinned
# versions of constraints.txt into a venv that the final stage copies (no pip, compilers or build
# backend there); SERVER_PACKAGE is the one it runs. Build and run, e.g.:
#   docker build -t github-mcp .
#   docker build --build-arg SERVER_PACKAGE=github_issues_mcp -t github-issues-mcp .
#   docker run --rm -p 8000:8000 github-mcp --allowed-host mcp.example.com
# Arguments after the image name go to the server; GHMCP_PORT (default 8000) sets the port.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY constraints.txt ./
COPY ghmcp_runtime/ ghmcp_runtime/
COPY generated/ generated/
# hatchling, the build backend, is pinned in each pyproject.toml (build isolation fetches it)
RUN python -m pip wheel --no-cache-dir --no-deps --wheel-dir /wheels ./ghmcp_runtime ./generated/*/ \
    && python -m venv --without-pip /opt/server \
    && python -m pip --python /opt/server/bin/python install --no-cache-dir --no-compile \
        --constraint constraints.txt --find-links /wheels /wheels/*.whl \
    && /opt/server/bin/python -m compileall -q /opt/server

FROM ${PYTHON_IMAGE}
ARG SERVER_PACKAGE=github_mcp
ENV SERVER_PACKAGE=${SERVER_PACKAGE} \
    GHMCP_PORT=8000 \
    PATH=/opt/server/bin:${PATH} \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# the installed server needs no installer or build tools: the image ships none
RUN python -m pip uninstall --yes --quiet pip setuptools wheel \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin mcp
COPY --from=build /opt/server /opt/server
USER 10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-m", "ghmcp_runtime.serving.healthcheck"]
ENTRYPOINT ["sh", "-c", "exec python -m \"$SERVER_PACKAGE\" --transport http --host 0.0.0.0 --port \"$GHMCP_PORT\" \"$@\"", "server"]
