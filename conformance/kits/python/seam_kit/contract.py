"""The contract's rules that do not depend on storage: its error texts (from the catalogue the Rust
contract generates, never copied by hand), path spelling, text decoding and the literal edit.

Everything here is what `seam check` compares exactly; a backend built on the kit gets it right by
calling these instead of writing its own.
"""

import bisect
import itertools
import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalogue.json"),
          encoding="utf-8") as _f:
    CATALOGUE = json.load(_f)

LIMITS = CATALOGUE["limits"]
NAME_MAX = LIMITS["name_max_bytes"]
NUL_SAMPLE = LIMITS["nul_sample_bytes"]
STYLE_SAMPLE = LIMITS["style_sample_chars"]
BOM = b"\xef\xbb\xbf"


class FsError(Exception):
    """A failure the contract names: `code` (`FS_NOT_FOUND`, …) and the exact message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def fail(name, **fields):
    """The catalogue's message `name` with its placeholders filled in, as an FsError:
    `fail("not_found", verb="read", path="/w/a")`."""
    entry = CATALOGUE["messages"][name]
    return FsError(entry["code"], entry["template"].format(**fields))


# --- paths ----------------------------------------------------------------------------------

def lexical(absolute):
    """`.` and `..` taken out of an absolute path, without looking at any storage."""
    parts = []
    for c in absolute.split("/"):
        if c in ("", "."):
            continue
        if c == "..":
            if parts:
                parts.pop()
            continue
        parts.append(c)
    return "/" + "/".join(parts)


def display_path(path, cwd, verb):
    """The path as the contract names it in messages (made absolute against `cwd`, normalised),
    or the contract's refusal of a blank path, a NUL byte or an over-long name (named as given)."""
    if path.strip() == "":
        raise fail("blank_path")
    raw = path if path.startswith("/") else (cwd + path if cwd.endswith("/") else cwd + "/" + path)
    if "\0" in path:
        raise fail("nul_in_path", verb=verb, path=raw)
    if any(len(c.encode()) > NAME_MAX for c in path.split("/")):
        raise fail("name_too_long", verb=verb, path=raw)
    return lexical(raw)


_URL_KEEPS = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._~!$&'()*+,;=:@")


def file_url(path):
    """`file://` and the path, every byte outside the unreserved and path characters escaped."""
    return "file://" + "".join(chr(b) if b in _URL_KEEPS else "%%%02X" % b for b in path.encode())


# --- text -----------------------------------------------------------------------------------

def lf(text):
    return text.replace("\r\n", "\n")


def decode(data, verb, display):
    """A file's bytes as the contract's text: a NUL in the first bytes is binary, anything but
    strict UTF-8 is not text, a leading BOM is hidden."""
    if b"\0" in data[:NUL_SAMPLE]:
        raise fail("binary", verb=verb, path=display)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("invalid_utf8", verb=verb, path=display) from None
    return text[1:] if text.startswith("\ufeff") else text


def literal_edit(data, old, new, replace_all, display):
    """The literal edit (`seam::edit`): `old` found in the file's LF view, replaced by `new` in the
    file's own line-ending style, every other byte kept (a BOM too). Returns the bytes to publish
    and the before and after texts (LF)."""
    if b"\0" in data:
        raise fail("binary", verb="edit", path=display)
    bom = data.startswith(BOM)
    try:
        text = data[len(BOM) if bom else 0:].decode("utf-8")
    except UnicodeDecodeError:
        raise fail("invalid_utf8", verb="edit", path=display) from None
    old, new = lf(old), lf(new)
    if old == "":
        raise fail("empty_old_string")
    # The LF view, and where in the text each view position lies: a view position is the text's
    # plus one for each CRLF before it (its "\n" stands for both bytes, so a match takes the \r).
    pieces = text.split("\r\n")
    view = "\n".join(pieces)
    # Where each CRLF ends in the view (just past its "\n").
    ends = list(itertools.accumulate(len(p) + 1 for p in pieces[:-1]))

    def to_text(v):
        return v + bisect.bisect_right(ends, v)

    starts, at = [], view.find(old)
    while at != -1:
        starts.append(at)
        at = view.find(old, at + len(old))
    if not starts:
        raise fail("old_string_not_found", path=display)
    if len(starts) > 1 and not replace_all:
        raise fail("ambiguous_edit", path=display, count=len(starts))
    sample = text[:STYLE_SAMPLE]
    crlf = sample.count("\r\n")
    replacement = new.replace("\n", "\r\n") if crlf > sample.count("\n") - crlf else new
    out, cursor = [], 0
    for m in starts:
        out.append(text[cursor:to_text(m)])
        out.append(replacement)
        cursor = to_text(m + len(old))
    out.append(text[cursor:])
    result = "".join(out)
    return (BOM if bom else b"") + result.encode(), view, lf(result)
