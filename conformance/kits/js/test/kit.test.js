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
