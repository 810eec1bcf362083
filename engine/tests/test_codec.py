"""The binary format against the worked examples of engine/FORMAT.md."""

import pytest

from spindle_engine import codec


def test_worked_example_bytes(tmp_path):
    path = tmp_path / "p.bin"
    codec.write_partition(path, [7, "hé", ("a", 1.5)])
    assert path.read_bytes().hex() == (
        "5350444c01000000" "0300000000000000"
        "030700000000000000" "0503000000" "68c3a9"
        "07050100000061" "04000000000000f83f")
    assert codec.read_file(path) == [7, "hé", ("a", 1.5)]


@pytest.mark.parametrize("value, hexed", [
    ([None, True], "08020000000002"),
    ({"k": -1}, "0901000000050100000" "06b03ffffffffffffffff"),
    (b"\x00", "060100000000"),
])
def test_more_values(value, hexed):
    assert codec.encode(value).hex() == hexed
    assert codec.decode(codec.encode(value)) == value


def test_hash_examples():
    assert codec.hash_key("a") == 0xE8B7BE43 and codec.hash_key("a") % 4 == 3
    assert codec.hash_key(7) == 0x6FE7D670 and codec.hash_key(7) % 4 == 0
    assert codec.hash_key(("a", 1)) == codec.hash_key(("a", 1))


@pytest.mark.parametrize("bad", [2**63, object(), {1, 2}, "\ud800"])
def test_unsupported_values_are_bad_data(bad):
    with pytest.raises(codec.BadData):
        codec.encode(bad)


def test_truncated_file_is_bad_data(tmp_path):
    path = tmp_path / "p.bin"
    codec.write_partition(path, ["abcdef"])
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(codec.BadData):
        codec.read_file(path)


@pytest.mark.parametrize("pair", [("a", 2**63 - 1), ("a", -2**63), ("é", (1, None)), ("", 1.5),
                                  ("k", "v"), ("😀", [1, "x"])])
def test_pairs_with_string_first_round_trip(pair):
    encoded = codec.encode(pair)
    assert encoded[:2] == b"\x07\x05"
    assert codec.decode(encoded) == pair


@pytest.mark.parametrize("bad", [("a", 2**63), ("\ud800", 1)])
def test_bad_pairs_are_bad_data(bad):
    with pytest.raises(codec.BadData):
        codec.encode(bad)
