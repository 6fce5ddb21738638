"""seam_kit: write a seam backend in Python as one `Store` class and call `serve()`.

The kit speaks the whole wire protocol (docs/protocol.md) and keeps every rule of the contract
that does not depend on storage, with the exact texts from the catalogue the Rust contract
generates. What a backend author writes is the storage: see `Store`, and
`examples/dict_backend.py` for a complete backend in well under 200 lines.

    import seam_kit

    class MyStore(seam_kit.Store):
        ...

    if __name__ == "__main__":
        raise SystemExit(seam_kit.serve_store(MyStore(), name="my-store"))

Gate it: `seam check --provider exec:'python3 my_store.py'`.
"""

from .contract import CATALOGUE, FsError, decode, display_path, fail, file_url, lexical, literal_edit
from .protocol import PROTOCOL, ProtocolError, Server, serve
from .tree import ABSENT, ANY, Conflict, Node, Store, TreeBackend

__all__ = ["ABSENT", "ANY", "CATALOGUE", "Conflict", "FsError", "Node", "PROTOCOL",
           "ProtocolError", "Server", "Store", "TreeBackend", "decode", "display_path", "fail",
           "file_url", "lexical", "literal_edit", "serve", "serve_store"]


def serve_store(store, name="seam-kit", claims=("read_bytes", "cancel_points", "modes"),
                argv=None):
    """Serves `store` (one for the whole process, shared by every connection) with the
    contract's rules on top: `serve(lambda: TreeBackend(store, name, claims))`."""
    return serve(lambda: TreeBackend(store, name, claims), name=name, argv=argv)
