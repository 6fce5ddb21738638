// Type declarations of seam-kit (the kit itself is plain JavaScript: no build step).

/** What `Store.node` answers. */
export interface Node {
  kind: 'file' | 'dir' | 'other';
  /** Opaque; changes on every change, never given again to different content. */
  version: string;
  /** A file's length in bytes; null otherwise. */
  size: number | null;
  /** Permission bits; null where the storage keeps none (`world.modes` false). */
  mode: number | null;
}

/** What `Store.publish` gives back: the new version and the bytes replaced (null: created). */
export interface Published {
  version: string;
  previous: Uint8Array | null;
}

/** An `expect` for `publish`: a file may or may not be there. */
export const ANY: unique symbol;
/** An `expect` for `publish`: nothing may be there. */
export const ABSENT: unique symbol;
export type Expect = typeof ANY | typeof ABSENT | string;

type Maybe<T> = T | Promise<T>;

/** Thrown by `Store.publish` when what is at the key is not what `expect` asked for. */
export class Conflict extends Error {}

/** A tree of files and directories keyed by absolute normalised paths ("/a/b"). */
export class Store {
  /** The storage dies with the process (default true): the gate does not kill it. */
  volatile: boolean;
  /**
   * What the gate's world can do on this store; `modes: false` for storage without permission
   * bits (never given a mode, `mode` null everywhere, `modes` not claimed).
   */
  world: { fifos: boolean; restore_mtime: boolean; modes?: boolean };
  /** A diff-basis limit of the backend's own, declared to the gate; null: the gate's. */
  diffLimit: number | null;
  node(key: string): Maybe<Node | null>;
  read(key: string): Maybe<Uint8Array>;
  names(key: string): Maybe<string[]>;
  /** One atomic step: put `data` at `key` if what is there matches `expect`, else throw Conflict. */
  publish(key: string, data: Uint8Array, expect: Expect): Maybe<Published>;
  makeDir(key: string): Maybe<void>;
  remove(key: string): Maybe<void>;
  chmod(key: string, mode: number): Maybe<void>;
  /**
   * Optional (with `move`, the backend claims `namespace`): remove the file or empty directory
   * at `key` in one step if it is at version `expect` (ANY: any), else throw Conflict.
   */
  unlink?(key: string, expect: typeof ANY | string): Maybe<void>;
  /**
   * Optional: move what is at `src` to `dst` in one step if `src` is at `expectSrc` (ANY: any) and
   * `dst` is ABSENT or a file at `expectDst`, else throw Conflict. Returns the moved entry's
   * new version.
   */
  move?(src: string, dst: string, expectSrc: typeof ANY | string, expectDst: typeof ABSENT | string): Maybe<string>;
}

/** A failure the contract names. */
export class FsError extends Error {
  code: string;
  constructor(code: string, message: string);
}

/** A JSON-RPC error that is not the contract's. */
export class ProtocolError extends Error {
  rpcCode: number;
  constructor(code: number, message: string);
}

export const PROTOCOL: number;
export const CATALOGUE: {
  codes: string[];
  verbs: string[];
  messages: Record<string, { code: string; template: string }>;
  limits: Record<string, number>;
  [other: string]: unknown;
};

/** The catalogue's message `name` with its placeholders filled in. */
export function fail(name: string, fields?: Record<string, string | number>): FsError;
export function displayPath(path: string, cwd: string, verb: string): string;
export function fileUrl(path: string): string;
export function lexical(absolute: string): string;
export function decode(data: Uint8Array, verb: string, display: string): string;
export function literalEdit(data: Uint8Array, old: string, replacement: string, replaceAll: boolean,
  display: string): { data: Uint8Array; before: string; after: string };

/** The contract over a Store, for one connection. */
export class TreeBackend implements ServedBackend {
  constructor(store: Store, name: string, claims?: string[]);
  claims: string[];
  /** Always true: its calls run at once (mutations one at a time per store, reads any time). */
  concurrent: boolean;
  describe(): Record<string, unknown>;
  close(): void;
  world(method: string, params: Params): Promise<unknown>;
  resolve(params: Params): Promise<unknown>;
  stat(params: Params): Promise<unknown>;
  lstat(params: Params): Promise<unknown>;
  list_dir(params: Params): Promise<unknown>;
  read_text(params: Params): Promise<string>;
  read_bytes(params: Params): Promise<Uint8Array>;
  write_text(params: Params, checkpoint: Checkpoint): Promise<unknown>;
  edit_text(params: Params, checkpoint: Checkpoint): Promise<unknown>;
  create_dir(params: Params, checkpoint: Checkpoint): Promise<unknown>;
  remove(params: Params, checkpoint: Checkpoint): Promise<unknown>;
  rename(params: Params, checkpoint: Checkpoint): Promise<unknown>;
}

/** A request's parameters, as the protocol sends them (docs/protocol.md). */
export type Params = Record<string, unknown>;

/**
 * Told of a checkpoint (`staged`, `committed`, …) when the caller asked for them; resolves once
 * the caller lets the call go on. Throws the contract's `aborted` when the caller cancels there.
 */
export type Checkpoint = (point: string) => unknown;

/**
 * What `serve` and `Server` drive: the protocol's methods over an implementation of your own.
 * Each answers with the result the protocol names (or its Promise) and throws `FsError` for a
 * contract failure; anything else thrown is answered -32602. `TreeBackend` is one.
 */
export interface ServedBackend {
  /** The `initialize` result: protocol, server, capabilities, limits, … */
  describe(): Record<string, unknown>;
  /** The connection ended. */
  close(): void;
  /** Claims that route methods: `namespace` routes `create_dir`, `remove`, `rename` here. */
  claims?: string[];
  /**
   * True: every call starts as it arrives, without waiting for the others on its connection.
   * Otherwise calls are answered one at a time, in order.
   */
  concurrent?: boolean;
  /** `world/*` requests (test control), by method name. */
  world(method: string, params: Params): Maybe<unknown>;
  resolve(params: Params): Maybe<unknown>;
  stat(params: Params): Maybe<unknown>;
  lstat(params: Params): Maybe<unknown>;
  list_dir(params: Params): Maybe<unknown>;
  /** The file's text; `stream_text` is answered from it too. */
  read_text(params: Params): Maybe<string | Uint8Array>;
  read_bytes(params: Params): Maybe<Uint8Array>;
  write_text(params: Params, checkpoint: Checkpoint): Maybe<unknown>;
  edit_text(params: Params, checkpoint: Checkpoint): Maybe<unknown>;
  create_dir?(params: Params, checkpoint: Checkpoint): Maybe<unknown>;
  remove?(params: Params, checkpoint: Checkpoint): Maybe<unknown>;
  rename?(params: Params, checkpoint: Checkpoint): Maybe<unknown>;
}

/** One connection of the protocol. */
export class Server {
  constructor(backend: ServedBackend, input: NodeJS.ReadableStream, output: NodeJS.WritableStream,
    runOffer?: ((path: string) => Promise<boolean>) | null);
  run(): Promise<void>;
}

/** Runs an adapter process with a fresh backend per connection; resolves to the exit status. */
export function serve(makeBackend: () => ServedBackend, name?: string, argv?: string[]): Promise<number>;
/** Serves one Store for the whole process, with the contract's rules on top. */
export function serveStore(store: Store, name?: string, claims?: string[], argv?: string[]): Promise<number>;
