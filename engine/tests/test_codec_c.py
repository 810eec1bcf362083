"""The C codec (_codec.c) writes the same bytes as the pure-Python reference codec and reads
them back the same, with the same errors. The C-specific tests skip only when the extension was
not built (then codec.py falls back to the pure-Python codec, which the rest of the suite uses).

`python engine/tests/test_codec_c.py [N]` prints C vs pure-Python throughput on N (str, int)
pairs (default 1,000,000)."""

import collections
import decimal
import enum
import importlib.util
import math
import os
import random
import struct
import subprocess
import sys
import time

import pytest

from spindle_engine import codec
from spindle_engine.errors import BadData

BUILT = importlib.util.find_spec("spindle_engine._codec") is not None
PURE_FORCED = os.environ.get("SPINDLE_PURE_CODEC") == "1"
needs_c = pytest.mark.skipif(not codec.C_CODEC, reason="the C codec was not built (or "
                             "SPINDLE_PURE_CODEC=1)")
ENGINE_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")


def _random_str(rng):
    alphabet = ("aé€😀\x00\n" + "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(5)) +
                "".join(chr(rng.randint(0x10000, 0x10FFFF)) for _ in range(2)))  # astral
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 5, 12, 300])))


def _random_value(rng, depth=0):
    kinds = ["none", "bool", "int", "float", "str", "bytes"] + \
        (["pair", "strpair", "tuple", "list", "dict"] if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, 1, -1, 2**63 - 1, -2**63, 2**63 - 2, -2**63 + 1, 2**31, -2**32,
                           rng.randint(-2**63, 2**63 - 1), rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324,
                           rng.uniform(-1e300, 1e300), rng.random()])
    if kind == "str":
        return _random_str(rng)
    if kind == "bytes":
        return rng.choice([bytes, bytearray])(rng.randint(0, 255)
                                              for _ in range(rng.randint(0, 10)))
    if kind == "pair":
        return (_random_value(rng, depth + 1), _random_value(rng, depth + 1))
    if kind == "strpair":  # the (str, x) fast paths of both codecs
        return (_random_str(rng), _random_value(rng, depth + 1))
    if kind == "tuple":
        return tuple(_random_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 4])))
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 2, 5]))]
    keys = [_random_value(rng, 4) for _ in range(rng.randint(0, 4))]
    keys = [k for k in keys if not (isinstance(k, float) and math.isnan(k))
            and not isinstance(k, bytearray)]
    rng.shuffle(keys)  # insertion order is kept by both codecs
    return {k: _random_value(rng, depth + 1) for k in keys}


def _py(v):
    out = bytearray()
    codec.py_encode_into(out, v)
    return bytes(out)


def _c(v):
    out = bytearray(b"prefix")
    codec.encode_into(out, v)
    assert out[:6] == b"prefix"  # appends
    return bytes(out[6:])


def _same(a, b):
    """Equal, float bit patterns (NaN, -0.0) included, tuples of length != 2 read back as lists,
    bytearray as bytes, dicts in the same order."""
    if isinstance(a, float):
        return type(b) is float and struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, tuple) and len(a) != 2:
        a = list(a)
    if type(a) is bytearray:
        a = bytes(a)
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, dict):
        return len(a) == len(b) and all(_same(ka, kb) and _same(a[ka], b[kb])
                                        for ka, kb in zip(a, b, strict=False))
    return a == b


def _error(fn, *args):
    with pytest.raises(BadData) as info:
        fn(*args)
    return str(info.value)


# ---------- which codec is in use ----------

def test_c_codec_is_in_use_when_built():
    if PURE_FORCED:
        assert not codec.C_CODEC and codec.encode_into is codec.py_encode_into
        return
    if not BUILT:
        pytest.skip("the C codec was not built: codec.py uses the pure-Python codec")
    from spindle_engine import _codec
    assert codec.C_CODEC
    assert codec.encode_into is _codec.encode_into and codec.decode_at is _codec.decode_at
    assert codec.decode_all is _codec.decode_all and codec.encode_records is _codec.encode_records


def _in_subprocess(code, **env):
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                          capture_output=True, text=True, check=True).stdout.split()


def test_spindle_pure_codec_forces_the_python_codec():
    assert _in_subprocess(
        "from spindle_engine import codec;"
        "print(codec.C_CODEC, codec.encode_into is codec.py_encode_into,"
        "      codec.decode_at is codec.py_decode_at)",
        SPINDLE_PURE_CODEC="1") == ["False", "True", "True"]


def test_format_examples_pass_with_the_pure_python_codec():
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          os.path.join(here, "test_codec.py")],
                         env={**os.environ, "SPINDLE_PURE_CODEC": "1"}, cwd=here,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@needs_c
def test_c_module_raises_bad_data_when_imported_alone():
    assert _in_subprocess(
        "from spindle_engine import _codec\n"
        "try: _codec.encode_into(bytearray(), {1})\n"
        "except Exception as e: print(type(e).__module__, type(e).__name__)",
        SPINDLE_PURE_CODEC="1") == ["spindle_engine.errors", "BadData"]


# ---------- same bytes, same values ----------

@needs_c
def test_same_bytes_and_same_values_as_pure_python():
    rng = random.Random(17)
    for _ in range(5000):
        v = _random_value(rng)
        data = _c(v)
        assert data == _py(v), v
        back, pos = codec.decode_at(data, 0)
        assert pos == len(data) and _same(v, back), (v, back)
        ref, ref_pos = codec.py_decode_at(data, 0)
        assert ref_pos == pos and _same(ref, back)
        shifted, pos = codec.decode_at(b"\xee" + data, 1)  # decoding from an offset
        assert pos == len(data) + 1 and _same(back, shifted)


@needs_c
@pytest.mark.parametrize("value", [
    None, True, False, 0, 2**63 - 1, -2**63, "", "é", "😀" * 3, "\U0010ffff", b"", bytearray(),
    (), [], {}, ((), []), ([], {}), [True, False, None], (True, 1), [[[]]], {"": {}}, (1,),
    (1, 2, 3), {True: 1, 2: False, "k": None, (1, "a"): [], 1.5: b"x", b"k": "v"},
    {"b": 1, "a": 2}, ("k", 2**63 - 1), ("k", -2**63), ("k", 1.0), ("k", ("k", "v")),
])
def test_edge_values(value):
    data = _c(value)
    assert data == _py(value)
    assert _same(value, codec.decode(data)) and _same(value, codec.py_decode_at(data, 0)[0])


@needs_c
def test_float_bit_patterns_and_aliases():
    quiet_nan_payload = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000123))[0]
    for x in (math.nan, -math.nan, quiet_nan_payload, -0.0, 0.0, math.inf, -math.inf, 5e-324,
              1.7976931348623157e308, -2.5):
        data = b"\x04" + struct.pack("<d", x)
        assert _c(x) == _py(x) == data
        assert struct.pack("<d", codec.decode(data)) == data[1:]
    assert _c(bytearray(b"ab")) == _c(b"ab") == _c(memoryview(b"ab")) == b"\x06\x02\0\0\0ab"
    assert _c((1, 2, 3)) == _c([1, 2, 3]) and codec.decode(_c((1, 2, 3))) == [1, 2, 3]
    assert _c([True, 1]) == b"\x08\x02\0\0\0\x02\x03\x01" + bytes(7)  # bool never as i64


@needs_c
def test_memoryview_is_written_as_its_bytes():
    import array
    view = memoryview(array.array("i", [1, 2]))
    assert _c(view) == _py(view) == b"\x06\x08\0\0\0" + view.tobytes()


@needs_c
def test_decode_all_reads_a_run_of_values():
    values = [("w", i) for i in range(10)] + [None, "x", {"a": [1.5]}]
    data = b"".join(_c(v) for v in values)
    items, pos = codec.decode_all(data, 0, len(values))
    assert items == values and pos == len(data)
    assert codec.decode_all(data, 0, 0) == ([], 0)
    assert codec.decode_all(data, 0, 3) == (values[:3], len(b"".join(_c(v) for v in values[:3])))
    assert codec.decode_all(bytearray(data), 0, 1)[0] == values[:1]
    assert codec.decode_all(memoryview(data), 0, 1)[0] == values[:1]
    with pytest.raises(BadData):
        codec.decode_all(data, 0, len(values) + 1)


@needs_c
def test_encode_records_is_encode_into_per_record():
    rng = random.Random(5)
    values = [_random_value(rng) for _ in range(500)]
    out = bytearray(b"x")
    assert codec.encode_records(out, iter(values)) == 500
    assert bytes(out) == b"x" + b"".join(_py(v) for v in values)
    big = [(f"word{i}", i) for i in range(100_000)]  # > 1 MiB: flushed on the way
    out = bytearray()
    assert codec.encode_records(out, big) == len(big)
    assert bytes(out) == b"".join(_py(v) for v in big)


@needs_c
def test_encode_records_survives_encoding_inside_its_iterable():
    def records():  # hash_key encodes; so may user code run by the iterable
        for i in range(2000):
            codec.hash_key((i, "k"))
            codec.encode_records(bytearray(), [i, "nested"])
            yield ("a" * (i % 700), i)
    out = bytearray()
    assert codec.encode_records(out, records()) == 2000
    assert bytes(out) == b"".join(_py(v) for v in records())


# ---------- errors ----------

class MyStr(str):
    pass


class MyInt(int):
    pass


class Color(enum.IntEnum):
    RED = 1


@needs_c
@pytest.mark.parametrize("value, message", [
    (2**63, "int 9223372036854775808 does not fit in i64"),
    (-2**63 - 1, "int -9223372036854775809 does not fit in i64"),
    ({1, 2}, "type set is not supported"), (frozenset(), "type frozenset is not supported"),
    (object(), "type object is not supported"), (3 + 0j, "type complex is not supported"),
    ("\ud800", "string is not valid unicode: 'utf-8' codec can't encode character '\\\\ud800'"),
    (("\udfff", 1), "string is not valid unicode"), (("a", 2**63), "does not fit in i64"),
    ([1, {2: {3}}], "type set is not supported"), ((1, 2**64), "does not fit in i64"),
    # subclasses are not the exact types: the Python codec refuses them, and so does C
    (MyStr("a"), "type MyStr is not supported"), (MyInt(1), "type MyInt is not supported"),
    (Color.RED, "type Color is not supported"),
    (collections.OrderedDict(), "type OrderedDict is not supported"),
    (collections.defaultdict(list), "type defaultdict is not supported"),
    (collections.namedtuple("P", "a b")(1, 2), "type P is not supported"),
    (decimal.Decimal(1), "type Decimal is not supported"),
    (range(2), "type range is not supported"),
])
def test_encode_errors_match(value, message):
    c_message = _error(codec.encode_into, bytearray(), value)
    assert c_message == _error(codec.py_encode_into, bytearray(), value)
    assert message.replace("\\\\", "\\") in c_message


@needs_c
def test_a_failed_encode_appends_nothing():
    out = bytearray(b"keep")
    with pytest.raises(BadData):
        codec.encode_into(out, [1, 2, object()])
    assert out == b"keep"
    codec.encode_into(out, 1)  # and the next call is not disturbed
    assert out == b"keep" + _py(1)


@needs_c
def test_encode_records_errors():
    with pytest.raises(BadData, match="type set"):
        codec.encode_records(bytearray(), [1, {1, 2}])

    def failing():
        yield 1
        raise KeyError("from the iterable")
    with pytest.raises(KeyError):
        codec.encode_records(bytearray(), failing())


CORRUPT = [
    b"", b"\x03\x01\x02", b"\x04\0\0", b"\x05\x05\x00\x00\x00ab", b"\x05\x01\x00",
    b"\x06\xff\xff\xff\xffa", b"\x0a", b"\xff", b"\x05\x02\x00\x00\x00\xff\xfe",  # invalid UTF-8
    b"\x05\x03\x00\x00\x00\xed\xa0\x80",  # an encoded surrogate is not UTF-8
    b"\x08\x03\x00\x00\x00\x00", b"\x07\x00", b"\x07", b"\x08\xff\xff\xff\x7f",
    b"\x09\x01\x00\x00\x00\x00", b"\x09\x02\x00\x00\x00\x00\x00",
    b"\x09\x01\x00\x00\x00\x08\x00\x00\x00\x00\x00",  # a list as a map key
]


@needs_c
@pytest.mark.parametrize("data", CORRUPT)
def test_corrupt_data_is_bad_data(data):
    with pytest.raises(BadData):
        codec.decode_at(data, 0)
    with pytest.raises(BadData):
        codec.decode_all(data, 0, 1)


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("data", CORRUPT)
def test_iter_buffer_of_corrupt_records_is_bad_data(monkeypatch, data, pure):
    if pure:
        monkeypatch.setattr(codec, "decode_all", codec._py_decode_all)
    header = codec.HEADER.pack(codec.MAGIC, codec.VERSION, 0, 0, 1)
    with pytest.raises(BadData, match="truncated or corrupt"):
        list(codec.iter_buffer(header + data))


@pytest.mark.parametrize("pure", [False, True])
def test_iter_buffer_truncated_file_and_bad_headers(monkeypatch, tmp_path, pure):
    if pure:
        monkeypatch.setattr(codec, "decode_all", codec._py_decode_all)
    records = [(f"w{i}", i) for i in range(10_000)] + ["é" * 5, None]
    path = tmp_path / "p.bin"
    codec.write_partition(path, records)
    assert codec.read_file(path) == records
    data = path.read_bytes()
    for cut in (1, 2, 9, len(data) - 16 - 1):
        with pytest.raises(BadData, match="truncated or corrupt"):
            list(codec.iter_buffer(data[:-cut]))
    count_too_big = data[:8] + struct.pack("<Q", len(records) + 1) + data[16:]
    with pytest.raises(BadData, match="truncated or corrupt"):
        list(codec.iter_buffer(count_too_big))
    for bad in (data[:15], b"SPDX" + data[4:], data[:4] + b"\x02" + data[5:]):
        with pytest.raises(BadData, match="partition"):
            list(codec.iter_buffer(bad))


@needs_c
def test_positions_and_arguments():
    for pos in (-1, 1, 2**62, sys.maxsize):
        with pytest.raises(BadData):
            codec.decode_at(b"\x00", pos)
    assert codec.decode_at(b"\x00\x01", 1) == (False, 2)
    with pytest.raises(TypeError):
        codec.encode_into(b"immutable", 1)
    with pytest.raises(TypeError):
        codec.decode_at("not bytes", 0)


@needs_c
def test_deep_nesting_is_refused_not_a_crash():
    v = []
    for _ in range(2000):
        v = [v]
    with pytest.raises(BadData, match="nested"):
        codec.encode_into(bytearray(), v)
    with pytest.raises(BadData, match="nested"):
        codec.decode_at(b"\x08\x01\0\0\0" * 2000 + b"\x00", 0)


# ---------- throughput (`python engine/tests/test_codec_c.py [N]`) ----------

def _bench(n):
    from spindle_engine import _codec
    records = [(f"w{i % 50_000}", i) for i in range(n)]

    def best(fn):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    def py_encode():
        out = bytearray()
        for r in records:
            codec.py_encode_into(out, r)
        return out

    def c_encode_into():
        out = bytearray()
        enc = _codec.encode_into
        for r in records:
            enc(out, r)
        return out

    data = bytes(py_encode())
    assert data == bytes(c_encode_into())
    rows = [
        ("encode, py_encode_into per record", best(py_encode)),
        ("encode, C encode_into per record", best(c_encode_into)),
        ("encode, C encode_records", best(lambda: _codec.encode_records(bytearray(), records))),
        ("decode, py_decode_at per record", best(lambda: codec._py_decode_all(data, 0, n))),
        ("decode, C decode_at per record", best(lambda: _c_decode_each(_codec, data, n))),
        ("decode, C decode_all", best(lambda: _codec.decode_all(data, 0, n))),
    ]
    print(f"{n:,} (str, int) pairs, {len(data) / 1e6:.1f} MB encoded; best of 3")
    base = {"encode": rows[0][1], "decode": rows[3][1]}
    for name, t in rows:
        print(f"  {name:36s} {t:7.3f} s  {n / t / 1e6:6.2f} M rec/s  "
              f"{base[name.split(',')[0]] / t:5.1f}x")


def _c_decode_each(_codec, data, n):
    pos, dec, out = 0, _codec.decode_at, []
    for _ in range(n):
        v, pos = dec(data, pos)
        out.append(v)
    return out


if __name__ == "__main__":
    _bench(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
