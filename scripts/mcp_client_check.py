"""Drives `skillet mcp` with the official MCP Python SDK (a client no one here wrote), over stdio
and over streamable HTTP, in the SDK's default mode (it probes `server/discover`, so the
2026-07-28 protocol) and in its legacy mode (the `initialize` handshake): the instructions, every
tool and its errors, prompts with arguments, paged resources, the Skills extension's manifests
checked against the files, and a skill made on disk announced as a list change.

Usage: python mcp_client_check.py SKILLET_BINARY
Exits 0 when every check holds; prints what failed otherwise. Needs `pip install "mcp>=2,<3"`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import TypeAdapter

import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

WAIT = 20


class ListSkills(types.PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class GetSkillParams(types.RequestParams):
    uri: str


class GetSkill(types.Request[GetSkillParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: GetSkillParams


ANY = TypeAdapter(dict[str, Any])


def write(root: Path, relative: str, text: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def library(root: Path) -> None:
    write(root, "pdf-forms/SKILL.md", "---\nname: pdf-forms\ndescription: Fill in PDF forms and extract their fields\nlicense: MIT\n---\nFill $ARGUMENTS carefully.\n")
    write(root, "pdf-forms/references/fields.md", "# Fields\n")
    write(root, "pdf-forms/assets/logo.png", b"\x89PNG\r\n\x1a\n\x00binary")
    for index in range(110):
        write(root, f"pdf-forms/references/many/{index:03}.md", f"note {index}\n")
    write(root, "deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the service\ndisable-model-invocation: true\n---\nDeploy $ARGUMENTS.\n")


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def exercise(client: Client, skills: Path, label: str) -> None:
    instructions = client.instructions or ""
    check(0 < len(instructions) <= 2000, f"{label}: instructions of {len(instructions)} characters")
    check("library of 1 skill:" in instructions, f"{label}: instructions: {instructions!r}")

    tools = (await client.list_tools()).tools
    check([t.name for t in tools] == ["search_skills", "load_skill", "read_skill_file", "list_skills"], f"{label}: tools {[t.name for t in tools]}")
    for tool in tools:
        check(len(tool.description or "") < 2000, f"{label}: {tool.name} description too long")
        check(tool.annotations is not None and tool.annotations.read_only_hint is True, f"{label}: {tool.name} not read-only")

    found = await client.call_tool("search_skills", {"query": "fill in a pdf form"})
    check(not found.is_error, f"{label}: search failed: {text_of(found)}")
    results = (found.structured_content or {}).get("results", [])
    check(results and results[0]["name"] == "pdf-forms", f"{label}: search results {results}")

    loaded = await client.call_tool("load_skill", {"name": "pdf-forms", "arguments": "tax.pdf"})
    check(not loaded.is_error and "Fill tax.pdf carefully." in text_of(loaded), f"{label}: load_skill: {text_of(loaded)}")
    unknown = await client.call_tool("load_skill", {"name": "pdf-form"})
    check(unknown.is_error and "did you mean 'pdf-forms'" in text_of(unknown), f"{label}: unknown skill: {text_of(unknown)}")

    escape = await client.call_tool("read_skill_file", {"name": "pdf-forms", "path": "../deploy/SKILL.md"})
    check(escape.is_error, f"{label}: a path escape was served: {text_of(escape)}")
    binary = await client.call_tool("read_skill_file", {"name": "pdf-forms", "path": "assets/logo.png"})
    check(text_of(binary).startswith("binary file (a PNG image"), f"{label}: binary: {text_of(binary)}")

    listed = await client.call_tool("list_skills", {})
    check((listed.structured_content or {}).get("total") == 1, f"{label}: list_skills {listed.structured_content}")

    prompts = (await client.list_prompts()).prompts
    check({p.name for p in prompts} == {"pdf-forms", "deploy"}, f"{label}: prompts {[p.name for p in prompts]}")
    prompt = await client.get_prompt("deploy", {"arguments": "staging"})
    message = prompt.messages[0].content
    check(isinstance(message, types.TextContent) and "Deploy staging." in message.text, f"{label}: prompt {prompt}")

    uris: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await client.list_resources(cursor=cursor)
        pages += 1
        uris.extend(str(r.uri) for r in page.resources)
        cursor = page.next_cursor
        if not cursor:
            break
    check(pages >= 2 and len(uris) == len(set(uris)), f"{label}: {pages} pages, {len(uris)} resources")
    check("skill://pdf-forms/references/many/109.md" in uris, f"{label}: a file missing from the resources")
    read = await client.read_resource("skill://pdf-forms/SKILL.md")
    check("Fill $ARGUMENTS" in read.contents[0].text, f"{label}: read_resource {read}")

    manifests = await client.session.send_request(ListSkills(), ANY)
    entries = manifests["skills"]
    while manifests.get("nextCursor"):
        manifests = await client.session.send_request(ListSkills(params=types.PaginatedRequestParams(cursor=manifests["nextCursor"])), ANY)
        entries += manifests["skills"]
    pdf = next(entry for entry in entries if entry["frontmatter"]["name"] == "pdf-forms")
    check(pdf["frontmatter"].get("license") == "MIT", f"{label}: frontmatter {pdf['frontmatter']}")
    for resource in pdf["resources"]:
        relative = resource["uri"].removeprefix("skill://pdf-forms/")
        data = (skills / "pdf-forms" / relative).read_bytes()
        check(resource["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), f"{label}: digest of {relative}")
        check(resource["size"] == len(data), f"{label}: size of {relative}")
    got = await client.session.send_request(GetSkill(params=GetSkillParams(uri="skill://pdf-forms/SKILL.md")), ANY)
    check(got["skill"]["uri"] == "skill://pdf-forms/SKILL.md", f"{label}: skills/get {got}")
    try:
        await client.session.send_request(GetSkill(params=GetSkillParams(uri="skill://nope/SKILL.md")), ANY)
        check(False, f"{label}: skills/get of an unknown skill answered")
    except MCPError as error:
        check(error.error.code == -32602, f"{label}: skills/get unknown gave {error.error.code}")


async def announced(client: Client, skills: Path, name: str, notifications: list[str]) -> None:
    """A skill made on disk is announced: on a listen stream (2026-07-28) or as a notification."""
    def make() -> None:
        write(skills, f"{name}/SKILL.md", f"---\nname: {name}\ndescription: Made while serving\n---\nbody\n")

    if client.protocol_version >= "2026-07-28":
        async with client.listen(tools_list_changed=True) as subscription:
            make()
            with anyio.fail_after(WAIT):
                async for _event in subscription:
                    break
    else:
        make()
        with anyio.fail_after(WAIT):
            while "notifications/tools/list_changed" not in notifications:
                await anyio.sleep(0.05)
    names = [t for t in (await client.list_tools()).tools if t.name == "load_skill"][0].input_schema["properties"]["name"]["enum"]
    check(name in names, f"the new skill is not in load_skill's enum: {names}")


def recorder(notifications: list[str]):
    async def handler(message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method is None and hasattr(message, "model_dump"):
            method = message.model_dump().get("method")
        if isinstance(method, str):
            notifications.append(method)
    return handler


async def over_stdio(binary: str, mode: str) -> str:
    with tempfile.TemporaryDirectory() as temp:
        skills = Path(temp) / "skills"
        library(skills)
        env = {"HOME": temp, "PATH": os.environ.get("PATH", ""), "HF_HUB_OFFLINE": "1"}
        params = StdioServerParameters(command=binary, args=["mcp", "--skills-dir", str(skills)], env=env)
        notifications: list[str] = []
        async with Client(params, mode=mode, message_handler=recorder(notifications), read_timeout_seconds=WAIT) as client:
            await exercise(client, skills, f"stdio/{mode}")
            await announced(client, skills, "made-on-disk", notifications)
            return client.protocol_version


async def over_http(binary: str, mode: str) -> str:
    with tempfile.TemporaryDirectory() as temp:
        skills = Path(temp) / "skills"
        library(skills)
        env = {"HOME": temp, "PATH": os.environ.get("PATH", ""), "HF_HUB_OFFLINE": "1"}
        server = subprocess.Popen([binary, "mcp", "--skills-dir", str(skills), "--http", "0"], env=env, stderr=subprocess.PIPE, text=True)
        try:
            match = None
            seen = []
            for _ in range(50):
                line = server.stderr.readline()
                seen.append(line)
                match = re.search(r"listening on (http://\S+)", line)
                if match or not line:
                    break
            check(match is not None, f"http: no address in {seen!r}")
            # Keep reading the log, so the server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            notifications: list[str] = []
            async with Client(match.group(1), mode=mode, message_handler=recorder(notifications), read_timeout_seconds=WAIT) as client:
                await exercise(client, skills, f"http/{mode}")
                await announced(client, skills, "made-on-disk", notifications)
                return client.protocol_version
        finally:
            server.kill()
            server.wait()


def describe(error: BaseException) -> str:
    """The error, and each error inside a group (anyio wraps what a task raised)."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def main(binary: str) -> int:
    failures = 0
    for transport, run in (("stdio", over_stdio), ("http", over_http)):
        for mode in ("auto", "legacy"):
            try:
                version = await run(binary, mode)
                print(f"ok: {transport}, mode {mode} (protocol {version})")
            except Exception as error:  # noqa: BLE001 - every failure is reported, then counted
                failures += 1
                print(f"FAILED: {transport}, mode {mode}: {describe(error)}")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1])))
