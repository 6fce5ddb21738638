"""The contract over storage that is a tree of files and directories, whatever keeps it: the
author writes a `Store` (what is at a key, read it, publish bytes there atomically against an
expected state, make a directory, and the few world operations the gate uses to set up cases);
`TreeBackend` does everything the contract says on top — resolving paths, stat and listing
answers, the decoding rules, the write guard matrix, the literal edit, the `before` of a diff,
checkpoints, the exact error texts, and the test-control world.

What stays the store's to get right is exactly what differs between storages, and what the gate
then checks: that `publish` is atomic and compares-and-swaps (two writers at one version: one
wins), that a version changes on every change — a directory's too when its entries change — and
is never reused.
"""

import collections
import functools
import itertools
import os
import threading

from .contract import (CATALOGUE, FsError, decode, display_path, fail, file_url, lexical, lf,
                       literal_edit)
from .protocol import PROTOCOL, WINDOW, ProtocolError

#: What `Store.node` answers: `kind` is "file", "dir" or "other"; `version` an opaque string;
#: `size` a file's length in bytes (None otherwise); `mode` the permission bits (None where the
#: storage keeps none: `Store.world["modes"]` is False).
Node = collections.namedtuple("Node", "kind version size mode")

#: An `expect` for `Store.publish`: a file may or may not be there (it is replaced or created).
ANY = object()
#: An `expect` for `Store.publish`: nothing may be there (create only).
ABSENT = object()


class Conflict(Exception):
    """Raised by `Store.publish` when what is at the key is not what `expect` asked for."""


class Store:
    """A tree of files and directories, keyed by absolute normalised paths ("/a/b"). Subclass it.

    Every method may be called from several threads at once. The kit runs the contract's
    mutations (and the test-control world) one at a time per store, each from its first look to
    its last store call, but never holds that across a checkpoint; the reads (`node`, `read`,
    `names` for stat, read and list calls) run at any moment, also while `publish`, `unlink`
    or `move` is under way — so what a reader can see of a change half done is what the gate
    sees."""

    #: Whether the storage dies with the process (a dict): the gate then does not kill it to
    #: see what a crash leaves, and says why.
    volatile = True
    #: What the gate's world can do on this store (`world/case`): FIFOs, an mtime put back, and
    #: whether it keeps permission bits at all — `"modes": False` for storage without them (an
    #: object store): the gate then never sets a mode, compares none, expects `Node.mode` to be
    #: None everywhere, and the kit never calls `chmod` nor claims `modes`.
    world = {"fifos": False, "restore_mtime": True}
    #: The size from which a write's `before` is left out (the diff basis), when the backend
    #: has one of its own: declared in `initialize`, and the gate predicts with it. None: the
    #: gate's (`world/case` gives it).
    diff_limit = None

    def node(self, key):
        """The `Node` at `key`, or None (also when a parent is not a directory)."""
        raise NotImplementedError

    def read(self, key):
        """The bytes of the file at `key`."""
        raise NotImplementedError

    def names(self, key):
        """The names in the directory at `key`."""
        raise NotImplementedError

    def publish(self, key, data, expect):
        """Puts `data` at `key` in one step, if what is there matches `expect` (`ANY`: a file may
        be there or not; `ABSENT`: nothing may be there; or the version the file must still be
        at) — a directory at `key` never matches —; else raises `Conflict`. A replaced file keeps
        its mode, a new one is 0600; the parent directory exists. Returns `(version, previous)`:
        the new version and the bytes it replaced (None when it created the file)."""
        raise NotImplementedError

    def make_dir(self, key):
        """A directory at `key` (mode 0755); its parent exists, nothing is at `key`."""
        raise NotImplementedError

    def remove(self, key):
        """Removes the file or the whole directory at `key` (world, and undoing parents)."""
        raise NotImplementedError

    def chmod(self, key, mode):
        """Sets the permission bits of what is at `key` (world)."""
        raise NotImplementedError

    # The namespace operations (optional: a store that implements both claims `namespace`).

    def unlink(self, key, expect):
        """Removes the file, or the empty directory, at `key` in one step, if it is at version
        `expect` (`ANY`: whatever version); else raises `Conflict` (also when nothing is there,
        or a directory has entries). The parent's version changes."""
        raise NotImplementedError

    def move(self, src, dst, expect_src, expect_dst):
        """Moves what is at `src` (a file, or a directory with everything in it) to `dst` in one
        step, if `src` is at version `expect_src` (`ANY`: whatever version) and `dst` is
        `ABSENT` or a file at version `expect_dst`; else raises `Conflict`. `dst`'s parent
        exists. A moved file gets a version never issued before; what is inside a moved
        directory keeps its versions; both parents' versions change. Returns the moved
        entry's version."""
        raise NotImplementedError


_cases = itertools.count(1)

# One lock per store: the mutations' decisions (see `Store`).
_decision_locks, _decision_locks_guard = {}, threading.Lock()


def _decisions(store):
    with _decision_locks_guard:
        return _decision_locks.setdefault(id(store), threading.Lock())


def _deciding(method):
    """Runs a mutation holding its store's decision lock, released while a checkpoint waits
    (the client may change the world there, through this store)."""

    @functools.wraps(method)
    def run(self, p, checkpoint=lambda point: False):
        lock = self._lock

        def at(point):
            lock.release()
            try:
                return checkpoint(point)
            finally:
                lock.acquire()

        with lock:
            return method(self, p, at)

    return run


#: How many times a read looks again when what it read changed while it read.
_READ_TRIES = 64


def _maker_gone(root):
    """Whether the process whose number a case root carries (`/seam-kit/case-PID-N`) is gone."""
    try:
        pid = int(root.rsplit("/", 1)[-1].split("-")[1])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


class TreeBackend:
    """The contract over a `Store`, for one connection. `claims` are the capabilities claimed
    (the kit supports "read_bytes", "cancel_points" and "modes"). Its calls may run at once
    (`concurrent`): the protocol layer never makes one wait for another."""

    concurrent = True

    def __init__(self, store, name, claims=("read_bytes", "cancel_points", "modes")):
        self.store, self.name, self.claims = store, name, list(claims)
        self._lock = _decisions(store)
        # A store without permission bits cannot keep them for anyone.
        if not store.world.get("modes", True) and "modes" in self.claims:
            self.claims.remove("modes")
        # A store that can unlink and move gets the namespace operations.
        if (type(store).unlink is not Store.unlink and type(store).move is not Store.move
                and "namespace" not in self.claims):
            self.claims.append("namespace")
        self.cwd, self.case, self.made, self.adopted = "/", None, None, None
        self.diff_limit = store.diff_limit or 10 * 1024 * 1024

    def describe(self):
        limits = {"max_line": 1 << 20, "max_payload": 64 << 20, "stream_window": WINDOW}
        if self.store.diff_limit is not None:
            limits["diff_basis_max_bytes"] = self.store.diff_limit
        return {"protocol": PROTOCOL, "server": self.name, "capabilities": self.claims,
                "sandbox_mode": None, "cwd": self.cwd, "test_control": True,
                "volatile": self.store.volatile, "limits": limits}

    def close(self):
        """The connection ended: the case it made goes, and so does a case it reopened whose
        maker is gone (a killed process's, reopened by the crash property's fresh process)."""
        for root in (self.made, self.adopted):
            if root is None or (root == self.adopted and not _maker_gone(root)):
                continue
            try:
                with self._lock:
                    self.store.remove(root)
            except (FsError, KeyError, OSError):
                pass

    # --- facts ---

    def _parents_ok(self, key):
        """Whether every parent of `key` is a directory (missing ones count as fine)."""
        parts = [c for c in key.split("/") if c]
        for i in range(1, len(parts)):
            n = self.store.node("/" + "/".join(parts[:i]))
            if n is None:
                return True
            if n.kind != "dir":
                return False
        return True

    def _node(self, key):
        return self.store.node(key) if self._parents_ok(key) else None

    @staticmethod
    def _target(key, display):
        return {"key": key, "display_path": display, "process_path": key,
                "file_url": file_url(key)}

    @staticmethod
    def _info(n):
        kind = {"dir": "directory"}.get(n.kind, n.kind)
        return {"version": n.version, "kind": kind, "size": n.size if n.kind == "file" else None}

    def resolve(self, p):
        display = display_path(p["path"], p.get("cwd") or self.cwd, "resolve")
        with self._lock:  # its parents, looked at together
            if not self._parents_ok(display):
                raise fail("parent_not_directory", verb="resolve", path=display)
        return self._target(display, display)

    def stat(self, p):
        n = self._node(p["target"]["key"])
        return None if n is None else self._info(n)

    def lstat(self, p):
        n = self._node(display_path(p["path"], p.get("cwd") or self.cwd, "lstat"))
        return None if n is None else self._info(n)

    def _file(self, key, display, verb):
        """The node and bytes of the file at `key`, as they were at one moment: read between two
        looks that agree (a version is never reused), again while a change gets in between."""
        n = self._node(key)
        for _ in range(_READ_TRIES):
            if n is None:
                raise fail("not_found", verb=verb, path=display)
            if n.kind != "file":
                raise fail("not_regular_file", verb=verb, path=display)
            try:
                data = self.store.read(key)
            except (KeyError, FileNotFoundError):
                data = None  # gone meanwhile
            again = self._node(key)
            if data is not None and again == n:
                return n, data
            n = again
        with self._lock:  # it kept changing: read it with no mutation under way
            n = self._node(key)
            if n is None:
                raise fail("not_found", verb=verb, path=display)
            if n.kind != "file":
                raise fail("not_regular_file", verb=verb, path=display)
            return n, self.store.read(key)

    def read_text(self, p):
        t = p["target"]
        return decode(self._file(t["key"], t["display_path"], "read")[1], "read", t["display_path"])

    def read_bytes(self, p):
        (key, display), limit = (p["target"]["key"], p["target"]["display_path"]), p["max_bytes"]
        n = self._node(key)
        if n is not None and n.kind == "file" and n.size > limit:
            raise fail("too_large", path=display, size=n.size, max=limit)
        data = self._file(key, display, "read")[1]
        if len(data) > limit:
            raise fail("grew_past_cap", path=display, max=limit)
        return data

    def list_dir(self, p):
        key, display = p["target"]["key"], p["target"]["display_path"]
        n = self._node(key)
        for _ in range(_READ_TRIES):
            if n is None:
                raise fail("not_found", verb="list", path=display)
            if n.kind != "dir":
                raise fail("not_a_directory", path=display)
            entries = self._entries(key, display)
            again = self._node(key)
            if again == n:  # no entry came or went while it listed (its version says so)
                return entries
            n = again
        with self._lock:  # it kept changing: list it with no mutation under way
            return self._entries(key, display)

    def _entries(self, key, display):
        entries = []
        for name in sorted(self.store.names(key), key=str.encode):
            child, shown = key.rstrip("/") + "/" + name, display.rstrip("/") + "/" + name
            c = self.store.node(child)
            entry = {"name": name, "kind": "other", "version": None, "size": None}
            if c is not None:
                entry = dict(self._info(c), name=name)
            entries.append(dict(entry, target=self._target(child, shown)))
        return entries

    # --- mutations ---

    def _before(self, old, content):
        if old is None or len(old) >= self.diff_limit or len(content) >= self.diff_limit:
            return None
        try:
            return lf(decode(old, "write", ""))
        except FsError:
            return None

    def _make_parents(self, key, display):
        """Makes the missing parents of `key`; returns them, outermost first."""
        parts, made = [c for c in key.split("/") if c], []
        for i in range(1, len(parts)):
            d = "/" + "/".join(parts[:i])
            n = self.store.node(d)
            if n is None:
                self.store.make_dir(d)
                made.append(d)
            elif n.kind != "dir":
                self._unmake(made)
                raise fail("parent_not_directory", verb="write", path=display)
        return made

    def _unmake(self, made):
        for d in reversed(made):
            self.store.remove(d)

    @_deciding
    def write_text(self, p, checkpoint):
        key, display = p["target"]["key"], p["target"]["display_path"]
        content = p["content"]
        guard = p.get("expected") or {}
        n = self._node(key)
        if n is not None and n.kind != "file":
            raise fail("not_regular_file", verb="write", path=display)
        if guard.get("create_if_absent") and n is not None:
            raise fail("exists_not_observed", path=display)
        want = guard.get("replace_if_version")
        if want is not None and n is None:
            raise fail("no_longer_exists", path=display)
        if want is not None and n.version != want:
            raise fail("changed_since_read", verb="write", path=display)
        if checkpoint("before_stage"):
            raise fail("aborted", verb="write")
        made = [] if n is not None else self._make_parents(key, display)
        if checkpoint("staged"):
            self._unmake(made)
            raise fail("aborted", verb="write")
        expect = ABSENT if guard.get("create_if_absent") else (want if want is not None else ANY)
        try:
            version, previous = self.store.publish(key, content, expect)
        except Conflict:
            self._unmake(made)
            now = self._node(key)
            if now is not None and now.kind != "file":
                raise fail("not_regular_file", verb="write", path=display) from None
            if expect is ABSENT:
                raise fail("exists_not_observed", path=display) from None
            if now is None:
                raise fail("no_longer_exists", path=display) from None
            raise fail("changed_since_read", verb="write", path=display) from None
        checkpoint("committed")
        before = self._before(previous, content)
        text = lf(content.decode("utf-8"))
        return {"operation": "create" if previous is None else "update", "version": version,
                "before": None if before is None else before.encode(), "after": text.encode()}

    @_deciding
    def edit_text(self, p, checkpoint):
        key, display = p["target"]["key"], p["target"]["display_path"]
        old, new = p["old_string"].decode("utf-8"), p["new_string"].decode("utf-8")
        guard = p.get("expected")
        # Made again on what is there now when someone changed the file meanwhile (unguarded
        # only; a few times, then stale rather than spin).
        for _ in range(8):
            n = self._node(key)
            if n is None:
                raise fail("changed_since_read", verb="edit", path=display)
            if n.kind != "file":
                raise fail("not_regular_file", verb="edit", path=display)
            if guard is not None and n.version != guard:
                raise fail("changed_since_read", verb="edit", path=display)
            data, before, after = literal_edit(self.store.read(key), old, new,
                                               bool(p.get("replace_all")), display)
            if checkpoint("before_stage") or checkpoint("staged"):
                raise fail("aborted", verb="edit")
            try:
                version, _ = self.store.publish(key, data, n.version)
            except Conflict:
                if guard is not None:
                    break
                continue
            checkpoint("committed")
            return {"version": version, "before": before.encode(), "after": after.encode()}
        raise fail("changed_since_read", verb="edit", path=display)

    # --- the namespace operations (`seam::FileSystem::{create_dir, remove, rename}`) ---

    def _walk(self, display):
        """The first thing wrong on the way to `display`'s parent, in walking order: "missing"
        (a parent that does not exist), "file" (one that is not a directory), or None."""
        parts = [c for c in display.split("/") if c]
        for i in range(1, len(parts)):
            n = self.store.node("/" + "/".join(parts[:i]))
            if n is None:
                return "missing"
            if n.kind != "dir":
                return "file"
        return None

    @staticmethod
    def _kind(n):
        return {"dir": "directory"}.get(n.kind, n.kind)

    @_deciding
    def create_dir(self, p, checkpoint=lambda point: False):
        d = display_path(p["path"], p.get("cwd") or self.cwd, "mkdir")
        request = p.get("request") or {}
        parts = [c for c in d.split("/") if c]
        missing = []
        for i in range(1, len(parts)):
            key = "/" + "/".join(parts[:i])
            n = self.store.node(key)
            if n is None:
                missing.append(key)
            elif n.kind != "dir" or missing:
                raise fail("parent_not_directory", verb="mkdir", path=d)
        if missing and not request.get("parents"):
            raise fail("parent_missing", verb="mkdir", path=d)
        n = self.store.node(d) if not missing else None
        if n is not None:
            if n.kind != "dir":
                raise fail("not_directory_in_the_way", path=d)
            if not request.get("exist_ok"):
                raise fail("directory_exists", path=d)
            return {"created": False, "version": n.version}
        if checkpoint("before_stage"):
            raise fail("aborted", verb="mkdir")
        for key in missing + [d]:
            self.store.make_dir(key)
        version = self.store.node(d).version  # before `committed` lets other changes in
        checkpoint("committed")
        return {"created": True, "version": version}

    @_deciding
    def remove(self, p, checkpoint=lambda point: False):
        d = display_path(p["path"], p.get("cwd") or self.cwd, "remove")
        request = p.get("request") or {}
        guard = request.get("if_version")

        def absent():
            if guard is not None:
                return fail("changed_since_read", verb="remove", path=d)
            return fail("not_found", verb="remove", path=d)

        n = self._node(d)
        if n is None:
            raise absent()
        if guard is not None and n.version != guard:
            raise fail("changed_since_read", verb="remove", path=d)
        if n.kind == "dir":
            if not request.get("directory"):
                raise fail("is_a_directory", verb="remove", path=d)
            if self.store.names(d):
                raise fail("directory_not_empty", path=d)
        if checkpoint("before_stage"):
            raise fail("aborted", verb="remove")
        try:
            self.store.unlink(d, guard if guard is not None else ANY)
        except Conflict:
            now = self._node(d)
            if now is None:
                raise absent() from None
            if now.kind == "dir" and self.store.names(d):
                raise fail("directory_not_empty", path=d) from None
            raise fail("changed_since_read", verb="remove", path=d) from None
        checkpoint("committed")
        return {"kind": self._kind(n)}

    @_deciding
    def rename(self, p, checkpoint=lambda point: False):
        cwd = p.get("cwd") or self.cwd
        f = display_path(p["from"], cwd, "rename")
        t = display_path(p["to"], cwd, "rename")
        request = p.get("request") or {}
        guard, replace = request.get("if_version"), request.get("replace")
        n = self._node(f)
        if n is None:
            if guard is not None:
                raise fail("changed_since_read", verb="rename", path=f)
            raise fail("not_found", verb="rename", path=f)
        if guard is not None and n.version != guard:
            raise fail("changed_since_read", verb="rename", path=f)
        wrong = self._walk(t)
        if wrong == "missing":
            raise fail("parent_missing", verb="rename", path=t)
        if wrong == "file":
            raise fail("parent_not_directory", verb="rename", path=t)
        if t == f or t.startswith(f.rstrip("/") + "/"):
            # One placeholder in the catalogue stands for both: the source, then the destination.
            template = CATALOGUE["messages"]["rename_into_itself"]
            raise FsError(template["code"],
                          template["template"].replace("{path}", f, 1).replace("{path}", t, 1))
        there = self.store.node(t)
        if there is not None and replace is None:
            raise fail("destination_exists", path=t)
        if there is not None and there.kind == "dir":
            raise fail("is_a_directory", verb="rename", path=t)
        if there is not None and n.kind == "dir":
            raise fail("is_a_directory", verb="rename", path=f)
        if replace is not None and (there is None or there.version != replace):
            raise fail("changed_since_read", verb="rename", path=t)
        if checkpoint("before_stage"):
            raise fail("aborted", verb="rename")
        try:
            version = self.store.move(f, t, guard if guard is not None else ANY,
                                      replace if replace is not None else ABSENT)
        except Conflict:
            now = self._node(f)
            # The source gone meanwhile: as if it had gone before the call (nothing to move; a
            # guarded rename's file changed since it was read).
            if now is None and guard is None:
                raise fail("not_found", verb="rename", path=f) from None
            if now is None or (guard is not None and now.version != guard):
                raise fail("changed_since_read", verb="rename", path=f) from None
            if replace is None and self.store.node(t) is not None:
                raise fail("destination_exists", path=t) from None
            raise fail("changed_since_read", verb="rename", path=t) from None
        checkpoint("committed")
        return {"kind": self._kind(n), "replaced": there is not None, "version": version}

    # --- the test-control world ---

    def world(self, method, p):
        with self._lock:  # between the mutations' decisions, never inside one
            return self._world(method, p)

    def _world(self, method, p):
        store = self.store
        if method in ("world/case", "world/reopen"):
            if method == "world/case":
                # The process's number in the name: processes sharing a store never meet in
                # one case, and one left by an earlier process of the same number is skipped.
                if store.node("/seam-kit") is None:
                    store.make_dir("/seam-kit")
                root = f"/seam-kit/case-{os.getpid()}-{next(_cases)}"
                while store.node(root) is not None:
                    root = f"/seam-kit/case-{os.getpid()}-{next(_cases)}"
                store.make_dir(root)
                self.made = root
            else:
                root = lexical(p.get("root") or "/")
                if not root.startswith("/seam-kit/case-") or store.node(root) is None:
                    raise ProtocolError(-32602, f"world/reopen {root!r}: not a case of this store")
                self.adopted = root
            self.case = self.cwd = root
            if store.diff_limit is None:
                self.diff_limit = p.get("diff_basis_max_bytes", self.diff_limit)
            return dict(self.describe(), root=root, world=store.world)
        if self.case is None:
            raise ProtocolError(-32602, f"{method} needs world/case first")
        if method == "world/snapshot":
            return {"entries": self._snapshot()}
        if method == "world/entry_mode":
            n = store.node(lexical(p["path"]))
            if n is None:
                return None
            said = {"is_dir": n.kind == "dir"}
            if n.mode is not None:
                said["mode"] = n.mode
            return said
        if method != "world/apply":
            raise ProtocolError(-32601, f"unknown method {method}")
        key, effect = lexical(self.case + "/" + p["path"]), p["effect"]
        if effect in ("create_file", "create_dir"):
            self._make_parents(key, key)
        keeps_modes = store.world.get("modes", True)
        if effect == "create_file":
            if store.node(key) is not None:
                store.remove(key)
            store.publish(key, p["bytes"], ABSENT)
            if keeps_modes:
                store.chmod(key, p["mode"])
        elif effect == "rewrite_file":
            store.publish(key, p["bytes"], ANY)
        elif effect == "create_dir":
            store.make_dir(key)
        elif effect == "remove":
            store.remove(key)
        elif effect == "chmod" and keeps_modes:
            store.chmod(key, p["mode"])
        else:
            raise ProtocolError(-32602, f"this store cannot {effect}")
        return {}

    def _snapshot(self):
        entries, todo = [], [self.case]
        while todo:
            d = todo.pop()
            for name in self.store.names(d):
                key = d + "/" + name
                n = self.store.node(key)
                rel = key[len(self.case) + 1:]
                if n is None:
                    continue
                if n.kind == "dir":
                    entries.append([rel, {"kind": "dir", "mode": n.mode}])
                    todo.append(key)
                elif n.kind == "file":
                    entries.append([rel, {"kind": "file", "bytes": self.store.read(key),
                                          "mode": n.mode}])
                else:
                    entries.append([rel, {"kind": "other"}])
        entries.sort(key=lambda e: e[0])
        return entries
