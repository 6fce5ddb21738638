'use strict';
// The contract's rules that do not depend on storage: its error texts (from the catalogue the Rust
// contract generates, never copied by hand), path spelling, text decoding and the literal edit.

const CATALOGUE = require('../catalogue.json');

const NAME_MAX = CATALOGUE.limits.name_max_bytes;
const NUL_SAMPLE = CATALOGUE.limits.nul_sample_bytes;
const STYLE_SAMPLE = CATALOGUE.limits.style_sample_chars;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A failure the contract names: `code` (`FS_NOT_FOUND`, …) and the exact message. */
class FsError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** The catalogue's message `name` with its placeholders filled in, as an FsError. */
function fail(name, fields = {}) {
  const entry = CATALOGUE.messages[name];
  if (!entry) throw new Error(`no message ${name} in the catalogue`);
  const message = entry.template.replace(/\{(\w+)\}/g, (_, k) => String(fields[k]));
  return new FsError(entry.code, message);
}

/** `.` and `..` taken out of an absolute path, without looking at any storage. */
function lexical(absolute) {
  const parts = [];
  for (const c of absolute.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') { parts.pop(); continue; }
    parts.push(c);
  }
  return '/' + parts.join('/');
}

/** The path as the contract names it, or its refusal of a blank path, a NUL or a long name. */
function displayPath(path, cwd, verb) {
  if (path.trim() === '') throw fail('blank_path');
  const raw = path.startsWith('/') ? path : (cwd.endsWith('/') ? cwd + path : cwd + '/' + path);
  if (path.includes('\0')) throw fail('nul_in_path', { verb, path: raw });
  if (path.split('/').some((c) => Buffer.byteLength(c) > NAME_MAX)) {
    throw fail('name_too_long', { verb, path: raw });
  }
  return lexical(raw);
}

const URL_KEEPS = new Set(Buffer.from(
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._~!$&'()*+,;=:@"));

/** `file://` and the path, every byte outside the unreserved and path characters escaped. */
function fileUrl(path) {
  let out = 'file://';
  for (const b of Buffer.from(path)) {
    out += URL_KEEPS.has(b) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

const lf = (text) => text.split('\r\n').join('\n');
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A file's bytes as the contract's text: binary, invalid UTF-8, a hidden BOM. */
function decode(data, verb, display) {
  if (data.subarray(0, NUL_SAMPLE).includes(0)) throw fail('binary', { verb, path: display });
  let text;
  try {
    text = utf8.decode(data);
  } catch {
    throw fail('invalid_utf8', { verb, path: display });
  }
  return text.startsWith('\ufeff') ? text.slice(1) : text;
}

/** Counts `needle` in `hay` (non-overlapping). */
function count(hay, needle) {
  let n = 0;
  for (let at = hay.indexOf(needle); at !== -1; at = hay.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** The literal edit (`seam::edit`): returns the bytes to publish and the LF before and after. */
function literalEdit(data, old, neu, replaceAll, display) {
  if (data.includes(0)) throw fail('binary', { verb: 'edit', path: display });
  const bom = data.subarray(0, 3).equals(BOM);
  let text;
  try {
    text = utf8.decode(bom ? data.subarray(3) : data);
  } catch {
    throw fail('invalid_utf8', { verb: 'edit', path: display });
  }
  old = lf(old);
  neu = lf(neu);
  if (old === '') throw fail('empty_old_string');
  // The LF view, and where in the text each view position lies (in UTF-16 units).
  const view = [];
  const toText = [];
  for (let i = 0; i < text.length;) {
    toText.push(i);
    if (text.startsWith('\r\n', i)) { view.push('\n'); i += 2; } else { view.push(text[i]); i += 1; }
  }
  const v = view.join('');
  toText.push(text.length);
  const starts = [];
  for (let at = v.indexOf(old); at !== -1; at = v.indexOf(old, at + old.length)) starts.push(at);
  if (starts.length === 0) throw fail('old_string_not_found', { path: display });
  if (starts.length > 1 && !replaceAll) {
    throw fail('ambiguous_edit', { path: display, count: starts.length });
  }
  // The style sample counts characters, as the contract does (code points, not UTF-16 units).
  const sample = Array.from(text).slice(0, STYLE_SAMPLE).join('');
  const crlf = count(sample, '\r\n');
  const replacement = crlf > count(sample, '\n') - crlf ? neu.split('\n').join('\r\n') : neu;
  let out = '';
  let cursor = 0;
  for (const m of starts) {
    out += text.slice(cursor, toText[m]) + replacement;
    cursor = toText[m + old.length];
  }
  out += text.slice(cursor);
  const bytes = Buffer.concat([bom ? BOM : Buffer.alloc(0), Buffer.from(out)]);
  return { data: bytes, before: v, after: lf(out) };
}

module.exports = { CATALOGUE, FsError, fail, lexical, displayPath, fileUrl, lf, decode, literalEdit };
