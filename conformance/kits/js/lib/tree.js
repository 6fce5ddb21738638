'use strict';
// The contract over storage that is a tree of files and directories, whatever keeps it: the author
// writes a Store (what is at a key, read it, publish bytes there atomically against an expected
// state, make a directory, and the few world operations the gate uses to set up cases); TreeBackend
// does everything the contract says on top. What stays the store's to get right — and what the
// gate then checks — is that `publish` is atomic and compares-and-swaps, and that a version
// changes on every change (a directory's too when its entries change) and is never reused.

const { CATALOGUE, FsError, fail, decode, displayPath, fileUrl, lexical, lf, literalEdit } = require('./contract');
const { PROTOCOL, WINDOW, ProtocolError } = require('./protocol');

/** An `expect` for `publish`: a file may or may not be there (replaced or created). */
const ANY = Symbol('ANY');
/** An `expect` for `publish`: nothing may be there (create only). */
const ABSENT = Symbol('ABSENT');

/** Thrown by `Store.publish` when what is at the key is not what `expect` asked for. */
class Conflict extends Error {}

/**
 * A tree keyed by absolute normalised paths ("/a/b"). Extend it; methods may be async. The kit
 * runs the contract's mutations (and the test-control world) one at a time per store, each from
 * its first look to its last store call, but never across a checkpoint; the reads (`node`,
 * `read`, `names` for stat, read and list calls) run at any moment — also while an awaited
 * `publish`, `unlink` or `move` is under way, so what a reader can see of a change half done is
 * what the gate sees.
 */
class Store {
  constructor() {
    /** Whether the storage dies with the process (the gate then does not kill it). */
    this.volatile = true;
    /**
     * What the gate's world can do on this store: FIFOs, an mtime put back, and whether it keeps
     * permission bits at all — `modes: false` for storage without them (an object store): the
     * gate then never sets a mode, compares none, expects `mode` to be null everywhere, and the
     * kit never calls `chmod` nor claims `modes`.
     */
    this.world = { fifos: false, restore_mtime: true };
    /**
     * The size from which a write's `before` is left out, when the backend has a limit of its
     * own: declared in `initialize`, and the gate predicts with it. null: the gate's.
     */
    this.diffLimit = null;
  }
  /** `{kind: 'file'|'dir'|'other', version, size, mode}` at `key`, or null. */
  node(key) { throw new Error(`${this.constructor.name} must implement node(${key})`); }
  /** The bytes (Buffer) of the file at `key`. */
  read(key) { throw new Error(`${this.constructor.name} must implement read(${key})`); }
  /** The names in the directory at `key`. */
  names(key) { throw new Error(`${this.constructor.name} must implement names(${key})`); }
  /**
   * Puts `data` at `key` in one step if what is there matches `expect` (ANY, ABSENT, or the
   * version the file must still be at), else throws Conflict. A replaced file keeps its mode, a
   * new one is 0600. Returns `{version, previous}` (the bytes replaced, or null).
   */
  publish(key) { throw new Error(`${this.constructor.name} must implement publish(${key})`); }
  /** A directory at `key` (mode 0755); its parent exists. */
  makeDir(key) { throw new Error(`${this.constructor.name} must implement makeDir(${key})`); }
  /** Removes the file or the whole directory at `key`. */
  remove(key) { throw new Error(`${this.constructor.name} must implement remove(${key})`); }
  /** Sets the permission bits at `key`. */
  chmod(key) { throw new Error(`${this.constructor.name} must implement chmod(${key})`); }
  // The namespace operations (optional: a store that implements both claims `namespace`).
  /**
   * Removes the file, or the empty directory, at `key` in one step if it is at version `expect`
   * (ANY: whatever version), else throws Conflict (also when nothing is there, or a directory
   * has entries). The parent's version changes.
   */
  unlink(key) { throw new Error(`${this.constructor.name} must implement unlink(${key})`); }
  /**
   * Moves what is at `src` (a file, or a directory with everything in it) to `dst` in one step
   * if `src` is at `expectSrc` (ANY: whatever version) and `dst` is ABSENT or a file at version
   * `expectDst`, else throws Conflict. A moved file gets a version never issued before; what is
   * inside a moved directory keeps its versions; both parents' versions change. Returns the
   * moved entry's version.
   */
  move(src) { throw new Error(`${this.constructor.name} must implement move(${src})`); }
}

let cases = 0;

/** Calls run one at a time: `lock()` resolves to the function that lets the next one in. */
class Mutex {
  constructor() { this.tail = Promise.resolve(); }

  lock() {
    let release;
    const held = new Promise((resolve) => { release = resolve; });
    const turn = this.tail.then(() => release);
    this.tail = this.tail.then(() => held);
    return turn;
  }
}

// One mutex per store: the mutations' decisions.
const decisions = new WeakMap();
function decisionsOf(store) {
  if (!decisions.has(store)) decisions.set(store, new Mutex());
  return decisions.get(store);
}

// How many times a read looks again when what it read changed while it read.
const READ_TRIES = 64;
const sameNode = (a, b) => (a === null || b === null ? a === b
  : a.kind === b.kind && a.version === b.version && a.size === b.size && a.mode === b.mode);

// Whether the process whose number a case root carries (`/seam-kit/case-PID-N`) is gone.
function makerGone(root) {
  const pid = Number(root.split('/').pop().split('-')[1]);
  if (!Number.isInteger(pid) || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return e.code === 'ESRCH';
  }
}
const byBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The contract over a Store, for one connection. Its calls may run at once (`concurrent`): the
 * protocol layer starts each without waiting for the others.
 */
class TreeBackend {
  constructor(store, name, claims = ['read_bytes', 'cancel_points', 'modes']) {
    Object.assign(this, { store, name, claims: [...claims], cwd: '/', caseRoot: null, made: null,
      adopted: null, concurrent: true, mutex: decisionsOf(store) });
    // A store without permission bits cannot keep them for anyone.
    if (store.world && store.world.modes === false) this.claims = this.claims.filter((c) => c !== 'modes');
    // A store that can unlink and move gets the namespace operations.
    const own = (m) => typeof store[m] === 'function' && store[m] !== Store.prototype[m];
    if (own('unlink') && own('move') && !this.claims.includes('namespace')) this.claims.push('namespace');
    this.diffLimit = store.diffLimit ?? 10 * 1024 * 1024;
  }

  describe() {
    const limits = { max_line: 1 << 20, max_payload: 64 << 20, stream_window: WINDOW };
    if (this.store.diffLimit != null) limits.diff_basis_max_bytes = this.store.diffLimit;
    return { protocol: PROTOCOL, server: this.name, capabilities: this.claims, sandbox_mode: null,
      cwd: this.cwd, test_control: true, volatile: this.store.volatile, limits };
  }

  // The connection ended: the case it made goes, and so does a case it reopened whose maker is
  // gone (a killed process's, reopened by the crash property's fresh process).
  close() {
    for (const root of [this.made, this.adopted]) {
      if (!root || (root === this.adopted && !makerGone(root))) continue;
      this.mutex.lock().then(async (release) => {
        try { await this.store.remove(root); } catch { /* gone already */ } finally { release(); }
      });
    }
  }

  async parentsOk(key) {
    const parts = key.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const n = await this.store.node('/' + parts.slice(0, i).join('/'));
      if (!n) return true;
      if (n.kind !== 'dir') return false;
    }
    return true;
  }

  async nodeAt(key) { return (await this.parentsOk(key)) ? this.store.node(key) : null; }

  static target(key, display) {
    return { key, display_path: display, process_path: key, file_url: fileUrl(key) };
  }

  static info(n) {
    return { version: n.version, kind: n.kind === 'dir' ? 'directory' : n.kind,
      size: n.kind === 'file' ? n.size : null };
  }

  async resolve(p) {
    const display = displayPath(p.path, p.cwd || this.cwd, 'resolve');
    const release = await this.mutex.lock(); // its parents, looked at together
    try {
      if (!(await this.parentsOk(display))) throw fail('parent_not_directory', { verb: 'resolve', path: display });
    } finally {
      release();
    }
    return TreeBackend.target(display, display);
  }

  async stat(p) {
    const n = await this.nodeAt(p.target.key);
    return n ? TreeBackend.info(n) : null;
  }

  async lstat(p) {
    const n = await this.nodeAt(displayPath(p.path, p.cwd || this.cwd, 'lstat'));
    return n ? TreeBackend.info(n) : null;
  }

  // The bytes of the file at `key` as they were at one moment: read between two looks that agree
  // (a version is never reused), again while a change gets in between.
  async file(key, display, verb) {
    const check = (n) => {
      if (!n) throw fail('not_found', { verb, path: display });
      if (n.kind !== 'file') throw fail('not_regular_file', { verb, path: display });
    };
    let n = await this.nodeAt(key);
    for (let i = 0; i < READ_TRIES; i++) {
      check(n);
      let data = null;
      try { data = await this.store.read(key); } catch { data = null; } // gone meanwhile
      const again = await this.nodeAt(key);
      if (data != null && sameNode(again, n)) return Buffer.from(data);
      n = again;
    }
    const release = await this.mutex.lock(); // it kept changing: read it with no mutation under way
    try {
      check(await this.nodeAt(key));
      return Buffer.from(await this.store.read(key));
    } finally {
      release();
    }
  }

  async read_text(p) {
    const { key, display_path: display } = p.target;
    return decode(await this.file(key, display, 'read'), 'read', display);
  }

  async read_bytes(p) {
    const { key, display_path: display } = p.target;
    const limit = p.max_bytes;
    const n = await this.nodeAt(key);
    if (n && n.kind === 'file' && n.size > limit) throw fail('too_large', { path: display, size: n.size, max: limit });
    const data = await this.file(key, display, 'read');
    if (data.length > limit) throw fail('grew_past_cap', { path: display, max: limit });
    return data;
  }

  async list_dir(p) {
    const { key, display_path: display } = p.target;
    let n = await this.nodeAt(key);
    for (let i = 0; i < READ_TRIES; i++) {
      if (!n) throw fail('not_found', { verb: 'list', path: display });
      if (n.kind !== 'dir') throw fail('not_a_directory', { path: display });
      const entries = await this.entries(key, display);
      const again = await this.nodeAt(key);
      if (sameNode(again, n)) return entries; // no entry came or went meanwhile (its version says so)
      n = again;
    }
    const release = await this.mutex.lock(); // it kept changing: list it with no mutation under way
    try {
      return await this.entries(key, display);
    } finally {
      release();
    }
  }

  async entries(key, display) {
    const entries = [];
    for (const name of [...(await this.store.names(key))].sort(byBytes)) {
      const child = key.replace(/\/$/, '') + '/' + name;
      const shown = display.replace(/\/$/, '') + '/' + name;
      const c = await this.store.node(child);
      const entry = c ? { ...TreeBackend.info(c), name } : { name, kind: 'other', version: null, size: null };
      entries.push({ ...entry, target: TreeBackend.target(child, shown) });
    }
    return entries;
  }

  before(old, content) {
    if (!old || old.length >= this.diffLimit || content.length >= this.diffLimit) return null;
    try {
      return lf(decode(Buffer.from(old), 'write', ''));
    } catch (e) {
      if (e instanceof FsError) return null;
      throw e;
    }
  }

  async makeParents(key, display) {
    const parts = key.split('/').filter(Boolean);
    const made = [];
    for (let i = 1; i < parts.length; i++) {
      const d = '/' + parts.slice(0, i).join('/');
      const n = await this.store.node(d);
      if (!n) {
        await this.store.makeDir(d);
        made.push(d);
      } else if (n.kind !== 'dir') {
        await this.unmake(made);
        throw fail('parent_not_directory', { verb: 'write', path: display });
      }
    }
    return made;
  }

  async unmake(made) {
    for (const d of [...made].reverse()) await this.store.remove(d);
  }

  async write_text(p, checkpoint) {
    const { key, display_path: display } = p.target;
    const content = Buffer.from(p.content);
    const guard = p.expected || {};
    const n = await this.nodeAt(key);
    if (n && n.kind !== 'file') throw fail('not_regular_file', { verb: 'write', path: display });
    if (guard.create_if_absent && n) throw fail('exists_not_observed', { path: display });
    const want = guard.replace_if_version ?? null;
    if (want !== null && !n) throw fail('no_longer_exists', { path: display });
    if (want !== null && n.version !== want) throw fail('changed_since_read', { verb: 'write', path: display });
    if (await checkpoint('before_stage')) throw fail('aborted', { verb: 'write' });
    const made = n ? [] : await this.makeParents(key, display);
    if (await checkpoint('staged')) {
      await this.unmake(made);
      throw fail('aborted', { verb: 'write' });
    }
    const expect = guard.create_if_absent ? ABSENT : (want !== null ? want : ANY);
    let published;
    try {
      published = await this.store.publish(key, content, expect);
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
      await this.unmake(made);
      const now = await this.nodeAt(key);
      if (now && now.kind !== 'file') throw fail('not_regular_file', { verb: 'write', path: display });
      if (expect === ABSENT) throw fail('exists_not_observed', { path: display });
      if (!now) throw fail('no_longer_exists', { path: display });
      throw fail('changed_since_read', { verb: 'write', path: display });
    }
    await checkpoint('committed');
    const before = this.before(published.previous, content);
    return { operation: published.previous ? 'update' : 'create', version: published.version,
      before: before === null ? null : Buffer.from(before),
      after: Buffer.from(lf(content.toString('utf8'))) };
  }

  async edit_text(p, checkpoint) {
    const { key, display_path: display } = p.target;
    const [old, neu] = [Buffer.from(p.old_string).toString('utf8'), Buffer.from(p.new_string).toString('utf8')];
    const guard = p.expected ?? null;
    // Made again on what is there now when someone changed the file meanwhile (unguarded only).
    for (let attempt = 0; attempt < 8; attempt++) {
      const n = await this.nodeAt(key);
      if (!n) throw fail('changed_since_read', { verb: 'edit', path: display });
      if (n.kind !== 'file') throw fail('not_regular_file', { verb: 'edit', path: display });
      if (guard !== null && n.version !== guard) throw fail('changed_since_read', { verb: 'edit', path: display });
      const edit = literalEdit(Buffer.from(await this.store.read(key)), old, neu, Boolean(p.replace_all), display);
      if ((await checkpoint('before_stage')) || (await checkpoint('staged'))) throw fail('aborted', { verb: 'edit' });
      let published;
      try {
        published = await this.store.publish(key, edit.data, n.version);
      } catch (e) {
        if (!(e instanceof Conflict)) throw e;
        if (guard !== null) break;
        continue;
      }
      await checkpoint('committed');
      return { version: published.version, before: Buffer.from(edit.before), after: Buffer.from(edit.after) };
    }
    throw fail('changed_since_read', { verb: 'edit', path: display });
  }

  // --- the namespace operations (seam::FileSystem::{create_dir, remove, rename}) ---

  /** The first thing wrong on the way to `display`'s parent: 'missing', 'file', or null. */
  async walk(display) {
    const parts = display.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const n = await this.store.node('/' + parts.slice(0, i).join('/'));
      if (!n) return 'missing';
      if (n.kind !== 'dir') return 'file';
    }
    return null;
  }

  static kind(n) { return n.kind === 'dir' ? 'directory' : n.kind; }

  async create_dir(p, checkpoint = async () => false) {
    const d = displayPath(p.path, p.cwd || this.cwd, 'mkdir');
    const request = p.request || {};
    const parts = d.split('/').filter(Boolean);
    const missing = [];
    for (let i = 1; i < parts.length; i++) {
      const key = '/' + parts.slice(0, i).join('/');
      const n = await this.store.node(key);
      if (!n) missing.push(key);
      else if (n.kind !== 'dir' || missing.length) throw fail('parent_not_directory', { verb: 'mkdir', path: d });
    }
    if (missing.length && !request.parents) throw fail('parent_missing', { verb: 'mkdir', path: d });
    const n = missing.length ? null : await this.store.node(d);
    if (n) {
      if (n.kind !== 'dir') throw fail('not_directory_in_the_way', { path: d });
      if (!request.exist_ok) throw fail('directory_exists', { path: d });
      return { created: false, version: n.version };
    }
    if (await checkpoint('before_stage')) throw fail('aborted', { verb: 'mkdir' });
    for (const key of [...missing, d]) await this.store.makeDir(key);
    const { version } = await this.store.node(d); // before `committed` lets other changes in
    await checkpoint('committed');
    return { created: true, version };
  }

  async remove(p, checkpoint = async () => false) {
    const d = displayPath(p.path, p.cwd || this.cwd, 'remove');
    const request = p.request || {};
    const guard = request.if_version ?? null;
    const absent = () => (guard !== null
      ? fail('changed_since_read', { verb: 'remove', path: d })
      : fail('not_found', { verb: 'remove', path: d }));
    const n = await this.nodeAt(d);
    if (!n) throw absent();
    if (guard !== null && n.version !== guard) throw fail('changed_since_read', { verb: 'remove', path: d });
    if (n.kind === 'dir') {
      if (!request.directory) throw fail('is_a_directory', { verb: 'remove', path: d });
      if ((await this.store.names(d)).length) throw fail('directory_not_empty', { path: d });
    }
    if (await checkpoint('before_stage')) throw fail('aborted', { verb: 'remove' });
    try {
      await this.store.unlink(d, guard !== null ? guard : ANY);
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
      const now = await this.nodeAt(d);
      if (!now) throw absent();
      if (now.kind === 'dir' && (await this.store.names(d)).length) throw fail('directory_not_empty', { path: d });
      throw fail('changed_since_read', { verb: 'remove', path: d });
    }
    await checkpoint('committed');
    return { kind: TreeBackend.kind(n) };
  }

  async rename(p, checkpoint = async () => false) {
    const cwd = p.cwd || this.cwd;
    const f = displayPath(p.from, cwd, 'rename');
    const t = displayPath(p.to, cwd, 'rename');
    const request = p.request || {};
    const guard = request.if_version ?? null;
    const replace = request.replace ?? null;
    const n = await this.nodeAt(f);
    if (!n) {
      throw guard !== null ? fail('changed_since_read', { verb: 'rename', path: f })
        : fail('not_found', { verb: 'rename', path: f });
    }
    if (guard !== null && n.version !== guard) throw fail('changed_since_read', { verb: 'rename', path: f });
    const wrong = await this.walk(t);
    if (wrong === 'missing') throw fail('parent_missing', { verb: 'rename', path: t });
    if (wrong === 'file') throw fail('parent_not_directory', { verb: 'rename', path: t });
    if (t === f || t.startsWith(f.replace(/\/$/, '') + '/')) {
      // One placeholder in the catalogue stands for both: the source, then the destination.
      const entry = CATALOGUE.messages.rename_into_itself;
      throw new FsError(entry.code, entry.template.replace('{path}', f).replace('{path}', t));
    }
    const there = await this.store.node(t);
    if (there && replace === null) throw fail('destination_exists', { path: t });
    if (there && there.kind === 'dir') throw fail('is_a_directory', { verb: 'rename', path: t });
    if (there && n.kind === 'dir') throw fail('is_a_directory', { verb: 'rename', path: f });
    if (replace !== null && (!there || there.version !== replace)) {
      throw fail('changed_since_read', { verb: 'rename', path: t });
    }
    if (await checkpoint('before_stage')) throw fail('aborted', { verb: 'rename' });
    let version;
    try {
      version = await this.store.move(f, t, guard !== null ? guard : ANY, replace !== null ? replace : ABSENT);
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
      const now = await this.nodeAt(f);
      // The source gone meanwhile: as if it had gone before the call (nothing to move; a
      // guarded rename's file changed since it was read).
      if (!now && guard === null) throw fail('not_found', { verb: 'rename', path: f });
      if (!now || (guard !== null && now.version !== guard)) throw fail('changed_since_read', { verb: 'rename', path: f });
      if (replace === null && (await this.store.node(t))) throw fail('destination_exists', { path: t });
      throw fail('changed_since_read', { verb: 'rename', path: t });
    }
    await checkpoint('committed');
    return { kind: TreeBackend.kind(n), replaced: Boolean(there), version };
  }

  async world(method, p) {
    const store = this.store;
    if (method === 'world/case' || method === 'world/reopen') {
      let root;
      if (method === 'world/case') {
        // The process's number in the name: processes sharing a store never meet in one case,
        // and one left by an earlier process of the same number is skipped.
        if (!(await store.node('/seam-kit'))) await store.makeDir('/seam-kit');
        do root = `/seam-kit/case-${process.pid}-${++cases}`; while (await store.node(root));
        await store.makeDir(root);
        this.made = root;
      } else {
        root = lexical(p.root || '/');
        if (!root.startsWith('/seam-kit/case-') || !(await store.node(root))) {
          throw new ProtocolError(-32602, `world/reopen ${root}: not a case of this store`);
        }
        this.adopted = root;
      }
      this.caseRoot = root;
      this.cwd = root;
      if (store.diffLimit == null && p.diff_basis_max_bytes !== undefined) this.diffLimit = p.diff_basis_max_bytes;
      return { ...this.describe(), root, world: store.world };
    }
    if (!this.caseRoot) throw new ProtocolError(-32602, `${method} needs world/case first`);
    if (method === 'world/snapshot') return { entries: await this.snapshot() };
    if (method === 'world/entry_mode') {
      const n = await store.node(lexical(p.path));
      if (!n) return null;
      return n.mode == null ? { is_dir: n.kind === 'dir' } : { is_dir: n.kind === 'dir', mode: n.mode };
    }
    if (method !== 'world/apply') throw new ProtocolError(-32601, `unknown method ${method}`);
    const key = lexical(this.caseRoot + '/' + p.path);
    const effect = p.effect;
    const keepsModes = !store.world || store.world.modes !== false;
    if (effect === 'create_file' || effect === 'create_dir') await this.makeParents(key, key);
    if (effect === 'create_file') {
      if (await store.node(key)) await store.remove(key);
      await store.publish(key, Buffer.from(p.bytes), ABSENT);
      if (keepsModes) await store.chmod(key, p.mode);
    } else if (effect === 'rewrite_file') {
      await store.publish(key, Buffer.from(p.bytes), ANY);
    } else if (effect === 'create_dir') {
      await store.makeDir(key);
    } else if (effect === 'remove') {
      await store.remove(key);
    } else if (effect === 'chmod' && keepsModes) {
      await store.chmod(key, p.mode);
    } else {
      throw new ProtocolError(-32602, `this store cannot ${effect}`);
    }
    return {};
  }

  async snapshot() {
    const entries = [];
    const todo = [this.caseRoot];
    while (todo.length) {
      const d = todo.pop();
      for (const name of await this.store.names(d)) {
        const key = `${d}/${name}`;
        const n = await this.store.node(key);
        const rel = key.slice(this.caseRoot.length + 1);
        if (!n) continue;
        if (n.kind === 'dir') {
          entries.push([rel, { kind: 'dir', mode: n.mode }]);
          todo.push(key);
        } else if (n.kind === 'file') {
          entries.push([rel, { kind: 'file', bytes: Buffer.from(await this.store.read(key)), mode: n.mode }]);
        } else {
          entries.push([rel, { kind: 'other' }]);
        }
      }
    }
    return entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
}

// Each mutation holds its store's mutex from its first look to its last store call, let go while
// a checkpoint waits (the client may change the world there, through this store); the world's
// changes hold it too, so they fall between the mutations' decisions, never inside one.
for (const m of ['write_text', 'edit_text', 'create_dir', 'remove', 'rename']) {
  const inner = TreeBackend.prototype[m];
  TreeBackend.prototype[m] = async function deciding(p, checkpoint = async () => false) {
    let release = await this.mutex.lock();
    const at = async (point) => {
      release();
      try {
        return await checkpoint(point);
      } finally {
        release = await this.mutex.lock();
      }
    };
    try {
      return await inner.call(this, p, at);
    } finally {
      release();
    }
  };
}
{
  const inner = TreeBackend.prototype.world;
  TreeBackend.prototype.world = async function world(method, p) {
    const release = await this.mutex.lock();
    try {
      return await inner.call(this, method, p);
    } finally {
      release();
    }
  };
}

module.exports = { ANY, ABSENT, Conflict, Store, TreeBackend };
