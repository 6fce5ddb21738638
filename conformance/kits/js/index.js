'use strict';
// seam-kit: write a seam backend in JavaScript or TypeScript as one Store class and call
// serveStore(). The kit speaks the whole wire protocol (docs/protocol.md) and keeps every rule of
// the contract that does not depend on storage, with the exact texts from the catalogue the Rust
// contract generates. See examples/dict_backend.js.

const contract = require('./lib/contract');
const protocol = require('./lib/protocol');
const tree = require('./lib/tree');

/** Serves `store` (one for the process, shared by every connection) with the contract on top. */
function serveStore(store, name = 'seam-kit', claims = ['read_bytes', 'cancel_points', 'modes'], argv) {
  return protocol.serve(() => new tree.TreeBackend(store, name, claims), name, argv);
}

module.exports = {
  CATALOGUE: contract.CATALOGUE,
  FsError: contract.FsError,
  fail: contract.fail,
  displayPath: contract.displayPath,
  fileUrl: contract.fileUrl,
  lexical: contract.lexical,
  decode: contract.decode,
  literalEdit: contract.literalEdit,
  PROTOCOL: protocol.PROTOCOL,
  ProtocolError: protocol.ProtocolError,
  Server: protocol.Server,
  serve: protocol.serve,
  ANY: tree.ANY,
  ABSENT: tree.ABSENT,
  Conflict: tree.Conflict,
  Store: tree.Store,
  TreeBackend: tree.TreeBackend,
  serveStore,
};
