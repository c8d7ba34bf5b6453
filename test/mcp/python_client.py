"""A second, independent MCP client: the Python `mcp` package from PyPI, over Streamable HTTP or stdio.

Reads a JSON job on stdin ({transport, url | command/args/env/cwd, key, page, refused}), lists the tools,
calls fetch_page for Markdown, for a screenshot and on a refused target, and prints what it got as JSON.
"""
import asyncio
import base64
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def content_of(result):
    first = result.content[0]
    if first.type == "image":
        return {"type": "image", "mimeType": first.mime_type, "head": base64.b64decode(first.data)[:8].hex()}
    return {"type": first.type, "text": first.text}


async def exercise(session, job):
    await session.initialize()
    tools = await session.list_tools()
    page = await session.call_tool("fetch_page", {"url": job["page"]})
    shot = await session.call_tool("fetch_page", {"url": job["page"], "js_render": True, "screenshot": True})
    refused = await session.call_tool("fetch_page", {"url": job["refused"]})
    return {
        "tools": sorted(tool.name for tool in tools.tools),
        "page": {"isError": bool(page.is_error), **content_of(page)},
        "screenshot": {"isError": bool(shot.is_error), **content_of(shot)},
        "refused": {"isError": bool(refused.is_error), **content_of(refused)},
    }


async def main():
    job = json.load(sys.stdin)
    if job["transport"] == "http":
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {job['key']}"}) as http:
            async with streamable_http_client(job["url"], http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    return await exercise(session, job)
    server = StdioServerParameters(command=job["command"], args=job["args"], env=job["env"], cwd=job["cwd"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            return await exercise(session, job)


print(json.dumps(asyncio.run(main())))
