"""A client session through the official MCP client that checks every result against the tool's
published schemas, never sees a secret echoed in an error, and can call every repair it gets."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from mcp import Client

from tests.functional.conftest import TOKEN, payload


class Session:
    def __init__(self, client: Client, tools: dict[str, dict[str, Any]], secrets: tuple[str, ...]) -> None:
        self.client = client
        self.tools = tools
        self.secrets = secrets

    async def call(self, name: str, args: dict[str, Any], *, secrets: tuple[str, ...] = ()) -> dict[str, Any]:
        result = await self.client.call_tool(name, args)
        data = payload(result)
        problems = list(Draft202012Validator(self.tools[name]["outputSchema"]).iter_errors(data))
        assert not problems, problems[0].message
        assert result.is_error == ("code" in data)
        if result.is_error:
            wire = json.dumps(result.model_dump(mode="json"), ensure_ascii=False).lower()
            for secret in (TOKEN, *self.secrets, *secrets):
                assert secret.lower() not in wire, (secret, data)
            assert "value" not in data.get("details", {})
            if "repair" in data:
                self.assert_callable(data["repair"])
        return data

    async def ok(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        data = await self.call(name, args)
        assert "code" not in data, data
        return data

    async def error(self, name: str, args: dict[str, Any], code: str, **kw: Any) -> dict[str, Any]:
        data = await self.call(name, args, **kw)
        assert data.get("code") == code, data
        return data

    def assert_callable(self, repair: dict[str, Any]) -> None:
        """[6.repair-callable]: a listed tool, arguments valid against its inputSchema."""
        assert repair["tool"] in self.tools, repair
        schema = self.tools[repair["tool"]]["inputSchema"]
        problems = list(Draft202012Validator(schema).iter_errors(repair["arguments"]))
        assert not problems, (repair, problems[0].message)


class Opened:
    """`async with Opened(server) as session:` — one official-client session on a server."""

    def __init__(self, server: Any, secrets: tuple[str, ...] = (), mode: str = "auto") -> None:
        self.client = Client(server, cache=None, mode=mode)
        self.secrets = secrets

    async def __aenter__(self) -> Session:
        await self.client.__aenter__()
        listed = await self.client.list_tools()
        tools = {t.name: t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools}
        return Session(self.client, tools, self.secrets)

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)
