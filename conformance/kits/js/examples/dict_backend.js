#!/usr/bin/env node
'use strict';
// A complete seam backend over a Map, on the kit: the storage and nothing else.
//
//   seam check --provider exec:'node conformance/kits/js/examples/dict_backend.js'
//
// The kit (seam-kit) speaks the protocol and keeps the contract's rules; this file decides what a
// version is and makes every change one step (JavaScript runs one thing at a time, and nothing
// here awaits in the middle of a change). It claims read_bytes, cancel_points and modes, and —
// because it can unlink and move — namespace; its
// storage dies with its process (volatile), so the gate does not kill it, and says why.

const path = require('node:path');

let kit;
try {
  kit = require('seam-kit');
} catch {
  kit = require('..'); // run from a checkout without `npm install conformance/kits/js`
}

class MapStore extends kit.Store {
  constructor() {
    super();
    this.counter = 0;
    this.entries = new Map([['/', { data: null, mode: 0o755, version: this.nextVersion() }]]);
  }

  // A counter never goes back, so a version is never reused — not even when a file gets its old
  // bytes back (a content hash would be, and the gate finds that).
  nextVersion() {
    this.counter += 1;
    return `v${this.counter}`;
  }

  // A directory's version changes when its entries do.
  touchParent(key) {
    this.entries.get(path.posix.dirname(key)).version = this.nextVersion();
  }

  node(key) {
    const e = this.entries.get(key);
    if (!e) return null;
    return { kind: e.data === null ? 'dir' : 'file', version: e.version,
      size: e.data === null ? null : e.data.length, mode: e.mode };
  }

  read(key) {
    return this.entries.get(key).data;
  }

  names(key) {
    const prefix = key.replace(/\/$/, '') + '/';
    const names = [];
    for (const k of this.entries.keys()) {
      const rest = k.slice(prefix.length);
      if (k.startsWith(prefix) && rest !== '' && !rest.includes('/')) names.push(rest);
    }
    return names;
  }

  publish(key, data, expect) {
    const old = this.entries.get(key);
    if (old && old.data === null) throw new kit.Conflict('a directory is there');
    if (expect === kit.ABSENT && old) throw new kit.Conflict('a file is there');
    if (typeof expect === 'string' && (!old || old.version !== expect)) throw new kit.Conflict('changed');
    if (!this.entries.has(path.posix.dirname(key))) throw new kit.Conflict('the parent went away');
    const entry = { data: Buffer.from(data), mode: old ? old.mode : 0o600, version: this.nextVersion() };
    this.entries.set(key, entry);
    if (!old) this.touchParent(key);
    return { version: entry.version, previous: old ? old.data : null };
  }

  makeDir(key) {
    this.entries.set(key, { data: null, mode: 0o755, version: this.nextVersion() });
    this.touchParent(key);
  }

  remove(key) {
    for (const k of [...this.entries.keys()]) {
      if (k === key || k.startsWith(key + '/')) this.entries.delete(k);
    }
    this.touchParent(key);
  }

  chmod(key, mode) {
    const e = this.entries.get(key);
    e.mode = mode;
    e.version = this.nextVersion();
  }

  unlink(key, expect) {
    const e = this.entries.get(key);
    if (!e || (expect !== kit.ANY && e.version !== expect)) throw new kit.Conflict('changed');
    if (e.data === null && [...this.entries.keys()].some((k) => k.startsWith(key + '/'))) {
      throw new kit.Conflict('not empty');
    }
    this.entries.delete(key);
    this.touchParent(key);
  }

  move(src, dst, expectSrc, expectDst) {
    const e = this.entries.get(src);
    const there = this.entries.get(dst);
    if (!e || (expectSrc !== kit.ANY && e.version !== expectSrc)) throw new kit.Conflict('changed');
    if (Boolean(there) !== (expectDst !== kit.ABSENT)
      || (there && (there.data === null || there.version !== expectDst))) {
      throw new kit.Conflict('the destination changed');
    }
    if (!this.entries.has(path.posix.dirname(dst))) throw new kit.Conflict('the parent went away');
    // The entry and everything beneath it, under their new names (what is inside keeps its
    // versions); the moved entry itself is a new state of itself.
    for (const k of [...this.entries.keys()]) {
      if (k === src || k.startsWith(src + '/')) {
        const moved = this.entries.get(k);
        this.entries.delete(k);
        this.entries.set(dst + k.slice(src.length), moved);
      }
    }
    this.entries.get(dst).version = this.nextVersion();
    this.touchParent(src);
    this.touchParent(dst);
    return this.entries.get(dst).version;
  }
}

module.exports = { MapStore };

if (require.main === module) {
  kit.serveStore(new MapStore(), 'dict_backend.js').then((code) => process.exit(code));
}
