#!/usr/bin/env python3
"""A seam backend on the kit's low layer, `seam_kit.serve`: the kit speaks the protocol, this file
answers every contract call itself, as a backend you already have would.

    seam check --provider exec:'python3 conformance/kits/python/examples/serve_backend.py'

It claims `read_bytes` and `cancel_points`; not `modes` (it keeps no permission bits), `namespace`,
symlinks or the rest, which the gate reports "not claimed". Its storage dies with its process
(`volatile`), so the gate's `crash` property does not apply.
"""

import itertools
import os
import sys
import threading
from typing import Callable, Dict, List, NamedTuple, Optional

try:
    import seam_kit
except ImportError:  # run from a checkout without `pip install conformance/kits/python`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import seam_kit
from seam_kit import ProtocolError, decode, display_path, fail, file_url, lexical, literal_edit


# --- the filesystem you already have: a dict of absolute paths, one per process, shared by
# every connection under one lock; versions from a counter that never goes back, so a version is
# never given again (not even to the same bytes) ---

class Entry(NamedTuple):
    data: Optional[bytes]  # None: a directory
    version: str


LOCK = threading.Lock()
COUNTER = itertools.count(1)
ENTRIES: Dict[str, Entry] = {"/": Entry(None, "v0")}


def ancestors(key: str) -> List[str]:  # "/a/b/c" -> ["/a", "/a/b"]
    parts = key.split("/")[1:-1]
    return ["/" + "/".join(parts[:i + 1]) for i in range(len(parts))]


def put(key: str, data: Optional[bytes]) -> Entry:
    """A file (a directory: data None) at `key` with a new version, missing parents made. The
    caller holds LOCK."""
    for a in ancestors(key):
        if a not in ENTRIES:
            put(a, None)
    if key not in ENTRIES:  # a directory's version changes when its entries do
        ENTRIES[os.path.dirname(key)] = Entry(None, f"v{next(COUNTER)}")
    ENTRIES[key] = entry = Entry(data, f"v{next(COUNTER)}")
    return entry


def drop(key: str) -> None:
    """Removes `key` and everything under it. The caller holds LOCK."""
    for k in [k for k in ENTRIES if k == key or k.startswith(key + "/")]:
        del ENTRIES[k]
    ENTRIES[os.path.dirname(key)] = Entry(None, f"v{next(COUNTER)}")


def names(key: str) -> List[str]:
    prefix = key.rstrip("/") + "/"
    return [k[len(prefix):] for k in ENTRIES
            if k.startswith(prefix) and k != prefix and "/" not in k[len(prefix):]]


# --- the contract over it, for `serve` ---

CASES = itertools.count(1)


def info(e: Entry) -> dict:
    is_dir = e.data is None
    return {"version": e.version, "kind": "directory" if is_dir else "file",
            "size": None if is_dir else len(e.data)}


def target(key: str, display: str) -> dict:
    return {"key": key, "display_path": display, "process_path": key, "file_url": file_url(key)}


def lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def parent_is_file(key: str) -> bool:
    return any(ENTRIES.get(a, Entry(None, "")).data is not None for a in ancestors(key))


class Backend:
    """One connection's backend: `serve` makes one per connection and calls these methods."""

    def __init__(self) -> None:
        self.claims = ["read_bytes", "cancel_points"]  # `serve` reads it (for `namespace`)
        self.cwd, self.case = "/", None
        self.diff_limit = 10 * 1024 * 1024  # world/case gives the gate's

    def describe(self) -> dict:
        return {"protocol": seam_kit.PROTOCOL, "server": "serve_backend.py",
                "capabilities": self.claims, "sandbox_mode": None, "cwd": self.cwd,
                "test_control": True, "volatile": True,
                "limits": {"max_line": 1 << 20, "max_payload": 64 << 20, "stream_window": 8}}

    def close(self) -> None:
        if self.case is not None:
            with LOCK:
                drop(self.case)

    # --- reading ---

    def resolve(self, p: dict) -> dict:
        display = display_path(p["path"], p.get("cwd") or self.cwd, "resolve")
        with LOCK:
            if parent_is_file(display):
                raise fail("parent_not_directory", verb="resolve", path=display)
        return target(display, display)  # one spelling per entry (no links here): the key

    def stat(self, p: dict, key: Optional[str] = None) -> Optional[dict]:
        with LOCK:
            e = ENTRIES.get(key or p["target"]["key"])
        return None if e is None else info(e)

    def lstat(self, p: dict) -> Optional[dict]:  # no links here: the same as stat
        return self.stat(p, display_path(p["path"], p.get("cwd") or self.cwd, "lstat"))

    def _file(self, p: dict, verb: str) -> bytes:
        with LOCK:
            e = ENTRIES.get(p["target"]["key"])
        if e is None or e.data is None:
            name = "not_found" if e is None else "not_regular_file"
            raise fail(name, verb=verb, path=p["target"]["display_path"])
        return e.data

    def read_text(self, p: dict) -> str:  # also what the kit streams for `stream_text`
        return decode(self._file(p, "read"), "read", p["target"]["display_path"])

    def read_bytes(self, p: dict) -> bytes:
        data = self._file(p, "read")
        if len(data) > p["max_bytes"]:
            raise fail("too_large", path=p["target"]["display_path"], size=len(data),
                       max=p["max_bytes"])
        return data

    def list_dir(self, p: dict) -> List[dict]:
        key, display = p["target"]["key"], p["target"]["display_path"]
        with LOCK:
            e = ENTRIES.get(key)
            if e is None:
                raise fail("not_found", verb="list", path=display)
            if e.data is not None:
                raise fail("not_a_directory", path=display)
            return [dict(info(ENTRIES[key.rstrip("/") + "/" + n]), name=n,
                         target=target(key.rstrip("/") + "/" + n, display.rstrip("/") + "/" + n))
                    for n in sorted(names(key), key=str.encode)]  # in byte order

    # --- writing ---

    @staticmethod
    def _guard(key: str, display: str, expected: dict) -> Optional[Entry]:
        """The write guard matrix against what is at `key` now: the file there, or None."""
        e = ENTRIES.get(key)
        if e is not None and e.data is None:
            raise fail("not_regular_file", verb="write", path=display)
        if expected.get("create_if_absent") and e is not None:
            raise fail("exists_not_observed", path=display)
        want = expected.get("replace_if_version")
        if want is not None and e is None:
            raise fail("no_longer_exists", path=display)
        if want is not None and e.version != want:
            raise fail("changed_since_read", verb="write", path=display)
        return e

    def write_text(self, p: dict, checkpoint: Callable[[str], bool]) -> dict:
        key, display = p["target"]["key"], p["target"]["display_path"]
        content, expected = p["content"], p.get("expected") or {}
        with LOCK:
            self._guard(key, display, expected)  # refuse early, changing nothing
        # Never hold a lock the world needs across a checkpoint: the gate changes the world there.
        if checkpoint("before_stage") or checkpoint("staged"):
            raise fail("aborted", verb="write")
        with LOCK:  # check again and publish, in one step
            old = self._guard(key, display, expected)
            if parent_is_file(key):
                raise fail("parent_not_directory", verb="write", path=display)
            new = put(key, bytes(content))
        checkpoint("committed")  # published: the answer cannot undo it
        before = None
        if old is not None and max(len(old.data), len(content)) < self.diff_limit:
            try:
                before = lf(decode(old.data, "write", display)).encode()
            except seam_kit.FsError:
                pass  # the old content was not text: no `before`
        return {"operation": "create" if old is None else "update", "version": new.version,
                "before": before, "after": lf(content.decode()).encode()}

    def edit_text(self, p: dict, checkpoint: Callable[[str], bool]) -> dict:
        key, display = p["target"]["key"], p["target"]["display_path"]
        old, new, guard = p["old_string"].decode(), p["new_string"].decode(), p.get("expected")
        for _ in range(8):  # unguarded: made again on what is there now, a few times
            with LOCK:
                e = ENTRIES.get(key)
            if e is None:
                raise fail("changed_since_read", verb="edit", path=display)
            if e.data is None:
                raise fail("not_regular_file", verb="edit", path=display)
            if guard is not None and e.version != guard:
                raise fail("changed_since_read", verb="edit", path=display)
            data, before, after = literal_edit(e.data, old, new, bool(p.get("replace_all")),
                                               display)
            if checkpoint("before_stage") or checkpoint("staged"):
                raise fail("aborted", verb="edit")
            with LOCK:  # still the file that was read? then publish, in one step
                done = put(key, data) if ENTRIES.get(key) == e else None
            if done is not None:
                checkpoint("committed")
                return {"version": done.version, "before": before.encode(),
                        "after": after.encode()}
            if guard is not None:
                break
        raise fail("changed_since_read", verb="edit", path=display)

    # --- the test-control world: how the gate sets up cases and reads them back ---

    def world(self, method: str, p: dict) -> dict:
        if method == "world/case":
            self.case = self.cwd = f"/case-{next(CASES)}"
            with LOCK:
                put(self.case, None)
            self.diff_limit = p.get("diff_basis_max_bytes", self.diff_limit)
            return dict(self.describe(), root=self.case,
                        world={"fifos": False, "restore_mtime": True, "modes": False})
        if self.case is None:
            raise ProtocolError(-32602, f"{method} needs world/case first")
        if method == "world/snapshot":  # no "mode" in the entries: it keeps none ("modes": False)
            with LOCK:
                found = sorted((k[len(self.case) + 1:], e) for k, e in ENTRIES.items()
                               if k.startswith(self.case + "/"))
            return {"entries": [[rel, {"kind": "dir"} if e.data is None else
                                 {"kind": "file", "bytes": e.data}] for rel, e in found]}
        if method != "world/apply":
            raise ProtocolError(-32601, f"unknown method {method}")
        key, effect = lexical(self.case + "/" + p["path"]), p["effect"]
        with LOCK:
            if effect == "create_file" and key in ENTRIES:
                drop(key)  # a new file, not a new state of the old one
            if effect in ("create_file", "rewrite_file", "create_dir"):
                put(key, None if effect == "create_dir" else bytes(p["bytes"]))
            elif effect == "remove":
                drop(key)
            else:  # chmod, symlink, mkfifo: never sent for what this backend claims
                raise ProtocolError(-32602, f"this store cannot {effect}")
        return {}


if __name__ == "__main__":
    sys.exit(seam_kit.serve(Backend, name="serve_backend.py"))
