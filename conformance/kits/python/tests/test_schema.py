"""The kit against the protocol's JSON Schema (docs/protocol.schema.json, generated from the
Rust types that define every message once): every method the schema lists is served here, and
what the kit sends — answers, errors, stream notifications, the checkpoints it asks — is what
the schema says."""

import io
import json
import os
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import seam_kit  # noqa: E402
from seam_kit.protocol import Server, read_frame, write_frame  # noqa: E402

SCHEMA_PATH = os.path.join(HERE, "..", "..", "..", "..", "docs", "protocol.schema.json")

# Requests only a server sends (the kit asks them; it never serves them).
SENT_BY_SERVERS = {"checkpoint"}


def load_schema():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(value, schema, root, at="$"):
    """The places where `value` departs from `schema` (the subset of JSON Schema 2020-12 the
    generated schema uses: $ref into $defs, type, properties, required, additionalProperties,
    items, prefixItems, enum, const, oneOf, anyOf, allOf, minimum, maximum)."""
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{at}: nothing is allowed here"]
    errors = []
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            return [f"{at}: a reference outside $defs: {ref}"]
        errors += validate(value, root["$defs"][ref[len("#/$defs/"):]], root, at)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[k](value) for k in kinds):
            return errors + [f"{at}: {json.dumps(value)[:80]} is not {' or '.join(kinds)}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{at}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{at}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{at}: {value} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{at}: {value} is above {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{at}: {name} is required")
        for name, v in value.items():
            if name in props:
                errors += validate(v, props[name], root, f"{at}.{name}")
            elif "additionalProperties" in schema:
                errors += validate(v, schema["additionalProperties"], root, f"{at}.{name}")
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        for i, v in enumerate(value):
            if i < len(prefix):
                errors += validate(v, prefix[i], root, f"{at}[{i}]")
            elif "items" in schema:
                errors += validate(v, schema["items"], root, f"{at}[{i}]")
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{at}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{at}: more than {schema['maxItems']} items")
    for s in schema.get("allOf", []):
        errors += validate(value, s, root, at)
    if "anyOf" in schema and not any(not validate(value, s, root, at) for s in schema["anyOf"]):
        errors.append(f"{at}: {json.dumps(value)[:80]} matches none of anyOf")
    if "oneOf" in schema:
        matched = sum(1 for s in schema["oneOf"] if not validate(value, s, root, at))
        if matched != 1:
            errors.append(f"{at}: {json.dumps(value)[:80]} matches {matched} of oneOf, not one")
    return errors


class Validator(unittest.TestCase):
    """The validator itself finds what it is there to find."""

    def test_a_wrong_answer_is_found_and_a_right_one_passes(self):
        schema = load_schema()
        target = schema["methods"]["resolve"]["result"]
        good = {"key": "/a", "display_path": "/a", "process_path": "/a", "file_url": "file:///a"}
        self.assertEqual(validate(good, target, schema), [])
        bad = dict(good)
        del bad["file_url"]
        self.assertTrue(any("file_url is required" in e for e in validate(bad, target, schema)))
        info = schema["methods"]["stat"]["result"]
        self.assertEqual(validate(None, info, schema), [])
        self.assertNotEqual(validate({"version": "v", "kind": "fifo", "size": None}, info, schema), [])
        effect = schema["methods"]["world/apply"]["params"]
        self.assertEqual(validate({"effect": "mkfifo", "path": "p"}, effect, schema), [])
        self.assertNotEqual(validate({"effect": "explode", "path": "p"}, effect, schema), [])


class Session:
    """One live connection to the kit's dict example over pipes, a request at a time as a
    client sends them: each request's answer, every notification the kit sent meanwhile, and
    every checkpoint it asked (answered `cancel: false`)."""

    def __init__(self):
        import dict_backend
        r_in, w_in = os.pipe()
        r_out, w_out = os.pipe()
        self.to_kit = os.fdopen(w_in, "wb")
        self.from_kit = os.fdopen(r_out, "rb")
        kit_in, kit_out = os.fdopen(r_in, "rb"), os.fdopen(w_out, "wb")
        backend = seam_kit.TreeBackend(dict_backend.DictStore(), "t")

        def serve():
            try:
                Server(backend, kit_in, kit_out).run()
            finally:
                kit_out.close()
                kit_in.close()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        self.notes = []
        self.asked = []

    def ask(self, rid, method, params, segments=()):
        write_frame(self.to_kit, {"jsonrpc": "2.0", "id": rid, "method": method,
                                  "params": params}, list(segments))
        while True:
            frame = read_frame(self.from_kit)
            if frame is None:
                raise AssertionError(f"the kit closed before answering {method}")
            message = frame[0]
            if message.get("id") == rid and "method" not in message:
                return message
            if "method" in message and "id" in message:  # the kit asks: a checkpoint
                self.asked.append(message)
                write_frame(self.to_kit, {"jsonrpc": "2.0", "id": message["id"],
                                          "result": {"cancel": False}})
                continue
            self.notes.append(message)

    def close(self):
        self.to_kit.close()
        self.thread.join(10)
        self.from_kit.close()


class Schema(unittest.TestCase):
    def setUp(self):
        self.schema = load_schema()

    def check(self, what, value, schema):
        errors = validate(value, schema, self.schema)
        self.assertEqual(errors, [], f"{what}: {json.dumps(value)[:300]}")

    def test_every_method_of_the_schema_is_served(self):
        """A method in the schema that the kit does not know is answered -32601: that fails
        here, so a method added to the protocol and forgotten in the kit fails this test."""
        methods = [m for m in self.schema["methods"] if m not in SENT_BY_SERVERS]
        self.assertIn("resolve", methods)
        kit = Session()
        try:
            kit.ask(1, "initialize", {"protocol": 1})
            kit.ask(2, "world/case", {})
            unknown = [m for i, m in enumerate(methods) if m != "initialize"
                       and kit.ask(10 + i, m, {}).get("error", {}).get("code") == -32601]
        finally:
            kit.close()
        self.assertEqual(unknown, [], "methods of the schema the kit does not serve")
        # And the one a server sends, the kit asks by that name.
        with open(os.path.join(HERE, "..", "seam_kit", "protocol.py"), encoding="utf-8") as f:
            source = f.read()
        for m in SENT_BY_SERVERS:
            self.assertIn(f'"{m}"', source)

    def test_what_the_kit_sends_is_what_the_schema_says(self):
        methods = self.schema["methods"]
        notes = self.schema["notifications"]
        kit = Session()
        answers = {}

        def ask(method, params, segments=()):
            self.check(f"the test's own {method} request", params, methods[method]["params"])
            message = kit.ask(len(answers) + 1, method, params, segments)
            answers.setdefault(method, []).append(message)
            if "error" in message:
                self.check(f"{method} error", message["error"], self.schema["error"])
            else:
                self.check(f"{method} answer", message["result"], methods[method]["result"])
            return message

        try:
            ask("initialize", {"protocol": 1, "stream_segments": True})
            root = ask("world/case", {"durability": "none", "seed": 5})["result"]["root"]
            ask("world/apply", {"effect": "create_file", "path": "a.txt",
                                "bytes": {"$payload": 0}, "mode": 0o644}, [b"one\ntwo\n"])
            ask("world/apply", {"effect": "create_dir", "path": "d"})
            ask("world/snapshot", {})
            target = ask("resolve", {"path": "a.txt"})["result"]
            ref = {"key": target["key"], "display_path": target["display_path"]}
            ask("stat", {"target": ref})
            ask("lstat", {"path": "a.txt"})
            ask("read_text", {"target": ref})
            ask("read_bytes", {"target": ref, "max_bytes": 100})
            top = ask("resolve", {"path": root})["result"]
            ask("list_dir", {"target": {"key": top["key"], "display_path": top["display_path"]}})
            stale = ask("write_text", {"target": ref, "content": {"$payload": 0},
                                       "expected": {"replace_if_version": "x"}}, [b"new\n"])
            ask("write_text", {"target": ref, "content": {"$payload": 0}, "checkpoints": True},
                [b"new\n"])
            ask("edit_text", {"target": ref, "old_string": {"$payload": 0},
                              "new_string": {"$payload": 1}, "replace_all": False},
                [b"new", b"newer"])
            ask("stream_text", {"target": ref})
            ask("create_dir", {"path": "d/e", "request": {"parents": False}})
            ask("rename", {"from": "a.txt", "to": "d/b.txt", "request": {}})
            ask("remove", {"path": "d/b.txt", "request": {}})
            ask("world/entry_mode", {"path": root + "/d"})
            ask("world/entry_mode", {"path": root + "/nothing"})
        finally:
            kit.close()
        failed = {m: a["error"] for m, said in answers.items() for a in said if "error" in a}
        self.assertEqual(list(failed), ["write_text"], failed)
        self.assertEqual(stale["error"]["data"], {"fs": "FS_STALE_VERSION"})
        self.assertEqual([a["result"] for a in answers["world/entry_mode"]],
                         [{"is_dir": True, "mode": 0o755}, None])
        self.assertEqual([n["method"] for n in kit.notes][:2], ["stream/start", "stream/chunk"])
        self.assertEqual([a["params"]["point"] for a in kit.asked],
                         ["before_stage", "staged", "committed"])
        for a in kit.asked:
            self.assertEqual(a["method"], "checkpoint")
            self.check("checkpoint", a["params"], methods["checkpoint"]["params"])
        for note in kit.notes:
            self.assertIn(note["method"], notes, note)
            self.check(note["method"], note.get("params"), notes[note["method"]]["params"])


if __name__ == "__main__":
    unittest.main()
