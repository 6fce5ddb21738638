#!/usr/bin/env python3
"""One-line edits of a 4 MiB file through `seam mcp`, beside the same edit done by the raw
sequence and, when given, by the reference MCP filesystem server — medians of interleaved calls.

    python3 benches/scripts/mcp_edit.py SEAM [--reference "node …/server-filesystem/dist/index.js"]
                                        [--rounds 30] [--mib 4]

Each round edits one line of the same-sized file in every contender, in turn (so a busy moment
of the machine lands on all of them alike):

* ``seam``: `tools/call edit` through `seam mcp --root DIR` over stdio (the file read once first,
  as the observation policy asks), timed from the request written to the answer read;
* ``raw``: the limit — read the file, replace the line, write a temporary file beside it, fsync
  it, rename it over the file, fsync the directory — plus one round trip (the median of a
  `ping` to the same `seam mcp`), since any MCP call pays that;
* ``reference``: the reference server's `edit_file` with one edit, over stdio (it writes in
  place, with no fsync).

Prints the medians in milliseconds, the size of each answer, and the ratios seam/raw and
seam/reference. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LINE = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n"


class Stdio:
    """A JSON-RPC session with an MCP server over its stdin and stdout."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "mcp-edit-bench", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int, float]:
        """The answer, its size in bytes, and the seconds from request to answer."""
        assert self.proc.stdout is not None
        self.next_id += 1
        started = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed its output during {method}")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer, len(line), time.perf_counter() - started

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[int, float]:
        answer, size, seconds = self.request("tools/call", {"name": tool, "arguments": arguments})
        result = answer.get("result") or {}
        if "error" in answer or result.get("isError"):
            raise SystemExit(f"{tool} failed: {json.dumps(answer)[:500]}")
        return size, seconds

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def content(mib: int, round_no: int) -> tuple[str, str, str]:
    """A file of `mib` MiB whose middle line is unique, that line, and its replacement."""
    lines = (mib << 20) // len(LINE)
    middle = f"{LINE[:-1]} middle {round_no}"
    text = LINE * (lines // 2) + middle + "\n" + LINE * (lines - lines // 2 - 1)
    return text, middle, middle.upper()


def raw_edit(path: Path, old: str, new: str) -> float:
    """Read, replace, write a temporary file, fsync, rename, fsync the directory."""
    started = time.perf_counter()
    text = path.read_text()
    if text.count(old) != 1:
        raise SystemExit("raw: the old line is not unique")
    text = text.replace(old, new)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seam", help="the seam binary (target/release/seam)")
    parser.add_argument("--reference", help="the command that starts the reference server")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--mib", type=int, default=4)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        dirs = {name: base / name for name in ("seam", "raw", "reference")}
        for d in dirs.values():
            d.mkdir()
        seam = Stdio([args.seam, "mcp", "--root", str(dirs["seam"])])
        reference = (
            Stdio([*shlex.split(args.reference), str(dirs["reference"])]) if args.reference else None
        )
        times: dict[str, list[float]] = {"seam": [], "raw": [], "reference": [], "ping": []}
        sizes: dict[str, list[int]] = {"seam": [], "reference": []}
        for r in range(args.rounds):
            text, old, new = content(args.mib, r)
            for d in dirs.values():
                (d / "big.txt").write_text(text)
            # seam: the file read once (the policy's read-before-edit), then the edit timed.
            seam.call("read", {"file_path": "big.txt", "limit": 1})
            size, seconds = seam.call(
                "edit", {"file_path": "big.txt", "old_string": old, "new_string": new}
            )
            times["seam"].append(seconds)
            sizes["seam"].append(size)
            times["ping"].append(seam.request("ping", {})[2])
            times["raw"].append(raw_edit(dirs["raw"] / "big.txt", old, new))
            if reference is not None:
                size, seconds = reference.call(
                    "edit_file",
                    {"path": str(dirs["reference"] / "big.txt"), "edits": [{"oldText": old, "newText": new}]},
                )
                times["reference"].append(seconds)
                sizes["reference"].append(size)
            for name, d in dirs.items():
                if name == "reference" and reference is None:
                    continue
                if (d / "big.txt").read_text() != text.replace(old, new):
                    raise SystemExit(f"{name}: the file on disk is not the edited text")
        seam.close()
        if reference is not None:
            reference.close()

    ms = {k: statistics.median(v) * 1000 for k, v in times.items() if v}
    print(f"one-line edit of a {args.mib} MiB file, {args.rounds} interleaved rounds, medians:")
    print(f"  seam mcp edit      {ms['seam']:8.1f} ms   answer {statistics.median(sizes['seam']):,.0f} bytes")
    print(f"  raw sequence       {ms['raw']:8.1f} ms   (+ one round trip {ms['ping']:.2f} ms)")
    if "reference" in ms:
        print(
            f"  reference server   {ms['reference']:8.1f} ms   answer {statistics.median(sizes['reference']):,.0f} bytes"
        )
    print(f"  seam / (raw + round trip) = {ms['seam'] / (ms['raw'] + ms['ping']):.2f}")
    if "reference" in ms:
        print(f"  seam / reference          = {ms['seam'] / ms['reference']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
