"""Encoder and decoder of the engine's binary data format (see engine/FORMAT.md)."""

import itertools
import os
import struct
import zlib

from .errors import BadData

MAGIC = b"SPDL"
VERSION = 1
HEADER = struct.Struct("<4sBBHQ")
SELF_KEYED = 0x01  # header flag of a sorted run: its records are their own sort keys (FORMAT.md)
_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")
_F64 = struct.Struct("<d")
_TAG_I64 = struct.Struct("<Bq")
_TAG_F64 = struct.Struct("<Bd")
_TAG_U32 = struct.Struct("<BI")
_PAIR_STR = struct.Struct("<BBI")
_I64_LIMIT = 1 << 63


def py_encode_into(out, v):
    """Append the encoding of value `v` to bytearray `out` (pure Python; see _codec.c)."""
    t = type(v)
    if t is tuple and len(v) == 2 and type(v[0]) is str:  # fast path: (word, count) pairs
        a, b = v
        try:
            ab = a.encode()
        except UnicodeEncodeError as e:
            raise BadData(f"string is not valid unicode: {e}") from None
        out += _PAIR_STR.pack(7, 5, len(ab))
        out += ab
        if type(b) is int and -_I64_LIMIT <= b < _I64_LIMIT:
            out += _TAG_I64.pack(3, b)
        else:
            py_encode_into(out, b)
        return
    if t is str:
        try:
            b = v.encode()
        except UnicodeEncodeError as e:
            raise BadData(f"string is not valid unicode: {e}") from None
        out += _TAG_U32.pack(5, len(b))
        out += b
    elif t is int:
        try:
            out += _TAG_I64.pack(3, v)
        except struct.error:
            raise BadData(f"int {v} does not fit in i64") from None
    elif t is tuple and len(v) == 2:
        out.append(7)
        py_encode_into(out, v[0])
        py_encode_into(out, v[1])
    elif t is float:
        out += _TAG_F64.pack(4, v)
    elif v is None:
        out.append(0)
    elif t is bool:
        out.append(2 if v else 1)
    elif t is list or t is tuple:
        out += _TAG_U32.pack(8, len(v))
        for x in v:
            py_encode_into(out, x)
    elif t is dict:
        out += _TAG_U32.pack(9, len(v))
        for k, x in v.items():
            py_encode_into(out, k)
            py_encode_into(out, x)
    elif t is bytes or t is bytearray or t is memoryview:
        out += _TAG_U32.pack(6, v.nbytes if t is memoryview else len(v))  # bytes, not items
        out += v
    else:
        raise BadData(f"type {t.__name__} is not supported by the engine format")


def encode(v):
    """Return the encoding of one value as bytes."""
    out = bytearray()
    encode_into(out, v)
    return bytes(out)


def py_decode_at(buf, pos):
    """Decode the value at `pos` of `buf`; return (value, next position) (pure Python)."""
    tag = buf[pos]
    pos += 1
    if tag == 5:
        n = _U32.unpack_from(buf, pos)[0]
        pos += 4
        if pos + n > len(buf):
            raise BadData(f"string of {n} bytes runs past the end at byte {pos}")
        return str(buf[pos:pos + n], "utf-8"), pos + n
    if tag == 3:
        return _I64.unpack_from(buf, pos)[0], pos + 8
    if tag == 7:
        if buf[pos] == 5:  # fast path: pair with a string first
            n = _U32.unpack_from(buf, pos + 1)[0]
            pos += 5
            if pos + n > len(buf):
                raise BadData(f"string of {n} bytes runs past the end at byte {pos}")
            a = str(buf[pos:pos + n], "utf-8")
            pos += n
        else:
            a, pos = py_decode_at(buf, pos)
        if buf[pos] == 3:
            return (a, _I64.unpack_from(buf, pos + 1)[0]), pos + 9
        b, pos = py_decode_at(buf, pos)
        return (a, b), pos
    if tag == 4:
        return _F64.unpack_from(buf, pos)[0], pos + 8
    if tag == 0:
        return None, pos
    if tag == 1:
        return False, pos
    if tag == 2:
        return True, pos
    if tag == 8:
        n = _U32.unpack_from(buf, pos)[0]
        pos += 4
        items = []
        for _ in range(n):
            x, pos = py_decode_at(buf, pos)
            items.append(x)
        return items, pos
    if tag == 9:
        n = _U32.unpack_from(buf, pos)[0]
        pos += 4
        d = {}
        for _ in range(n):
            at = pos
            k, pos = py_decode_at(buf, pos)
            x, pos = py_decode_at(buf, pos)
            try:
                d[k] = x
            except TypeError:  # e.g. a list key (a 3-tuple key is written as a list)
                raise BadData(f"map key of type {type(k).__name__} at byte {at} cannot be a "
                              "Python dict key") from None
        return d, pos
    if tag == 6:
        n = _U32.unpack_from(buf, pos)[0]
        pos += 4
        if pos + n > len(buf):
            raise BadData(f"bytes of length {n} run past the end at byte {pos}")
        return bytes(buf[pos:pos + n]), pos + n
    raise BadData(f"unknown tag 0x{tag:02x} at byte {pos - 1}")


def _py_encode_records(out, records):
    count = 0
    for r in records:
        py_encode_into(out, r)
        count += 1
    return count


def _py_decode_all(buf, pos, count):
    items = []
    for _ in range(count):
        v, pos = py_decode_at(buf, pos)
        items.append(v)
    return items, pos


try:  # the C codec (_codec.c), unless absent or SPINDLE_PURE_CODEC=1
    if os.environ.get("SPINDLE_PURE_CODEC") == "1":
        raise ImportError("SPINDLE_PURE_CODEC=1")
    from . import _codec
    _codec.set_bad_data(BadData)
    encode_into, decode_at, decode_all = _codec.encode_into, _codec.decode_at, _codec.decode_all
    encode_records = _codec.encode_records
    C_CODEC = True
except ImportError:
    encode_into, decode_at, decode_all = py_encode_into, py_decode_at, _py_decode_all
    encode_records = _py_encode_records
    C_CODEC = False


def decode(buf):
    """Decode one value that fills `buf`."""
    v, _ = decode_at(buf, 0)
    return v


def hash_key(k):
    """Unsigned crc32 of the key's hash bytes (FORMAT.md 'Hash partitioning')."""
    t = type(k)
    if t is str:
        return zlib.crc32(k.encode())
    if t is int:
        return zlib.crc32(_I64.pack(k))
    out = bytearray()
    encode_into(out, k)
    return zlib.crc32(out)


def write_partition(path, records):
    """Write an iterable of records as one partition file; return (count, bytes)."""
    body = bytearray()
    count = encode_records(body, records)
    return write_encoded(path, body, count)


def write_encoded(path, body, count, flags=0):
    """Write already encoded records as a partition file; return (count, bytes)."""
    with open(path, "wb") as f:
        f.write(HEADER.pack(MAGIC, VERSION, flags, 0, count))
        f.write(body)
    return count, HEADER.size + len(body)


def iter_buffer(buf, where="buffer"):
    """Yield the records of a partition held in bytes `buf`."""
    if len(buf) < HEADER.size:
        raise BadData(f"{where}: too short for a partition header")
    magic, version, _flags, _res, count = HEADER.unpack_from(buf, 0)
    if magic != MAGIC or version != VERSION:
        raise BadData(f"{where}: not a version {VERSION} partition file")
    return _iter_records(buf, HEADER.size, count, f"{where}: truncated or corrupt record")


def _iter_records(buf, pos, count, what):
    """Yield `count` encoded records of `buf` from `pos`; BadData starting with `what` if not."""
    try:
        while count > 0:
            chunk, pos = decode_all(buf, pos, min(count, 4096))
            count -= len(chunk)
            yield from chunk
    except (IndexError, struct.error, UnicodeDecodeError, BadData) as e:
        raise BadData(f"{what}: {e}") from None


def file_flags(path):
    """The flags byte of a partition file's header."""
    with open(path, "rb") as f:
        header = f.read(HEADER.size)
    return HEADER.unpack(header)[2] if len(header) == HEADER.size else 0


def iter_file(path):
    """Yield the records of a partition file."""
    with open(path, "rb") as f:
        buf = f.read()
    return iter_buffer(buf, path)


def read_file(path):
    """Return the records of a partition file as a list."""
    return list(iter_file(path))


class RawPartition:
    """A partition kept in memory as its encoded records, zlib-compressed at `level` (0 = not)
    (storage level RAW_MEMORY): far smaller than Python objects, decoded on each read.
    Compressed as it is encoded, 1 MiB at a time, so storing never holds the whole encoding."""

    __slots__ = ("blob", "level", "count")

    def __init__(self, records, level):
        self.level = level
        comp = zlib.compressobj(level) if level > 0 else None
        parts, body, count = [], bytearray(), 0
        records = iter(records)
        while n := encode_records(body, itertools.islice(records, 4096)):
            count += n
            if len(body) >= 1 << 20:
                parts.append(comp.compress(body) if comp else bytes(body))
                body = bytearray()
        parts.append(comp.compress(body) + comp.flush() if comp else bytes(body))
        self.blob = b"".join(parts)
        self.count = count

    def body(self):
        """The encoded records (a partition file's bytes after its header)."""
        return zlib.decompress(self.blob) if self.level > 0 else self.blob

    def records(self):
        return _iter_records(self.body(), 0, self.count, "a RAW_MEMORY partition is corrupt")
