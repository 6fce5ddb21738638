#!/usr/bin/env python3
"""A complete seam backend over a Python dict, on the kit: the storage and nothing else.

    seam check --provider exec:'python3 conformance/kits/python/examples/dict_backend.py'

The kit (`seam_kit`) speaks the protocol and keeps the contract's rules; this file decides what a
version is and makes every change one atomic step under a lock. It claims `read_bytes`,
`cancel_points` and `modes`, and — because it can `unlink` and `move` — `namespace`; its storage dies with its process (`volatile`), so the gate does not
kill it to look for torn files, and says so.
"""

import os
import sys
import threading

try:
    import seam_kit
except ImportError:  # run from a checkout without `pip install conformance/kits/python`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import seam_kit


class Entry:
    """A file (`data` is its bytes) or a directory (`data` is None)."""

    def __init__(self, data, mode, version):
        self.data, self.mode, self.version = data, mode, version


class DictStore(seam_kit.Store):
    def __init__(self):
        self.lock = threading.Lock()
        self.counter = 0
        self.entries = {"/": Entry(None, 0o755, self.next_version())}

    def next_version(self):
        # A counter never goes back, so a version is never reused — not even when a file gets
        # its old bytes back (a content hash would be, and the gate finds that).
        self.counter += 1
        return f"v{self.counter}"

    def touch_parent(self, key):
        # A directory's version changes when its entries do.
        self.entries[os.path.dirname(key)].version = self.next_version()

    def node(self, key):
        with self.lock:
            e = self.entries.get(key)
            if e is None:
                return None
            kind = "dir" if e.data is None else "file"
            size = None if e.data is None else len(e.data)
            return seam_kit.Node(kind, e.version, size, e.mode)

    def read(self, key):
        with self.lock:
            return self.entries[key].data

    def names(self, key):
        prefix = key.rstrip("/") + "/"
        with self.lock:
            return [k[len(prefix):] for k in self.entries
                    if k.startswith(prefix) and "/" not in k[len(prefix):] and k != prefix]

    def publish(self, key, data, expect):
        with self.lock:
            old = self.entries.get(key)
            if old is not None and old.data is None:
                raise seam_kit.Conflict()  # a directory is there
            if expect is seam_kit.ABSENT and old is not None:
                raise seam_kit.Conflict()
            if expect not in (seam_kit.ANY, seam_kit.ABSENT) and (
                    old is None or old.version != expect):
                raise seam_kit.Conflict()
            if os.path.dirname(key) not in self.entries:
                raise seam_kit.Conflict()  # the parent went away
            mode = 0o600 if old is None else old.mode
            self.entries[key] = Entry(bytes(data), mode, self.next_version())
            if old is None:
                self.touch_parent(key)
            return self.entries[key].version, None if old is None else old.data

    def make_dir(self, key):
        with self.lock:
            self.entries[key] = Entry(None, 0o755, self.next_version())
            self.touch_parent(key)

    def remove(self, key):
        with self.lock:
            prefix = key + "/"
            for k in [k for k in self.entries if k == key or k.startswith(prefix)]:
                del self.entries[k]
            self.touch_parent(key)

    def chmod(self, key, mode):
        with self.lock:
            e = self.entries[key]
            e.mode, e.version = mode, self.next_version()

    def unlink(self, key, expect):
        with self.lock:
            e = self.entries.get(key)
            prefix = key + "/"
            if e is None or (expect is not seam_kit.ANY and e.version != expect) or (
                    e.data is None and any(k.startswith(prefix) for k in self.entries)):
                raise seam_kit.Conflict()
            del self.entries[key]
            self.touch_parent(key)

    def move(self, src, dst, expect_src, expect_dst):
        with self.lock:
            e, there = self.entries.get(src), self.entries.get(dst)
            if e is None or (expect_src is not seam_kit.ANY and e.version != expect_src):
                raise seam_kit.Conflict()
            if (there is not None) != (expect_dst is not seam_kit.ABSENT) or (
                    there is not None and (there.data is None or there.version != expect_dst)):
                raise seam_kit.Conflict()
            if os.path.dirname(dst) not in self.entries:
                raise seam_kit.Conflict()
            prefix = src + "/"
            # The entry and everything beneath it, under their new names (what is inside
            # keeps its versions); the moved entry itself is a new state of itself.
            for k in [k for k in self.entries if k == src or k.startswith(prefix)]:
                self.entries[dst + k[len(src):]] = self.entries.pop(k)
            self.entries[dst].version = self.next_version()
            self.touch_parent(src)
            self.touch_parent(dst)
            return self.entries[dst].version


if __name__ == "__main__":
    sys.exit(seam_kit.serve_store(DictStore(), name="dict_backend.py"))
