'use strict';
// The kit's own rules, without the gate: message texts from the catalogue, path spelling, the
// literal edit, and requests through the protocol layer over in-memory streams.

const test = require('node:test');
const assert = require('node:assert/strict');
const { PassThrough } = require('node:stream');
const kit = require('..');
const { writeFrame, FrameReader } = require('../lib/protocol');
const { MapStore } = require('../examples/dict_backend');

test('templates are filled from the catalogue', () => {
  const e = kit.fail('not_found', { verb: 'read', path: '/w/a' });
  assert.equal(e.code, 'FS_NOT_FOUND');
  assert.equal(e.message, 'cannot read "/w/a": not found');
  const fields = { verb: 'read', path: '/p', mode: 'read-only', size: 1, max: 2, count: 3, detail: 'd' };
  for (const name of Object.keys(kit.CATALOGUE.messages)) {
    const m = kit.fail(name, fields);
    assert.ok(kit.CATALOGUE.codes.includes(m.code), name);
    assert.ok(!m.message.includes('{'), name);
  }
});

test('paths are normalised, refusals name the path as given', () => {
  assert.equal(kit.displayPath('a/./b/../c', '/w', 'stat'), '/w/a/c');
  assert.throws(() => kit.displayPath('./a\0b/', '/w', 'read'),
    { message: 'cannot read "/w/./a\0b/": the path contains a NUL byte' });
  assert.throws(() => kit.displayPath('  ', '/w', 'read'), { message: 'file_path must be a non-empty string' });
  assert.equal(kit.fileUrl('/a b/c#?%é'), 'file:///a%20b/c%23%3F%25%C3%A9');
});

test('the literal edit keeps CRLF and a BOM, refuses ambiguity', () => {
  const out = kit.literalEdit(Buffer.from('\ufeffone\r\ntwo\r\n'), 'one\ntwo', '1\n2', false, '/f');
  assert.deepEqual(Buffer.from(out.data), Buffer.from('\ufeff1\r\n2\r\n'));
  assert.equal(out.before, 'one\ntwo\n');
  assert.throws(() => kit.literalEdit(Buffer.from('a a'), 'a', 'b', false, '/f'), { code: 'FS_AMBIGUOUS_EDIT' });
  assert.equal(Buffer.from(kit.literalEdit(Buffer.from('a a'), 'a', 'b', true, '/f').data).toString(), 'b b');
});

async function exchange(...requests) {
  const input = new PassThrough();
  const output = new PassThrough();
  for (const r of requests) writeFrame(input, { jsonrpc: '2.0', ...r });
  input.end();
  await new kit.Server(new kit.TreeBackend(new MapStore(), 't'), input, output).run();
  output.end();
  const reader = new FrameReader(output);
  const answers = [];
  for (let f = await reader.next(); f !== null; f = await reader.next()) answers.push(f);
  return answers;
}

test('a request before initialize is refused', async () => {
  const [[m]] = await exchange({ id: 1, method: 'stat', params: {} });
  assert.equal(m.error.code, -32002);
});

test('a missing file is a coded error naming its path', async () => {
  const answers = await exchange(
    { id: 1, method: 'initialize', params: { protocol: 1 } },
    { id: 2, method: 'world/case', params: {} },
    { id: 3, method: 'read_text', params: { target: { key: '/n', display_path: '/n' } } },
  );
  assert.deepEqual(answers[2][0].error, { code: -32010, message: 'cannot read "/n": not found', data: { fs: 'FS_NOT_FOUND' } });
});

// Case roots carry their maker's process number; a reopened case goes on close only when its
// maker is gone (the crash property's fresh process), never while it lives.
test('a reopened case goes with its dead maker and stays with a live one', async () => {
  const { spawnSync } = require('node:child_process');
  const store = new MapStore();
  const maker = new kit.TreeBackend(store, 't');
  const live = (await maker.world('world/case', {})).root;
  assert.ok(live.startsWith(`/seam-kit/case-${process.pid}-`), live);
  const exited = spawnSync('true');
  const dead = `/seam-kit/case-${exited.pid}-1`;
  await store.makeDir(dead);
  // A case of another process that still runs.
  const running = require('node:child_process').spawn('sleep', ['30']);
  const alive = `/seam-kit/case-${running.pid}-1`;
  await store.makeDir(alive);
  for (const [root, stays] of [[live, true], [alive, true], [dead, false]]) {
    const other = new kit.TreeBackend(store, 't');
    assert.equal((await other.world('world/reopen', { root })).root, root);
    other.close();
    await new Promise((r) => setImmediate(r));
    assert.equal((await store.node(root)) !== null, stays, root);
  }
  maker.close();
  running.kill();
  await new Promise((r) => setImmediate(r));
  assert.equal(await store.node(live), null);
});

test('a case name left by an earlier process is skipped', async () => {
  const store = new MapStore();
  await store.makeDir('/seam-kit');
  const left = new Set();
  for (let n = 1; n < 200; n++) {
    const root = `/seam-kit/case-${process.pid}-${n}`;
    left.add(root);
    await store.makeDir(root);
  }
  const { root } = await new kit.TreeBackend(store, 't').world('world/case', {});
  assert.ok(!left.has(root), root);
  assert.ok(root.startsWith(`/seam-kit/case-${process.pid}-`), root);
});

// Over a real socket: a write that shows its checkpoints, and — while it waits at `staged` — a
// read of the same file. What the client receives, in order.
async function writePausedThenRead(backend, firstWait) {
  const net = require('node:net');
  const os = require('node:os');
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seam-kit-test-'));
  const at = path.join(dir, 'kit.sock');
  let served;
  const server = net.createServer((sock) => {
    served = new kit.Server(backend, sock, sock).run().finally(() => sock.end());
  });
  await new Promise((resolve) => { server.listen(at, resolve); });
  const client = net.connect(at);
  const reader = new FrameReader(client);
  const frames = [];
  let wake = null;
  (async () => {
    for (let f = await reader.next(); f !== null; f = await reader.next()) {
      frames.push(f);
      if (wake) { const w = wake; wake = null; w(); }
    }
  })();
  const send = (m, segments = []) => writeFrame(client, { jsonrpc: '2.0', ...m }, segments);
  const receive = async (ms = 10_000) => {
    const end = Date.now() + ms;
    while (frames.length === 0) {
      const left = end - Date.now();
      if (left <= 0) return null;
      await new Promise((resolve) => { wake = resolve; setTimeout(resolve, left); });
    }
    return frames.shift();
  };
  send({ id: 1, method: 'initialize', params: { protocol: 1 } });
  await receive();
  send({ id: 2, method: 'world/case', params: {} });
  const { root } = (await receive())[0].result;
  send({ id: 3, method: 'world/apply', params: { path: 'f', effect: 'create_file', bytes: { $payload: 0 }, mode: 0o644 } },
    [Buffer.from('old\n')]);
  await receive();
  const target = { key: `${root}/f`, display_path: `${root}/f` };
  send({ id: 4, method: 'write_text', params: { target, content: { $payload: 0 }, checkpoints: true } },
    [Buffer.from('new\n')]);
  let staged;
  for (;;) { // up to the write's `staged` checkpoint, going on at `before_stage`
    [staged] = await receive();
    if (staged.params.point === 'staged') break;
    send({ id: staged.id, result: { cancel: false } });
  }
  send({ id: 5, method: 'read_text', params: { target } });
  const seen = [];
  const first = await receive(firstWait);
  if (first === null) seen.push(['nothing', null]);
  else seen.push(first[0].id === 5 ? ['read', first[1][0].toString()] : ['other', first[0]]);
  send({ id: staged.id, result: { cancel: false } });
  while (!(seen.some(([k]) => k === 'read') && seen.some(([k]) => k === 'write'))) {
    const frame = await receive();
    assert.ok(frame, `nothing more came: ${JSON.stringify(seen)}`);
    const [m, segments] = frame;
    if (m.method === 'checkpoint') send({ id: m.id, result: { cancel: false } }); // `committed`
    else if (m.id === 5) seen.push(['read', segments[0].toString()]);
    else if (m.id === 4) seen.push(['write', m.result.operation]);
  }
  client.end();
  await served;
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return seen;
}

test('a read is answered while a write of the same connection waits at its checkpoint', async () => {
  // Generous: on a loaded machine the read may be slow to come; it comes anyway.
  const seen = await writePausedThenRead(new kit.TreeBackend(new MapStore(), 't', ['cancel_points']), 30_000);
  assert.deepEqual(seen[0], ['read', 'old\n'], JSON.stringify(seen));
  assert.ok(seen.some(([k, v]) => k === 'write' && v === 'update'), JSON.stringify(seen));
});

test('a backend that does not say concurrent answers one call at a time', async () => {
  const backend = new kit.TreeBackend(new MapStore(), 't', ['cancel_points']);
  backend.concurrent = false;
  const seen = await writePausedThenRead(backend, 1000); // nothing within a second, then the order
  assert.deepEqual(seen, [['nothing', null], ['write', 'update'], ['read', 'new\n']]);
});

// The store's guarantee (Store's doc): the mutations of every connection to one store run one at a
// time from their first look to their last store call, and never hold that across a checkpoint.
// Called directly on two TreeBackends of one store, as two connections would; each test runs the
// same steps against a variant that breaks the guarantee and asserts it is seen.

const turns = async (n) => { for (let i = 0; i < n; i++) await new Promise((r) => { setImmediate(r); }); };
const write = (backend, key, text, checkpoint) =>
  backend.write_text({ target: { key, display_path: key }, content: Buffer.from(text) }, checkpoint);

// Connection a writes /f and stops inside publish; connection b writes /g meanwhile. The store
// calls b made while a was inside publish. `apart(b)` may give b a mutex of its own (a variant).
async function callsWhileAPublishIsUnderWay(apart) {
  const { AsyncLocalStorage } = require('node:async_hooks');
  const caller = new AsyncLocalStorage(); // whose call it is: "a" or "b"
  const log = [];
  let go;
  const gate = new Promise((resolve) => { go = resolve; });
  let held = false;
  class Logged extends MapStore {
    node(key) { log.push([caller.getStore(), `node ${key}`]); return super.node(key); }
    async publish(key, data, expect) {
      log.push([caller.getStore(), `publish ${key}`]);
      if (key === '/f' && !held) { held = true; await gate; }
      const result = super.publish(key, data, expect);
      log.push([caller.getStore(), `published ${key}`]);
      return result;
    }
  }
  const store = new Logged();
  const a = new kit.TreeBackend(store, 't');
  const b = apart(new kit.TreeBackend(store, 't'));
  const first = caller.run('a', () => write(a, '/f', 'x\n'));
  await turns(5);
  assert.ok(held, 'the write never reached publish');
  const second = caller.run('b', () => write(b, '/g', 'x\n'));
  await turns(20); // b, were it free to, would be done by now: MapStore never waits
  go();
  await Promise.all([first, second]);
  const enter = log.findIndex(([w, c]) => w === 'a' && c === 'publish /f');
  const leave = log.findIndex(([w, c]) => w === 'a' && c === 'published /f');
  assert.ok(log.some(([w, c]) => w === 'b' && c === 'published /g'), JSON.stringify(log));
  return log.slice(enter, leave).filter(([w]) => w === 'b').map(([, c]) => c);
}

test('a mutation waits for another connection\'s decision to end', async () => {
  assert.deepEqual(await callsWhileAPublishIsUnderWay((b) => b), []);
});

test('a mutex per connection lets two decisions interleave, and is seen', async () => {
  const seen = await callsWhileAPublishIsUnderWay((b) => {
    b.mutex = new kit.TreeBackend(new MapStore(), 't').mutex; // another store's: b's alone
    return b;
  });
  assert.ok(seen.includes('published /g'), JSON.stringify(seen));
});

// Connection a writes /f and waits at its `staged` checkpoint until connection b's write of /g has
// returned (or `wait` ms). Whether b's write had returned when a went on.
async function otherWriteWhileOneWaitsAtStaged(makeBackend, wait) {
  const store = new MapStore();
  const a = makeBackend(store);
  const b = makeBackend(store);
  let other = null;
  let returned = null;
  await write(a, '/f', 'f\n', async (point) => {
    if (point === 'staged') {
      let done = false;
      other = write(b, '/g', 'g\n').then(() => { done = true; });
      await Promise.race([other, new Promise((r) => { setTimeout(r, wait); })]);
      returned = done;
    }
    return false;
  });
  await other;
  assert.deepEqual([store.read('/f').toString(), store.read('/g').toString()], ['f\n', 'g\n']);
  return returned;
}

test('a checkpoint lets other mutations run', async () => {
  // Generous: on a loaded machine the other write may be slow to run; it runs anyway.
  assert.equal(await otherWriteWhileOneWaitsAtStaged((s) => new kit.TreeBackend(s, 't'), 30_000), true);
});

test('a mutex held across the checkpoint is seen', async () => {
  class HeldAcross extends kit.TreeBackend {
    write_text(p, checkpoint = async () => false) {
      return super.write_text(p, async (point) => {
        const release = await this.mutex.lock();
        try { return await checkpoint(point); } finally { release(); }
      });
    }
  }
  // b gets the mutex only after a went on: it had not returned at `staged`.
  assert.equal(await otherWriteWhileOneWaitsAtStaged((s) => new HeldAcross(s, 't'), 1000), false);
});

// A read runs beside mutations (it takes no mutex): it reads between two looks at the node and
// answers only when they agree; when the file is gone by the time it reads, that is not_found.
function storeWhereReadsAreOvertaken(times, locked = () => false) {
  class Overtaken extends MapStore {
    constructor() { super(); this.reads = 0; this.listings = 0; this.landed = 0; }
    land() { // a change never lands while the decision mutex is held: writers take it
      if (this.landed < times && !locked()) {
        this.landed += 1;
        super.publish('/f', Buffer.from(`v${this.landed}\n`), kit.ANY);
        super.publish(`/n${this.landed}`, Buffer.alloc(0), kit.ANY);
      }
    }
    read(key) { this.reads += 1; const before = super.read(key); this.land(); return before; }
    names(key) { this.listings += 1; const before = super.names(key); this.land(); return before; }
  }
  const store = new Overtaken();
  MapStore.prototype.publish.call(store, '/f', Buffer.from('v0\n'), kit.ANY);
  return store;
}

test('a read overtaken by a write reads again and answers the new bytes', async () => {
  const store = storeWhereReadsAreOvertaken(3);
  const text = await new kit.TreeBackend(store, 't').read_text({ target: { key: '/f', display_path: '/f' } });
  assert.deepEqual([text, store.reads, store.read('/f').toString()], ['v3\n', 4, 'v3\n']);
});

// The decision mutex of `backend`, with whether it is held right now.
function watchMutex(backend) {
  const inner = backend.mutex;
  const watched = {
    held: false,
    async lock() {
      const release = await inner.lock();
      watched.held = true;
      return () => { watched.held = false; release(); };
    },
  };
  backend.mutex = watched;
  return watched;
}

test('a file that keeps changing is read holding the mutex in the end', async () => {
  let mutex = null;
  const store = storeWhereReadsAreOvertaken(1e6, () => mutex.held);
  const backend = new kit.TreeBackend(store, 't');
  mutex = watchMutex(backend);
  const text = await backend.read_text({ target: { key: '/f', display_path: '/f' } });
  // Every read but the last was overtaken; the last held the mutex, so nothing landed in it.
  assert.deepEqual([text, store.landed], [`v${store.reads - 1}\n`, store.reads - 1]);
});

test('a last read without the mutex is seen', async () => {
  class LastReadUnlocked extends kit.TreeBackend {
    async file(key, display, verb) {
      const real = this.mutex;
      this.mutex = { lock: async () => () => {} }; // a mutex no writer takes
      try { return await super.file(key, display, verb); } finally { this.mutex = real; }
    }
  }
  let mutex = null;
  const store = storeWhereReadsAreOvertaken(1e6, () => mutex.held);
  const backend = new LastReadUnlocked(store, 't');
  mutex = watchMutex(backend);
  await backend.read_text({ target: { key: '/f', display_path: '/f' } });
  assert.equal(store.landed, store.reads);
});

test('a rename whose source was removed meanwhile: not found, or stale when guarded', async () => {
  for (const [guarded, code] of [[false, 'FS_NOT_FOUND'], [true, 'FS_STALE_VERSION']]) {
    const store = new MapStore();
    store.makeDir('/d');
    const { version } = store.publish('/d/a', Buffer.from('x\n'), kit.ANY);
    const backend = new kit.TreeBackend(store, 't');
    const request = guarded ? { if_version: version } : {};
    await assert.rejects(
      backend.rename({ from: '/d/a', to: '/d/b', cwd: '/', request }, async (point) => {
        if (point === 'before_stage') store.remove('/d/a');
        return false;
      }),
      (e) => e.code === code && e.message === `cannot rename "/d/a": ${guarded ? 'file changed since it was read' : 'not found'}`,
    );
    assert.equal(store.node('/d/b'), null);
  }
});

test('a listing overtaken by a new entry lists again', async () => {
  const store = storeWhereReadsAreOvertaken(2);
  const entries = await new kit.TreeBackend(store, 't').list_dir({ target: { key: '/', display_path: '/' } });
  assert.deepEqual([entries.map((e) => e.name), store.listings], [['f', 'n1', 'n2'], 3]);
});

function storeWhereAReadFindsTheFileGone() {
  class Removed extends MapStore {
    read(key) {
      if (!this.removedOnce) { this.removedOnce = true; this.remove(key); }
      return super.read(key);
    }
  }
  const store = new Removed();
  store.publish('/f', Buffer.from('f\n'), kit.ANY);
  return store;
}

test('a file removed while it is read is not found', async () => {
  const backend = new kit.TreeBackend(storeWhereAReadFindsTheFileGone(), 't');
  await assert.rejects(backend.read_text({ target: { key: '/f', display_path: '/f' } }),
    (e) => e.code === 'FS_NOT_FOUND');
});

test('a read without the second look is seen failing inside', async () => {
  class ReadsOnce extends kit.TreeBackend {
    async file(key) { await this.nodeAt(key); return Buffer.from(await this.store.read(key)); }
  }
  const backend = new ReadsOnce(storeWhereAReadFindsTheFileGone(), 't');
  await assert.rejects(backend.read_text({ target: { key: '/f', display_path: '/f' } }),
    (e) => e instanceof TypeError);
});
