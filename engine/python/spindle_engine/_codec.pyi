# Type stub of the C codec extension built from _codec.c (setup.py); the pure-Python fallbacks with the
# same signatures are in codec.py. Only for type checkers (mypy in scripts/lint).
from collections.abc import Iterable
from typing import Any

from _typeshed import ReadableBuffer

def encode_into(out: bytearray, value: Any, /) -> None:
    """Append the encoding of a value to a bytearray."""

def encode_records(out: bytearray, records: Iterable[Any], /) -> int:
    """Append the encodings of an iterable's values to a bytearray; return how many."""

def decode_at(buf: ReadableBuffer, pos: int, /) -> tuple[Any, int]:
    """Decode the value at pos: (value, next pos)."""

def decode_all(buf: ReadableBuffer, pos: int, count: int, /) -> tuple[list[Any], int]:
    """Decode count consecutive values from pos: (list, next pos)."""

def set_bad_data(cls: type[Exception], /) -> None:
    """The exception class raised for bad data."""
