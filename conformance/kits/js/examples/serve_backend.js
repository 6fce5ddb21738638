#!/usr/bin/env node
'use strict';
// A seam backend on the kit's low layer, `kit.serve`: the kit speaks the protocol, this file answers
// every contract call itself, as a backend you already have would.
//
//   seam check --provider exec:'node conformance/kits/js/examples/serve_backend.js'
//
// It claims read_bytes and cancel_points; not modes (it keeps no permission bits), namespace,
// symlinks or the rest, which the gate reports "not claimed". Its storage dies with its process
// (volatile), so the gate's crash property does not apply.

const path = require('node:path');

let kit;
try {
  kit = require('seam-kit');
} catch {
  kit = require('..'); // run from a checkout without `npm install conformance/kits/js`
}
const { ProtocolError, decode, displayPath, fail, fileUrl, lexical, literalEdit } = kit;

// --- the filesystem you already have: a Map of absolute paths, one per process, shared by every
// connection. JavaScript runs one thing at a time, so a change is atomic as long as nothing awaits
// between its check and its change. Versions come from a counter that never goes back, so a
// version is never given again (not even to the same bytes). ---

/** @typedef {{data: Buffer | null, version: string}} Entry  data null: a directory */

/** @type {Map<string, Entry>} */
const entries = new Map([['/', { data: null, version: 'v0' }]]);
let counter = 0;
const nextVersion = () => `v${++counter}`;

/** @param {string} key "/a/b/c" @returns {string[]} ["/a", "/a/b"] */
function ancestors(key) {
  const parts = key.split('/').slice(1, -1);
  return parts.map((_, i) => '/' + parts.slice(0, i + 1).join('/'));
}

/** A file (a directory: data null) at `key` with a new version, missing parents made. */
function put(key, data) {
  for (const a of ancestors(key)) if (!entries.has(a)) put(a, null);
  // A directory's version changes when its entries do.
  if (!entries.has(key)) entries.set(path.posix.dirname(key), { data: null, version: nextVersion() });
  const entry = { data, version: nextVersion() };
  entries.set(key, entry);
  return entry;
}

/** Removes `key` and everything under it. */
function drop(key) {
  for (const k of [...entries.keys()]) if (k === key || k.startsWith(key + '/')) entries.delete(k);
  entries.set(path.posix.dirname(key), { data: null, version: nextVersion() });
}

function names(key) {
  const prefix = key.replace(/\/$/, '') + '/';
  return [...entries.keys()].filter((k) => k.startsWith(prefix) && k !== prefix)
    .map((k) => k.slice(prefix.length)).filter((rest) => !rest.includes('/'));
}

// --- the contract over it, for `serve` ---

let cases = 0;
const info = (e) => ({ version: e.version, kind: e.data === null ? 'directory' : 'file',
  size: e.data === null ? null : e.data.length });
const target = (key, display) => ({ key, display_path: display, process_path: key, file_url: fileUrl(key) });
const lf = (text) => text.split('\r\n').join('\n');
const parentIsFile = (key) => ancestors(key).some((a) => entries.has(a) && entries.get(a).data !== null);
const byBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** One connection's backend: `serve` makes one per connection and calls these methods. */
class Backend {
  constructor() {
    this.claims = ['read_bytes', 'cancel_points'];
    this.cwd = '/';
    this.case = null;
    this.diffLimit = 10 * 1024 * 1024; // world/case gives the gate's
  }

  describe() { // called without await: must not return a promise
    return { protocol: kit.PROTOCOL, server: 'serve_backend.js', capabilities: this.claims,
      sandbox_mode: null, cwd: this.cwd, test_control: true, volatile: true,
      limits: { max_line: 1 << 20, max_payload: 64 << 20, stream_window: 8 } };
  }

  close() {
    if (this.case) drop(this.case);
  }

  // --- reading ---

  resolve(p) {
    const display = displayPath(p.path, p.cwd || this.cwd, 'resolve');
    if (parentIsFile(display)) throw fail('parent_not_directory', { verb: 'resolve', path: display });
    return target(display, display); // one spelling per entry (no links here): the key
  }

  stat(p) {
    const e = entries.get(p.target.key);
    return e ? info(e) : null;
  }

  lstat(p) { // no links here: the same as stat
    const e = entries.get(displayPath(p.path, p.cwd || this.cwd, 'lstat'));
    return e ? info(e) : null;
  }

  file(p, verb) {
    const e = entries.get(p.target.key);
    if (!e) throw fail('not_found', { verb, path: p.target.display_path });
    if (e.data === null) throw fail('not_regular_file', { verb, path: p.target.display_path });
    return e.data;
  }

  read_text(p) { // also what the kit streams for stream_text
    return decode(this.file(p, 'read'), 'read', p.target.display_path);
  }

  read_bytes(p) { // a Buffer: only Buffers travel as payload
    const data = this.file(p, 'read');
    if (data.length > p.max_bytes) {
      throw fail('too_large', { path: p.target.display_path, size: data.length, max: p.max_bytes });
    }
    return data;
  }

  list_dir(p) {
    const { key, display_path: display } = p.target;
    const e = entries.get(key);
    if (!e) throw fail('not_found', { verb: 'list', path: display });
    if (e.data !== null) throw fail('not_a_directory', { path: display });
    const base = key.replace(/\/$/, '');
    return names(key).sort(byBytes).map((n) => ({ ...info(entries.get(`${base}/${n}`)), name: n,
      target: target(`${base}/${n}`, `${display.replace(/\/$/, '')}/${n}`) }));
  }

  // --- writing ---

  /** The write guard matrix against what is at `key` now: the file there, or undefined. */
  static guard(key, display, expected) {
    const e = entries.get(key);
    if (e && e.data === null) throw fail('not_regular_file', { verb: 'write', path: display });
    if (expected.create_if_absent && e) throw fail('exists_not_observed', { path: display });
    const want = expected.replace_if_version ?? null;
    if (want !== null && !e) throw fail('no_longer_exists', { path: display });
    if (want !== null && e.version !== want) throw fail('changed_since_read', { verb: 'write', path: display });
    return e;
  }

  /** @param {(point: string) => boolean | Promise<boolean>} checkpoint */
  async write_text(p, checkpoint) {
    const { key, display_path: display } = p.target;
    const content = Buffer.from(p.content); // a copy: the payload is a view of the read buffer
    const expected = p.expected || {};
    Backend.guard(key, display, expected); // refuse early, changing nothing
    // The gate changes the world while a checkpoint waits: look again after it.
    if ((await checkpoint('before_stage')) || (await checkpoint('staged'))) throw fail('aborted', { verb: 'write' });
    // Check again and publish, with no await in between: one step.
    const old = Backend.guard(key, display, expected);
    if (parentIsFile(key)) throw fail('parent_not_directory', { verb: 'write', path: display });
    const made = put(key, content);
    await checkpoint('committed'); // published: the answer cannot undo it
    let before = null;
    if (old && Math.max(old.data.length, content.length) < this.diffLimit) {
      try {
        before = Buffer.from(lf(decode(old.data, 'write', display)));
      } catch (e) {
        if (!(e instanceof kit.FsError)) throw e; // the old content was not text: no `before`
      }
    }
    return { operation: old ? 'update' : 'create', version: made.version, before,
      after: Buffer.from(lf(content.toString('utf8'))) };
  }

  /** @param {(point: string) => boolean | Promise<boolean>} checkpoint */
  async edit_text(p, checkpoint) {
    const { key, display_path: display } = p.target;
    const [old, neu, guard] = [p.old_string.toString('utf8'), p.new_string.toString('utf8'), p.expected ?? null];
    for (let attempt = 0; attempt < 8; attempt++) { // unguarded: made again on what is there now
      const e = entries.get(key);
      if (!e) throw fail('changed_since_read', { verb: 'edit', path: display });
      if (e.data === null) throw fail('not_regular_file', { verb: 'edit', path: display });
      if (guard !== null && e.version !== guard) throw fail('changed_since_read', { verb: 'edit', path: display });
      const edit = literalEdit(e.data, old, neu, Boolean(p.replace_all), display);
      if ((await checkpoint('before_stage')) || (await checkpoint('staged'))) throw fail('aborted', { verb: 'edit' });
      if (entries.get(key) === e) { // still the file that was read: publish
        const made = put(key, edit.data);
        await checkpoint('committed');
        return { version: made.version, before: Buffer.from(edit.before), after: Buffer.from(edit.after) };
      }
      if (guard !== null) break;
    }
    throw fail('changed_since_read', { verb: 'edit', path: display });
  }

  // --- the test-control world: how the gate sets up cases and reads them back ---

  world(method, p) {
    if (method === 'world/case') {
      this.case = this.cwd = `/case-${++cases}`;
      put(this.case, null);
      if (p.diff_basis_max_bytes !== undefined) this.diffLimit = p.diff_basis_max_bytes;
      return { ...this.describe(), root: this.case, world: { fifos: false, restore_mtime: true, modes: false } };
    }
    if (!this.case) throw new ProtocolError(-32602, `${method} needs world/case first`);
    if (method === 'world/snapshot') { // no "mode" in the entries: it keeps none (modes: false)
      const found = [...entries].filter(([k]) => k.startsWith(this.case + '/'))
        .map(([k, e]) => [k.slice(this.case.length + 1), e]).sort((a, b) => byBytes(a[0], b[0]));
      return { entries: found.map(([rel, e]) => [rel,
        e.data === null ? { kind: 'dir' } : { kind: 'file', bytes: e.data }]) };
    }
    if (method !== 'world/apply') throw new ProtocolError(-32601, `unknown method ${method}`);
    const key = lexical(`${this.case}/${p.path}`);
    const effect = p.effect;
    if (effect === 'create_file' && entries.has(key)) drop(key); // a new file, not a new state
    if (['create_file', 'rewrite_file', 'create_dir'].includes(effect)) {
      put(key, effect === 'create_dir' ? null : Buffer.from(p.bytes));
    } else if (effect === 'remove') {
      drop(key);
    } else { // chmod, symlink, mkfifo: never sent for what this backend claims
      throw new ProtocolError(-32602, `this store cannot ${effect}`);
    }
    return {};
  }
}

module.exports = { Backend };

if (require.main === module) {
  kit.serve(() => new Backend(), 'serve_backend.js').then((code) => process.exit(code));
}
