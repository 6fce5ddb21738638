"""A PEP 517 build backend in the standard library alone, so that `pip install conformance/kits/python`
works on a machine with no network and no `setuptools`/`wheel`: it packs `seam_kit/` into a
wheel (a zip with the metadata pip reads). Nothing to compile, no dependencies."""

import base64
import hashlib
import os
import zipfile

NAME, VERSION = "seam_kit", "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST = f"{NAME}-{VERSION}.dist-info"

METADATA = f"""Metadata-Version: 2.1
Name: seam-kit
Version: {VERSION}
Summary: Write a seam filesystem backend in Python: the wire protocol and the contract's rules, you write the storage
License: MIT OR Apache-2.0
Requires-Python: >=3.8
"""

WHEEL = """Wheel-Version: 1.0
Generator: seam-kit _build/backend.py
Root-Is-Purelib: true
Tag: py3-none-any
"""


def _files():
    package = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(package)):
        if name.endswith((".py", ".json", ".typed")):
            yield f"{NAME}/{name}", os.path.join(package, name)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    path = os.path.join(metadata_directory, DIST)
    os.makedirs(path, exist_ok=True)
    for name, text in (("METADATA", METADATA), ("WHEEL", WHEEL)):
        with open(os.path.join(path, name), "w", encoding="utf-8") as f:
            f.write(text)
    return DIST


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, path in _files():
            with open(path, "rb") as f:
                data = f.read()
            z.writestr(arcname, data)
            record.append(_record_line(arcname, data))
        for name, text in (("METADATA", METADATA), ("WHEEL", WHEEL)):
            data = text.encode()
            z.writestr(f"{DIST}/{name}", data)
            record.append(_record_line(f"{DIST}/{name}", data))
        record.append(f"{DIST}/RECORD,,")
        z.writestr(f"{DIST}/RECORD", "\n".join(record) + "\n")
    return wheel
