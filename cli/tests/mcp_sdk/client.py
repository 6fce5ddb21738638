"""`seam mcp` through the official Python SDK client, as an agent host on that SDK runs it.

    python3 client.py SEAM ROOT

Calls every listed tool once on a small tree (the SDK validates each ``structuredContent``
against the tool's ``outputSchema`` and raises if it does not fit), then edits one line of a
4 MiB file. Prints one JSON line per call: the tool, whether it failed, and the size of its
answer. Exits non-zero on the first thing that goes wrong. The Rust test checks the disk.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters, stdio_client


def check_against_schema(name: str, schema: dict[str, Any], structured: dict[str, Any]) -> None:
    """Checked here too, beside the SDK, with a control: the same answer with one required field
    taken out must not fit (a schema that fits anything would pass every call)."""
    validator = Draft202012Validator(schema)
    errors = list(validator.iter_errors(structured))
    if errors:
        raise SystemExit(f"{name}: structuredContent does not fit its outputSchema: {errors[0].message}")
    required = schema.get("required") or []
    if not required:
        raise SystemExit(f"{name}: its outputSchema requires nothing")
    broken = {k: v for k, v in structured.items() if k != required[0]}
    if validator.is_valid(broken):
        raise SystemExit(f"{name}: its outputSchema accepts an answer without {required[0]}")


async def main(seam: str, root: str) -> None:
    params = StdioServerParameters(command=seam, args=["mcp", "--root", root])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        with_schema = {t.name for t in listed.tools if t.output_schema}
        schemas = {t.name: t.output_schema for t in listed.tools if t.output_schema}

        async def call(name: str, args: dict[str, Any]) -> None:
            started = time.monotonic()
            # The SDK checks the structured content against the schema it listed.
            result = await session.call_tool(name, args)
            line: dict[str, Any] = {
                "tool": name,
                "error": bool(result.is_error),
                "structured": result.structured_content is not None,
                "schema": name in with_schema,
                # What the SDK kept of the answer, not what came over the wire.
                "parsed_bytes": len(result.model_dump_json(by_alias=True, exclude_none=True)),
                "ms": round((time.monotonic() - started) * 1000),
            }
            if result.is_error:
                line["text"] = "".join(getattr(b, "text", "") for b in result.content)
            print(json.dumps(line), flush=True)
            if result.is_error:
                raise SystemExit(f"{name} failed: {line['text']}")
            if result.structured_content is None:
                raise SystemExit(f"{name} answered no structuredContent")
            check_against_schema(name, schemas[name], result.structured_content)

        await call("write", {"file_path": "t/a.txt", "content": "hello\nworld\n"})
        await call("read", {"file_path": "t/a.txt"})
        await call("edit", {"file_path": "t/a.txt", "old_string": "hello", "new_string": "HELLO"})
        await call("read_image", {"file_path": "img.png"})
        await call("glob", {"pattern": "**/*.txt"})
        await call("grep", {"pattern": "HELLO"})
        await call("str_replace_editor", {"command": "view", "path": f"{root}/t/a.txt"})
        await call(
            "str_replace_editor",
            {"command": "str_replace", "path": f"{root}/t/a.txt", "old_str": "world", "new_str": "WORLD"},
        )
        await call("list", {"path": "t"})
        await call("tree", {"path": "."})
        await call("info", {"file_path": "t/a.txt"})
        await call("read_many", {"file_paths": ["t/a.txt", "img.png"]})
        await call("roots", {})
        await call("create_directory", {"path": "d2"})
        await call("move", {"source": "t/a.txt", "destination": "d2/b.txt"})
        await call("delete", {"path": "d2/b.txt"})

        line = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n"
        lines = (4 << 20) // len(line)
        middle = f"{line[:-1]} (line {lines // 2})"
        content = line * (lines // 2) + middle + "\n" + line * (lines - lines // 2 - 1)
        await call("write", {"file_path": "big-4.txt", "content": content})
        await call("edit", {"file_path": "big-4.txt", "old_string": middle, "new_string": middle.upper()})

        # The session is alive: it lists and answers again.
        await session.list_tools()
        await call("roots", {})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
