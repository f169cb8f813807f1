"""dprl's report message (Go package ``agents/protocol``) and its two encodings.

Only what a locally private user needs is here: the :class:`Header` (with its :class:`Dims`)
and the :class:`Privatized` report, encoded

* as JSON exactly as Go's ``encoding/json`` writes ``protocol.Privatized`` (same field order,
  ``omitempty`` fields left out, floats in Go's shortest round-trip form with Go's switch to
  ``e`` notation, HTML-safe string escapes), so the bytes equal ``protocol.EncodeJSON``'s;
* in dprl's binary form, byte for byte ``protocol.EncodeBinary``: ``b"DPRL"``, one byte
  :data:`SCHEMA_VERSION`, uvarint length + the header's JSON, uvarint number of blocks, and per
  block uvarint length + little-endian IEEE-754 doubles.

:func:`decode_binary` and :func:`decode_json` read a privatised report back (used by the tests;
the Go decoder, ``protocol.Decode``, remains the reference validator).
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

__all__ = [
    "SCHEMA_VERSION",
    "MAGIC",
    "Dims",
    "Header",
    "Privatized",
    "go_json_float",
    "go_json_string",
    "encode_json",
    "encode_binary",
    "decode_binary",
    "decode_json",
]

SCHEMA_VERSION = 1
"""protocol.SchemaVersion: the version of the report message."""

MAGIC = b"DPRL"
"""protocol.Magic: the first bytes of every binary report."""

KIND_PRIVATIZED = "privatized"
FAMILY_TABULAR = "tabular"


@dataclass(frozen=True)
class Dims:
    """protocol.Dims: a curator's public dimensions (0 / empty fields are omitted in JSON)."""

    horizon: int
    states: int = 0
    actions: int = 0
    state_dim: int = 0
    input_dim: int = 0
    steps: int = 0
    regressors: tuple[int, ...] = ()
    blocks: tuple[int, ...] = ()

    def to_json(self) -> str:
        parts = [f'"horizon":{_go_int(self.horizon)}']
        for name in ("states", "actions", "state_dim", "input_dim", "steps"):
            v = getattr(self, name)
            if v != 0:
                parts.append(f'"{name}":{_go_int(v)}')
        for name in ("regressors", "blocks"):
            v = getattr(self, name)
            if len(v) > 0:
                parts.append(f'"{name}":[' + ",".join(_go_int(x) for x in v) + "]")
        return "{" + ",".join(parts) + "}"

    @classmethod
    def from_obj(cls, o: dict[str, Any]) -> Dims:
        return cls(
            horizon=int(o["horizon"]),
            states=int(o.get("states", 0)),
            actions=int(o.get("actions", 0)),
            state_dim=int(o.get("state_dim", 0)),
            input_dim=int(o.get("input_dim", 0)),
            steps=int(o.get("steps", 0)),
            regressors=tuple(int(x) for x in (o.get("regressors") or ())),
            blocks=tuple(int(x) for x in (o.get("blocks") or ())),
        )


@dataclass(frozen=True)
class Header:
    """protocol.Header: everything a receiver checks before reading a report."""

    agent: str
    kind: str
    dims: Dims
    family: str = FAMILY_TABULAR
    schema: int = SCHEMA_VERSION

    def to_json(self) -> str:
        """Go's json.Marshal of the header (field order schema, family, agent, kind, dims)."""
        return (
            f'{{"schema":{_go_int(self.schema)},"family":{go_json_string(self.family)},'
            f'"agent":{go_json_string(self.agent)},"kind":{go_json_string(self.kind)},'
            f'"dims":{self.dims.to_json()}}}'
        )

    @classmethod
    def from_obj(cls, o: dict[str, Any]) -> Header:
        return cls(
            schema=int(o["schema"]),
            family=str(o["family"]),
            agent=str(o["agent"]),
            kind=str(o["kind"]),
            dims=Dims.from_obj(o["dims"]),
        )


@dataclass(frozen=True)
class Privatized:
    """protocol.Privatized: a report the user privatised herself (kind ``privatized``)."""

    header: Header
    blocks: tuple[tuple[float, ...], ...] = field(default_factory=tuple)


def _go_int(v: int) -> str:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"want an int, got {type(v).__name__}")
    return str(v)


def go_json_float(x: float) -> str:
    """Format a float64 as Go's encoding/json does.

    Shortest round-trip digits (Python's ``repr`` and Go's ``strconv`` with precision -1 pick
    the same digits: the shortest string that reads back to the same double, the closest one
    among those); ``e`` notation when ``|x| < 1e-6`` or ``|x| >= 1e21`` (exponent without a
    leading zero, e.g. ``1e-7``, ``1e+21``), else plain decimal (``0.000001``,
    ``100000000000000000000``). Non-finite numbers cannot be encoded (Go refuses them too).
    """
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"json: unsupported value: {x!r} (reports hold finite numbers only)")
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    t = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(str(d) for d in t.digits)
    exp = int(t.exponent)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    n = len(digits)
    a = abs(x)
    if a < 1e-6 or a >= 1e21:
        e10 = exp + n - 1  # exponent of the leading digit
        mant = digits[0] + ("." + digits[1:] if n > 1 else "")
        es = f"{abs(e10):02d}"
        if e10 < 0 and es[0] == "0":  # Go's clean-up: e-07 -> e-7
            es = es[1:]
        return f"{sign}{mant}e{'-' if e10 < 0 else '+'}{es}"
    if exp >= 0:
        return sign + digits + "0" * exp
    point = n + exp
    if point > 0:
        return sign + digits[:point] + "." + digits[point:]
    return sign + "0." + "0" * (-point) + digits


_HEX = "0123456789abcdef"
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def go_json_string(s: str) -> str:
    """Quote a string as Go's encoding/json does (HTML-safe: ``<``, ``>``, ``&`` as ``\\u003c``
    …, control characters as ``\\uXXXX`` except ``\\b \\f \\n \\r \\t``, U+2028 and U+2029
    escaped, other characters written as UTF-8)."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif c < 0x20 or ch in "<>&":
            out.append("\\u00" + _HEX[c >> 4] + _HEX[c & 0xF])
        elif c in (0x2028, 0x2029):
            out.append("\\u202" + _HEX[c & 0xF])
        elif 0xD800 <= c <= 0xDFFF:
            raise ValueError("json: string holds a lone surrogate (not valid UTF-8)")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def encode_json(r: Privatized) -> bytes:
    """protocol.EncodeJSON of a Privatized report: ``{"header":…,"blocks":[[…]]}``."""
    blocks = ",".join("[" + ",".join(go_json_float(v) for v in b) + "]" for b in r.blocks)
    return ('{"header":' + r.header.to_json() + ',"blocks":[' + blocks + "]}").encode("utf-8")


def _uvarint(n: int) -> bytes:
    if n < 0:
        raise ValueError("uvarint: negative")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_binary(r: Privatized) -> bytes:
    """protocol.EncodeBinary of a Privatized report."""
    hd = r.header.to_json().encode("utf-8")
    out = bytearray(MAGIC)
    out.append(SCHEMA_VERSION)
    out += _uvarint(len(hd))
    out += hd
    out += _uvarint(len(r.blocks))
    for b in r.blocks:
        out += _uvarint(len(b))
        out += struct.pack(f"<{len(b)}d", *b)
    return bytes(out)


def _read_uvarint(b: bytes, i: int) -> tuple[int, int]:
    shift = 0
    v = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("binary: truncated or malformed count")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def decode_binary(data: bytes) -> Privatized:
    """Read a binary privatised report (structure only; no validation against a curator)."""
    if not data.startswith(MAGIC):
        raise ValueError("binary: missing magic DPRL")
    i = len(MAGIC)
    if i >= len(data) or data[i] != SCHEMA_VERSION:
        raise ValueError("header.schema: unsupported schema version")
    n, i = _read_uvarint(data, i + 1)
    header = Header.from_obj(_loads_strict(data[i : i + n]))
    i += n
    nb, i = _read_uvarint(data, i)
    blocks = []
    for _ in range(nb):
        m, i = _read_uvarint(data, i)
        if i + 8 * m > len(data):
            raise ValueError("blocks: count does not fit in the bytes left")
        blocks.append(tuple(struct.unpack_from(f"<{m}d", data, i)))
        i += 8 * m
    if i != len(data):
        raise ValueError(f"binary: {len(data) - i} bytes of trailing data")
    return Privatized(header=header, blocks=tuple(blocks))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"json: duplicate key {k!r}")
        out[k] = v
    return out


def _loads_strict(data: bytes | str) -> Any:
    return json.loads(data, object_pairs_hook=_no_duplicates)


def decode_json(data: bytes | str) -> Privatized:
    """Read a JSON privatised report (duplicate keys and unknown top-level fields refused)."""
    o = _loads_strict(data)
    if set(o) != {"header", "blocks"}:
        raise ValueError(f"json: want the fields header and blocks, got {sorted(o)}")
    blocks = tuple(tuple(float(v) for v in b) for b in o["blocks"])
    return Privatized(header=Header.from_obj(o["header"]), blocks=blocks)
