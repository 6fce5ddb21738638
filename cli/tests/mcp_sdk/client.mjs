// `seam mcp` through the official TypeScript SDK client, as an agent host on that SDK runs it.
//
//   node client.mjs SEAM ROOT [--big]
//
// Calls every listed tool once on a small tree (the SDK validates each `structuredContent`
// against the tool's `outputSchema` and throws if it does not fit), then, with `--big`, writes,
// edits and rewrites files of 4, 16 and 30 MiB. Prints one JSON line per call: the tool, whether
// it failed, and the size of its answer as the SDK received it. Exits non-zero on the first
// thing that goes wrong, with the reason on stderr. The Rust test checks the disk afterwards.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const [seam, root, ...flags] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: seam, args: ["mcp", "--root", root] });
const client = new Client({ name: "seam-sdk-test", version: "0.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const withSchema = new Set(tools.filter((t) => t.outputSchema).map((t) => t.name));
// Checked here too, beside the SDK, with a control: the same answer with one required field
// taken out must not fit (a schema that fits anything would pass every call).
const ajv = new Ajv({ strict: false });
const validators = new Map(tools.filter((t) => t.outputSchema).map((t) => [t.name, ajv.compile(t.outputSchema)]));

function checkAgainstSchema(name, structured) {
  const validate = validators.get(name);
  if (!validate(structured)) {
    throw new Error(`${name}: structuredContent does not fit its outputSchema: ${ajv.errorsText(validate.errors)}`);
  }
  const required = tools.find((t) => t.name === name).outputSchema.required ?? [];
  if (required.length === 0) {
    throw new Error(`${name}: its outputSchema requires nothing`);
  }
  const broken = { ...structured };
  delete broken[required[0]];
  if (validate(broken)) {
    throw new Error(`${name}: its outputSchema accepts an answer without ${required[0]}`);
  }
}

async function call(name, args) {
  const started = performance.now();
  // The SDK checks the structured content against the schema it listed.
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  const answer = Buffer.byteLength(JSON.stringify(result));
  const line = {
    tool: name,
    error: result.isError === true,
    structured: result.structuredContent !== undefined,
    schema: withSchema.has(name),
    bytes: answer,
    ms: Math.round(performance.now() - started),
  };
  if (line.error) {
    line.text = result.content.map((b) => b.text ?? "").join("");
  }
  console.log(JSON.stringify(line));
  if (line.error) {
    throw new Error(`${name} failed: ${line.text}`);
  }
  if (!line.structured) {
    throw new Error(`${name} answered no structuredContent`);
  }
  checkAgainstSchema(name, result.structuredContent);
  return result;
}

await call("write", { file_path: "t/a.txt", content: "hello\nworld\n" });
await call("read", { file_path: "t/a.txt" });
await call("edit", { file_path: "t/a.txt", old_string: "hello", new_string: "HELLO" });
await call("read_image", { file_path: "img.png" });
await call("glob", { pattern: "**/*.txt" });
await call("grep", { pattern: "HELLO" });
await call("str_replace_editor", { command: "view", path: `${root}/t/a.txt` });
await call("str_replace_editor", { command: "str_replace", path: `${root}/t/a.txt`, old_str: "world", new_str: "WORLD" });
await call("list", { path: "t" });
await call("tree", { path: "." });
await call("info", { file_path: "t/a.txt" });
await call("read_many", { file_paths: ["t/a.txt", "img.png"] });
await call("roots", {});
await call("create_directory", { path: "d2" });
await call("move", { source: "t/a.txt", destination: "d2/b.txt" });
await call("delete", { path: "d2/b.txt" });

if (flags.includes("--big")) {
  for (const mib of [4, 16, 30]) {
    const line = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n";
    const lines = Math.floor((mib << 20) / line.length);
    const name = `big-${mib}.txt`;
    const content = line.repeat(lines);
    await call("write", { file_path: name, content });
    const middle = `${line.slice(0, -1)} (line ${Math.floor(lines / 2)})`;
    // One line changed in the middle: the edit needs a unique old_string, so the file is
    // rewritten once with a marked line, then that line is edited.
    const marked = line.repeat(Math.floor(lines / 2)) + middle + "\n" + line.repeat(lines - Math.floor(lines / 2) - 1);
    await call("write", { file_path: name, content: marked });
    await call("edit", { file_path: name, old_string: middle, new_string: middle.toUpperCase() });
  }
}

// The session is alive: it lists and answers again.
await client.listTools();
await call("roots", {});
await client.close();
