'use strict';
// The seam wire protocol, version 1 (docs/protocol.md), for one backend object per connection:
// framing, the handshake, dispatch, coded error answers, streams with credit, checkpoints both
// ways, `$/cancel` (also before its request), and the gate's offer to serve a whole run from one
// process. Payload references in requests arrive as Buffers; any Buffer in an answer is sent as a
// payload.

const fs = require('node:fs');
const net = require('node:net');
const { FsError, fail } = require('./contract');

const PROTOCOL = 1;
const WINDOW = 8;
const CHUNK_CHARS = 16 * 1024;
const VERBS = {
  resolve: 'resolve', stat: 'stat', lstat: 'lstat', read_text: 'read', stream_text: 'read',
  read_bytes: 'read', list_dir: 'list', write_text: 'write', edit_text: 'edit',
  create_dir: 'mkdir', remove: 'remove', rename: 'rename',
};

/** A JSON-RPC error that is not the contract's (bad parameters, unknown method…). */
class ProtocolError extends Error {
  constructor(code, message) {
    super(message);
    this.rpcCode = code;
  }
}

/** Frames read from a byte stream: a JSON line, then its payload segments. */
class FrameReader {
  constructor(stream) {
    this.buffer = Buffer.alloc(0);
    this.ended = false;
    this.waiting = null;
    stream.on('data', (chunk) => { this.buffer = Buffer.concat([this.buffer, chunk]); this.wake(); });
    stream.on('end', () => { this.ended = true; this.wake(); });
    stream.on('error', () => { this.ended = true; this.wake(); });
  }

  wake() {
    const w = this.waiting;
    this.waiting = null;
    if (w) w();
  }

  /** The next frame, `[message, segments]`, or null at the end of the input. */
  async next() {
    for (;;) {
      const nl = this.buffer.indexOf(10);
      if (nl !== -1) {
        const message = JSON.parse(this.buffer.subarray(0, nl).toString('utf8'));
        const sizes = message.payload || [];
        const need = nl + 1 + sizes.reduce((a, b) => a + b, 0);
        if (this.buffer.length >= need) {
          delete message.payload;
          const segments = [];
          let at = nl + 1;
          for (const n of sizes) { segments.push(this.buffer.subarray(at, at + n)); at += n; }
          this.buffer = this.buffer.subarray(need);
          return [message, segments];
        }
      }
      if (this.ended) return null;
      await new Promise((resolve) => { this.waiting = resolve; });
    }
  }
}

function writeFrame(out, message, segments = []) {
  if (segments.length) message.payload = segments.map((s) => s.length);
  out.write(Buffer.concat([Buffer.from(JSON.stringify(message) + '\n'), ...segments]));
}

function take(value, segments) {
  if (Array.isArray(value)) return value.map((v) => take(v, segments));
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$payload') return segments[value.$payload];
    return Object.fromEntries(keys.map((k) => [k, take(value[k], segments)]));
  }
  return value;
}

function attach(value, out) {
  if (Buffer.isBuffer(value)) { out.push(value); return { $payload: out.length - 1 }; }
  if (Array.isArray(value)) return value.map((v) => attach(v, out));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, attach(v, out)]));
  }
  return value;
}

/**
 * One connection. Its reader (`run`) reads every frame in order: it answers `initialize` and
 * carries out `world/*` requests itself, in the order they arrive (each finished before the next
 * frame is read), and starts the contract calls without waiting for them. A backend whose
 * `concurrent` is true has every call started at once — a read is answered while a write waits
 * at a checkpoint or awaits its storage, as docs/protocol.md section 2 allows; any other backend
 * gets its calls one at a time, in order. Answers to the kit's own checkpoint requests, stream
 * credit and `$/cancel` are routed to the call waiting for them.
 */
class Server {
  constructor(backend, input, output, runOffer = null) {
    this.backend = backend;
    this.reader = new FrameReader(input);
    this.out = output;
    this.initialized = false;
    this.asked = 0;
    this.early = []; // `$/cancel`s for requests not read yet (the newest 64)
    this.runOffer = runOffer;
    this.answers = new Map(); // checkpoint request id -> the resolve of its waiting call
    this.streams = new Map(); // request id -> { credit, cancelled, wake }
    this.calls = new Set(); // the promises of the calls in flight
    this.closed = false;
    // A backend that does not say `concurrent: true` gets its calls one at a time, in the order
    // they came (the reader still serves `world/*` meanwhile).
    this.queue = backend.concurrent ? null : Promise.resolve();
  }

  reply(id, result, error) {
    const message = { jsonrpc: '2.0', id };
    const segments = [];
    if (error) message.error = error; else message.result = attach(result === undefined ? null : result, segments);
    this.write(message, segments);
  }

  write(message, segments = []) {
    if (this.out.destroyed || this.out.writableEnded) return; // nobody to answer
    writeFrame(this.out, message, segments);
  }

  remember(id) {
    this.early.push(id);
    if (this.early.length > 64) this.early.shift();
  }

  /**
   * Shows a checkpoint to the client's probe; true when it says cancel. A checkpoint left
   * unanswered for a minute, or whose connection ended, cancels.
   */
  ask(id, point, verb, display) {
    const sid = `s${++this.asked}`;
    return new Promise((resolve) => {
      if (this.closed) { resolve(true); return; }
      const timer = setTimeout(() => { this.answers.delete(sid); resolve(true); }, 60_000);
      this.answers.set(sid, (m) => {
        clearTimeout(timer);
        this.answers.delete(sid);
        resolve(m === null ? true : Boolean((m.result || {}).cancel ?? true));
      });
      this.write({ jsonrpc: '2.0', id: sid, method: 'checkpoint',
        params: { id, point, verb, display_path: display, staging: [] } });
    });
  }

  async stream(id, p) {
    const text = await this.backend.read_text(p);
    const state = { credit: WINDOW, cancelled: false, wake: null };
    const at = this.early.indexOf(id);
    if (at !== -1) { this.early.splice(at, 1); state.cancelled = true; } // while its text was read
    if (this.closed) state.cancelled = true;
    this.streams.set(id, state);
    try {
      this.write({ jsonrpc: '2.0', method: 'stream/start', params: { id } });
      for (let i = 0; i < text.length; i += CHUNK_CHARS) {
        while (state.credit <= 0 && !state.cancelled) {
          await new Promise((resolve) => { state.wake = resolve; });
        }
        if (state.cancelled) throw fail('aborted', { verb: 'read' });
        // Chunks end on a character: a surrogate pair is never split.
        let end = Math.min(i + CHUNK_CHARS, text.length);
        if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1])) end += 1;
        this.write({ jsonrpc: '2.0', method: 'stream/chunk', params: { id } },
          [Buffer.from(text.slice(i, end))]);
        i = end - CHUNK_CHARS;
        state.credit -= 1;
      }
      return { end: true };
    } finally {
      this.streams.delete(id);
    }
  }

  /** Answers one request. */
  async handle(frame) {
    const [message, segments] = frame;
    const { method, id } = message;
    try {
      const p = take(message.params || {}, segments);
      let result;
      if (method === 'initialize') {
        if (p.protocol !== PROTOCOL) throw new ProtocolError(-32602, `protocol ${p.protocol} is not spoken here`);
        this.initialized = true;
        result = this.backend.describe();
        if (this.runOffer && typeof p.listen === 'string') result.listening = await this.runOffer(p.listen);
      } else if (!this.initialized) {
        throw new ProtocolError(-32002, 'initialize first');
      } else if (method.startsWith('world/')) {
        result = await this.backend.world(method, p);
      } else if (this.early.includes(id) && VERBS[method]) {
        this.early.splice(this.early.indexOf(id), 1);
        throw fail('aborted', { verb: VERBS[method] });
      } else if (method === 'stream_text') {
        result = await this.stream(id, p);
      } else if (method === 'write_text' || method === 'edit_text') {
        const verb = VERBS[method];
        const display = (p.target || {}).display_path || '';
        const wants = Boolean(p.checkpoints);
        result = await this.backend[method](p, (point) => wants && this.ask(id, point, verb, display));
      } else if (['create_dir', 'remove', 'rename'].includes(method)
        && (this.backend.claims || []).includes('namespace')) {
        const verb = VERBS[method];
        const display = p.path || p.from || '';
        const wants = Boolean(p.checkpoints);
        result = await this.backend[method](p, (point) => wants && this.ask(id, point, verb, display));
      } else if (['resolve', 'stat', 'lstat', 'list_dir'].includes(method)) {
        result = await this.backend[method](p);
      } else if (method === 'read_text') {
        result = { text: Buffer.from(await this.backend.read_text(p)) };
      } else if (method === 'read_bytes') {
        result = { bytes: await this.backend.read_bytes(p) };
      } else {
        throw new ProtocolError(-32601, `unknown method ${method}`);
      }
      return this.reply(id, result);
    } catch (e) {
      if (e instanceof FsError) return this.reply(id, null, { code: -32010, message: e.message, data: { fs: e.code } });
      if (e instanceof ProtocolError) return this.reply(id, null, { code: e.rpcCode, message: e.message });
      return this.reply(id, null, { code: -32602, message: `bad parameters: ${e && e.message}` });
    }
  }

  /** What the reader does with one frame, in the order frames arrive. */
  async route(frame) {
    const [m] = frame;
    const { method, id } = m;
    const params = (m.params && typeof m.params === 'object') ? m.params : {};
    if (method === undefined) {
      const waiting = this.answers.get(id);
      if (waiting) waiting(m); // the client's answer to a checkpoint
      else if (m.result === undefined && m.error === undefined) {
        this.reply(id === undefined ? null : id, null, { code: -32600, message: 'a request needs a method' });
      }
      return;
    }
    if (id === undefined) { // a notification
      const state = this.streams.get(params.id);
      if (method === 'stream/credit' && state) state.credit += params.chunks || 0;
      else if (method === '$/cancel' && state) state.cancelled = true;
      // Its request follows, or it runs already (a mutation is cancelled at its checkpoints).
      else if (method === '$/cancel') this.remember(params.id);
      if (state && state.wake) { const w = state.wake; state.wake = null; w(); }
      return;
    }
    if (method === 'initialize' || !this.initialized || String(method).startsWith('world/')
      || (this.early.includes(id) && VERBS[method])) {
      await this.handle(frame); // in order, before anything read after it
      return;
    }
    const started = this.queue ? this.queue.then(() => this.handle(frame)) : this.handle(frame);
    if (this.queue) this.queue = started;
    const call = started.finally(() => this.calls.delete(call));
    this.calls.add(call);
  }

  async run() {
    try {
      for (;;) {
        let frame;
        try {
          frame = await this.reader.next();
        } catch (e) {
          this.reply(null, null, { code: -32700, message: `parse error: ${e.message}` });
          return;
        }
        if (frame === null) return;
        await this.route(frame);
      }
    } finally {
      // The connection ended: waiting checkpoints cancel, streams stop, and the calls in flight
      // finish before the backend is closed.
      this.closed = true;
      for (const waiting of [...this.answers.values()]) waiting(null);
      for (const state of this.streams.values()) {
        state.cancelled = true;
        if (state.wake) { const w = state.wake; state.wake = null; w(); }
      }
      await Promise.allSettled([...this.calls]);
    }
  }
}

function listen(path, makeBackend, served) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((sock) => {
      served.count += 1;
      const backend = makeBackend();
      sock.on('error', () => {});
      new Server(backend, sock, sock).run().finally(() => { backend.close(); sock.end(); });
    });
    server.once('error', reject);
    server.listen(path, () => {
      fs.chmodSync(path, 0o600);
      resolve(server);
    });
  });
}

/**
 * Runs an adapter process: `makeBackend()` gives a fresh backend object per connection. Flags
 * (`argv`, default `process.argv.slice(2)`): `--listen PATH` serves every connection on a Unix
 * socket until stopped; `--per-case` declines the gate's offer to serve the whole run from this
 * process. Otherwise it speaks on stdin and stdout. Resolves to the exit status.
 */
async function serve(makeBackend, name = 'seam-kit', argv = process.argv.slice(2)) {
  const served = { count: 0 };
  const listening = [];
  const cleanup = () => {
    for (const [server, path] of listening) {
      server.close();
      try { fs.unlinkSync(path); } catch { /* gone already */ }
    }
  };
  const at = argv.findIndex((a) => a === '--listen' || a.startsWith('--listen='));
  process.on('SIGTERM', () => {
    cleanup();
    if (at !== -1) {
      const n = served.count;
      process.stderr.write(`${name}: served ${n} connection${n === 1 ? '' : 's'} in process ${process.pid}\n`);
    }
    process.exit(0);
  });
  if (at !== -1) {
    const path = argv[at].startsWith('--listen=') ? argv[at].slice('--listen='.length) : argv[at + 1];
    if (!path || path.startsWith('--')) {
      process.stderr.write(`${name}: --listen needs the path of a Unix socket\n`);
      return 2;
    }
    if (fs.existsSync(path)) {
      process.stderr.write(`${name}: cannot listen on ${path}: Address already in use (remove it if no adapter listens there)\n`);
      return 1;
    }
    listening.push([await listen(path, makeBackend, served), path]);
    process.stderr.write(`${name}: listening on ${path}\n`);
    return new Promise(() => {}); // until SIGTERM
  }
  const takeRun = async (path) => {
    try {
      listening.push([await listen(path, makeBackend, served), path]);
      return true;
    } catch {
      return false;
    }
  };
  if (process.env.SEAM_KIT_TRACE) process.stderr.write(`${name}: process ${process.pid} on stdin and stdout\n`);
  const backend = makeBackend();
  try {
    await new Server(backend, process.stdin, process.stdout, argv.includes('--per-case') ? null : takeRun).run();
  } finally {
    if (listening.length) { // it served the run: say how many connections
      const n = served.count;
      process.stderr.write(`${name}: served ${n} connection${n === 1 ? '' : 's'} in process ${process.pid}\n`);
    }
    backend.close();
    cleanup();
  }
  return 0;
}

module.exports = { PROTOCOL, WINDOW, ProtocolError, Server, FrameReader, writeFrame, serve };
