"""A real MCP client (the official Python SDK, `mcp`) that drives `instructions-lsp mcp` for
tests/it/mcp.rs: it reads a plan as JSON on stdin, runs it, and prints what it saw as JSON.

  python mcp_client.py < plan.json

The plan: {"command": "...", "args": ["mcp"], "cwd": "...", "env": {...},
           "roots": ["file:///..."] or null (null: the client declares no roots capability),
           "client": {"name": "...", "version": "..."} (optional: the clientInfo it announces),
           "calls": [{"tool": "...", "arguments": {...}}, ...]}
A call may instead change the tree between two tool calls: {"write": PATH, "content": TEXT} or
{"remove": PATH}; or the roots: {"roots": [URI, ...]}, with notifications/roots/list_changed and
no pause before the next call (these add no result).
The output: {"server": {...}, "instructions": "...", "tools": [...],
             "results": [{"isError": bool, "texts": [...], "structured": ...}, ...]}
A call that fails at the protocol level (not a tool error) gives {"protocolError": "..."}.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main() -> None:
    plan = json.load(sys.stdin)
    params = StdioServerParameters(
        command=plan["command"], args=plan.get("args", []), cwd=plan.get("cwd"), env=plan.get("env")
    )
    roots = plan.get("roots")

    async def list_roots(_context):
        return types.ListRootsResult(roots=[types.Root(uri=uri) for uri in roots])

    callback = list_roots if roots is not None else None
    client = plan.get("client")
    client_info = types.Implementation(name=client["name"], version=client["version"]) if client else None
    out = {"results": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=callback, client_info=client_info) as session:
            init = await session.initialize()
            out["server"] = init.server_info.model_dump(mode="json", by_alias=True, exclude_none=True)
            out["instructions"] = init.instructions
            listed = await session.list_tools()
            out["tools"] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
            for call in plan.get("calls", []):
                if "write" in call:
                    with open(call["write"], "w", encoding="utf-8") as f:
                        f.write(call["content"])
                    continue
                if "remove" in call:
                    os.remove(call["remove"])
                    continue
                if "roots" in call:
                    roots[:] = call["roots"]
                    # No pause: the next call follows at once, and must see the new roots.
                    await session.send_roots_list_changed()
                    continue
                try:
                    result = await session.call_tool(call["tool"], call.get("arguments"))
                except Exception as e:  # a protocol error: the test says whether it expects one
                    out["results"].append({"protocolError": str(e)})
                    continue
                out["results"].append(
                    {
                        "isError": bool(result.is_error),
                        "texts": [c.text for c in result.content if getattr(c, "type", "") == "text"],
                        "structured": result.structured_content,
                    }
                )
    json.dump(out, sys.stdout)


anyio.run(main)
