"""The seam wire protocol, version 1 (docs/protocol.md), for one backend object per connection:
framing, the handshake, dispatch, coded error answers, streams with credit, checkpoints both ways,
`$/cancel` (also before its request), and the gate's offer to serve a whole run from one process.

A backend here is any object with the methods `TreeBackend` has (`describe`, `resolve`, `stat`,
`lstat`, `read_text`, `read_bytes`, `list_dir`, `write_text`, `edit_text`, `world`, `close`, and
— when it claims `namespace` — `create_dir`, `remove`, `rename`).
Payload references in requests arrive as `bytes`; any `bytes` in an answer is sent as a payload.
"""

import collections
import json
import os
import queue
import signal
import socket
import sys
import threading
import time
import traceback

from .contract import FsError, fail

PROTOCOL = 1
WINDOW = 8
CHUNK_CHARS = 16 * 1024

# The contract's verb of each method (its messages name it: "write aborted").
VERBS = {"resolve": "resolve", "stat": "stat", "lstat": "lstat", "read_text": "read",
         "stream_text": "read", "read_bytes": "read", "list_dir": "list", "write_text": "write",
         "edit_text": "edit", "create_dir": "mkdir", "remove": "remove", "rename": "rename"}


class ProtocolError(Exception):
    """A JSON-RPC error that is not the contract's (bad parameters, unknown method…)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def read_frame(stream):
    line = stream.readline()
    if not line:
        return None
    message = json.loads(line)
    segments = [stream.read(n) for n in message.pop("payload", [])]
    return message, segments


def write_frame(stream, message, segments=()):
    if segments:
        message["payload"] = [len(s) for s in segments]
    stream.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    for s in segments:
        stream.write(s)
    stream.flush()


def _take(value, segments):
    """Params with every payload reference replaced by its bytes."""
    if isinstance(value, dict):
        if set(value) == {"$payload"}:
            return segments[value["$payload"]]
        return {k: _take(v, segments) for k, v in value.items()}
    if isinstance(value, list):
        return [_take(v, segments) for v in value]
    return value


def _attach(value, out):
    """An answer with every `bytes` value moved to a payload segment."""
    if isinstance(value, (bytes, bytearray)):
        out.append(bytes(value))
        return {"$payload": len(out) - 1}
    if isinstance(value, dict):
        return {k: _attach(v, out) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_attach(v, out) for v in value]
    return value


class _Stream:
    """The flow-control state of one `stream_text` in flight: credit granted, and whether it was
    cancelled (or its connection ended)."""

    def __init__(self):
        self.credit, self.cancelled = WINDOW, False


class Server:
    """One connection. Its reader (the thread that calls `run`) reads every frame in order: it
    answers `initialize` and carries out `world/*` requests itself, in the order they arrive,
    and hands the contract calls to other threads. A backend whose `concurrent` attribute is
    true has each call taken at once by a thread of its own (one that finished its last call, or
    a new one) — a read is answered while a write waits at a checkpoint or publishes, as
    docs/protocol.md section 2 allows; any other backend gets its calls one at a time, in order. Answers to the kit's own checkpoint requests, stream credit and `$/cancel`
    are routed to the call waiting for them. Frames are written whole, one at a time."""

    def __init__(self, backend, inp, out, run_offer=None):
        self.backend, self.inp, self.out = backend, inp, out
        self.initialized = False
        self.asked = 0
        # `$/cancel`s for requests not read yet: such a request is answered FS_ABORTED, doing
        # nothing (a client whose call was cancelled before it sent it says so first).
        self.early = collections.deque(maxlen=64)
        # Called with the socket path the gate offers in `initialize`; True when it listens.
        self.run_offer = run_offer
        self._lock = threading.Lock()  # the tables below, and `asked`
        self._writing = threading.Lock()  # one frame at a time on `out`
        self._changed = threading.Condition(self._lock)
        self._answers = {}  # checkpoint request id -> its answer (None until it comes)
        self._streams = {}  # request id -> _Stream
        # A concurrent backend's calls go to its threads through `_calls`. A thread that finished
        # a call waits there for the next one (`_idle` counts those not spoken for yet), and a
        # call that finds none gets a new thread — so no call ever waits for another, and a run of
        # calls does not start a thread each. None tells a thread the connection ended.
        self._calls = queue.SimpleQueue()
        self._threads = []
        self._idle = 0
        self._closed = False
        # A backend that does not say `concurrent = True` is served by one thread, every
        # request in the order it came — `world/*` too, also while a call waits at a checkpoint.
        self._serial = not getattr(backend, "concurrent", False)
        self._queue = collections.deque()  # (serial) requests not served yet
        self._worker = None

    def reply(self, rid, result=None, error=None):
        message, segments = {"jsonrpc": "2.0", "id": rid}, []
        if error is not None:
            message["error"] = error
        else:
            message["result"] = _attach(result, segments)
        self._write(message, segments)

    def notify(self, method, params, segments=()):
        self._write({"jsonrpc": "2.0", "method": method, "params": params}, list(segments))

    def _write(self, message, segments=()):
        with self._writing:
            try:
                write_frame(self.out, message, segments)
            except (OSError, ValueError):
                pass  # the peer went away (or the stream was closed): nobody to answer

    def ask(self, rid, point, verb, display):
        """Shows a checkpoint to the client's probe and waits for its answer: cancel there or
        not. A checkpoint left unanswered for a minute, or whose connection ended, cancels."""
        with self._lock:
            self.asked += 1
            sid = f"s{self.asked}"
            self._answers[sid] = None
        self._write({"jsonrpc": "2.0", "id": sid, "method": "checkpoint",
                     "params": {"id": rid, "point": point, "verb": verb,
                                "display_path": display, "staging": []}})
        deadline = time.monotonic() + 60
        with self._lock:
            while self._answers[sid] is None and not self._closed:
                # A one-at-a-time backend's world changes come meanwhile, on this thread.
                world = next((f for f in self._queue
                              if str(f[0].get("method", "")).startswith("world/")), None)
                if world is not None:
                    self._queue.remove(world)
                    self._lock.release()
                    try:
                        self.handle(world)
                    finally:
                        self._lock.acquire()
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            answer = self._answers.pop(sid)
        if answer is None:
            return True
        return bool((answer.get("result") or {}).get("cancel", True))

    def stream(self, rid, p):
        text = self.backend.read_text(p)
        state = _Stream()
        with self._lock:
            self._streams[rid] = state
            if rid in self.early:  # cancelled while its text was being read
                self.early.remove(rid)
                state.cancelled = True
            state.cancelled = state.cancelled or self._closed  # or its client left meanwhile
        try:
            self.notify("stream/start", {"id": rid})
            for i in range(0, len(text), CHUNK_CHARS):
                with self._lock:
                    self._changed.wait_for(lambda: state.credit > 0 or state.cancelled)
                    if state.cancelled:
                        raise fail("aborted", verb="read")
                    state.credit -= 1
                self.notify("stream/chunk", {"id": rid}, [text[i:i + CHUNK_CHARS].encode()])
            return {"end": True}
        finally:
            with self._lock:
                del self._streams[rid]

    def handle(self, frame, answering=None):
        """Answers one request (on the calling thread). `answering` is called once, just before
        the answer is written."""
        message, segments = frame
        method, rid = message.get("method"), message.get("id")

        def reply(*args, **kwargs):
            nonlocal answering
            if answering is not None:
                answering, then = None, answering
                then()
            self.reply(*args, **kwargs)

        try:
            p = _take(message.get("params") or {}, segments)
            if method == "initialize":
                if p.get("protocol") != PROTOCOL:
                    raise ProtocolError(-32602, f"protocol {p.get('protocol')} is not spoken here")
                self.initialized = True
                result = self.backend.describe()
                if self.run_offer is not None and isinstance(p.get("listen"), str):
                    result["listening"] = self.run_offer(p["listen"])
            elif not self.initialized:
                raise ProtocolError(-32002, "initialize first")
            elif method.startswith("world/"):
                result = self.backend.world(method, p)
            elif rid in self.early and method in VERBS:
                self.early.remove(rid)
                raise fail("aborted", verb=VERBS[method])
            elif method == "stream_text":
                result = self.stream(rid, p)
            elif method in ("write_text", "edit_text"):
                verb = VERBS[method]
                display = (p.get("target") or {}).get("display_path", "")
                wants = bool(p.get("checkpoints"))
                checkpoint = lambda point: wants and self.ask(rid, point, verb, display)  # noqa: E731
                result = getattr(self.backend, method)(p, checkpoint)
            elif method in ("create_dir", "remove", "rename") and "namespace" in getattr(
                self.backend, "claims", ()
            ):
                verb = VERBS[method]
                display = p.get("path") or p.get("from") or ""
                wants = bool(p.get("checkpoints"))
                checkpoint = lambda point: wants and self.ask(rid, point, verb, display)  # noqa: E731
                result = getattr(self.backend, method)(p, checkpoint)
            elif method in ("resolve", "stat", "lstat", "list_dir", "read_text", "read_bytes"):
                result = getattr(self.backend, method)(p)
                if method == "read_text":
                    result = {"text": result.encode()}
                elif method == "read_bytes":
                    result = {"bytes": result}
            else:
                raise ProtocolError(-32601, f"unknown method {method}")
            reply(rid, result)
        except FsError as e:
            reply(rid, error={"code": -32010, "message": e.message, "data": {"fs": e.code}})
        except ProtocolError as e:
            reply(rid, error={"code": e.code, "message": str(e)})
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            reply(rid, error={"code": -32602, "message": f"bad parameters: {e!r}"})
        except OSError as e:
            # The storage failed in a way the backend did not name: coded, never a dead process.
            reply(rid, error={"code": -32010, "message": f"{VERBS.get(method, method)}: {e}",
                                   "data": {"fs": "FS_IO_ERROR"}})
        except Exception as e:  # noqa: BLE001 — a bug in the backend: answered, and said on stderr
            traceback.print_exc(file=sys.stderr)
            reply(rid, error={"code": -32603, "message": f"internal error: {e!r}"})

    def _take_calls(self, frame):
        """A concurrent backend's thread: `frame`, then each call given to it, until the end. It
        counts itself free just before it writes an answer, so the client's next call, sent when
        the answer arrives, finds it free (and waits at most for that write to end)."""
        while frame is not None:
            self.handle(frame, answering=self._free)
            frame = self._calls.get()

    def _free(self):
        with self._lock:
            self._idle += 1

    def _in_order(self):
        """A one-at-a-time backend's thread: every request, in the order it came."""
        while True:
            with self._lock:
                self._changed.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return
                frame = self._queue.popleft()
            self.handle(frame)

    def _route(self, frame):
        """What the reader does with one frame, in the order frames arrive."""
        message = frame[0]
        method, rid = message.get("method"), message.get("id")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method is None:
            if rid is not None and rid in self._answers:  # the client's answer to a checkpoint
                with self._lock:
                    if rid in self._answers:
                        self._answers[rid] = message
                        self._changed.notify_all()
            elif "result" not in message and "error" not in message:
                self.reply(rid, error={"code": -32600, "message": "a request needs a method"})
            return
        if rid is None:  # a notification
            with self._lock:
                state = self._streams.get(params.get("id"))
                if method == "stream/credit" and state is not None:
                    state.credit += params.get("chunks", 0)
                    self._changed.notify_all()
                elif method == "$/cancel" and state is not None:
                    state.cancelled = True
                    self._changed.notify_all()
                elif method == "$/cancel":
                    # Its request follows, or it runs already (a mutation is cancelled at its
                    # checkpoints, which the client answers).
                    self.early.append(params.get("id"))
            return
        if self._serial:
            with self._lock:
                self._queue.append(frame)
                self._changed.notify_all()
                if self._worker is None:
                    self._worker = threading.Thread(target=self._in_order, daemon=True)
                    self._worker.start()
            return
        if method == "initialize" or not self.initialized or str(method).startswith("world/"):
            self.handle(frame)  # in order, before anything read after it
            return
        if rid in self.early and method in VERBS:
            self.handle(frame)  # answered aborted at once, in order
            return
        with self._lock:
            free = self._idle > 0
            if free:
                self._idle -= 1  # that thread's next call is this one
            else:
                thread = threading.Thread(target=self._take_calls, args=(frame,), daemon=True)
                self._threads.append(thread)
        if free:
            self._calls.put(frame)
        else:
            thread.start()

    def run(self):
        try:
            while True:
                try:
                    frame = read_frame(self.inp)
                except ValueError as e:
                    self.reply(None, error={"code": -32700, "message": f"parse error: {e}"})
                    continue
                if frame is None:
                    return
                self._route(frame)
        finally:
            # The connection ended: waiting checkpoints cancel, streams stop, and the calls in
            # flight finish before the backend is closed.
            with self._lock:
                self._closed = True
                for state in self._streams.values():
                    state.cancelled = True
                self._changed.notify_all()
                calls = list(self._threads) + [self._worker] * (self._worker is not None)
            for _ in self._threads:
                self._calls.put(None)
            for call in calls:
                call.join()


def _connection(sock, make_backend):
    backend = make_backend()
    try:
        with sock, sock.makefile("rb") as inp, sock.makefile("wb") as out:
            Server(backend, inp, out).run()
    except OSError:
        pass  # the peer went away mid-answer
    finally:
        backend.close()


def _unlink_if_there(path):
    """Removes a socket this process listened on, if it is still there: whoever offered the
    place (the gate, stopping an interrupted run) may have removed it already."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _listen(path):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)  # an existing path is refused, never taken over
        os.chmod(path, 0o600)
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def _accept_forever(listener, make_backend, served):
    while True:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        served[0] += 1  # counted as it is accepted, before anything can stop the process
        threading.Thread(target=_connection, args=(sock, make_backend), daemon=True).start()


def serve(make_backend, name="seam-kit", argv=None):
    """Runs an adapter process: `make_backend()` gives a fresh backend object per connection.

    Flags (from `argv`, default `sys.argv[1:]`): `--listen PATH` serves every connection on a
    Unix socket until stopped (`seam check --provider unix:PATH`); `--per-case` declines the
    gate's offer to serve the whole run from this process (it is taken otherwise). Without
    `--listen` it speaks on stdin and stdout (`seam check --provider exec:'…'`). With the
    environment variable SEAM_KIT_TRACE set, each process says on stderr when it starts. Returns
    the exit status."""
    args = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listeners, served = [], [0]
    path = None
    for i, a in enumerate(args):
        if a == "--listen" or a.startswith("--listen="):
            path = a[len("--listen="):] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            if path == "" or path.startswith("--"):
                print(f"{name}: --listen needs the path of a Unix socket", file=sys.stderr)
                return 2
            break
    if path is not None:
        try:
            listeners.append((_listen(path), path))
        except OSError as e:
            hint = " (remove it if no adapter listens there)" if os.path.exists(path) else ""
            print(f"{name}: cannot listen on {path}: {e.strerror}{hint}", file=sys.stderr)
            return 1
        print(f"{name}: listening on {path}", file=sys.stderr, flush=True)
        try:
            _accept_forever(listeners[0][0], make_backend, served)
        finally:
            listeners[0][0].close()
            _unlink_if_there(path)
            n = served[0]
            print(f"{name}: served {n} connection{'' if n == 1 else 's'} in process {os.getpid()}",
                  file=sys.stderr, flush=True)
        return 0

    def take_run(path):
        try:
            listener = _listen(path)
        except OSError:
            return False
        listeners.append((listener, path))
        threading.Thread(target=_accept_forever, args=(listener, make_backend, served),
                         daemon=True).start()
        return True

    if os.environ.get("SEAM_KIT_TRACE"):
        print(f"{name}: process {os.getpid()} on stdin and stdout", file=sys.stderr, flush=True)
    backend = make_backend()
    try:
        Server(backend, sys.stdin.buffer, sys.stdout.buffer,
               None if "--per-case" in args else take_run).run()
    finally:
        if listeners:  # it served the run: say how many connections, first (it may be killed)
            n = served[0]
            print(f"{name}: served {n} connection{'' if n == 1 else 's'} in process {os.getpid()}",
                  file=sys.stderr, flush=True)
        backend.close()
        for listener, path in listeners:
            listener.close()
            _unlink_if_there(path)
    return 0
