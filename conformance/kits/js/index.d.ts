// Type declarations of seam-kit (the kit itself is plain JavaScript: no build step).

/** What `Store.node` answers. */
export interface Node {
  kind: 'file' | 'dir' | 'other';
  /** Opaque; changes on every change, never given again to different content. */
  version: string;
  /** A file's length in bytes; null otherwise. */
  size: number | null;
  /** Permission bits. */
  mode: number;
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
  /** What the gate's world can do on this store. */
  world: { fifos: boolean; restore_mtime: boolean };
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
export class TreeBackend {
  constructor(store: Store, name: string, claims?: string[]);
}

/** One connection of the protocol. */
export class Server {
  constructor(backend: unknown, input: NodeJS.ReadableStream, output: NodeJS.WritableStream,
    runOffer?: ((path: string) => Promise<boolean>) | null);
  run(): Promise<void>;
}

/** Runs an adapter process with a fresh backend per connection; resolves to the exit status. */
export function serve(makeBackend: () => unknown, name?: string, argv?: string[]): Promise<number>;
/** Serves one Store for the whole process, with the contract's rules on top. */
export function serveStore(store: Store, name?: string, claims?: string[], argv?: string[]): Promise<number>;
