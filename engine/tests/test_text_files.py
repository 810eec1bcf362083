"""textFile splits by byte ranges, aligned to lines: every line exactly once."""

import pytest

CONTENTS = {
    "plain": "one\ntwo\nthree\n",
    "no_final_newline": "alpha\nbeta\ngamma",
    "crlf_and_blank_lines": "a\r\n\r\nb\r\n\nc\n",
    "unicode": "".join(f"ligne {i} é漢😀 {'x' * (i % 13)}\n" for i in range(500)),
    "empty": "",
    "one_long_line": "y" * 10_000,
}


@pytest.mark.parametrize("name", sorted(CONTENTS))
@pytest.mark.parametrize("partitions", [1, 2, 3, 7, 64])
def test_text_file_lines(python_worker, tmp_path, name, partitions):
    path = tmp_path / "input.txt"
    path.write_bytes(CONTENTS[name].encode())
    ds = python_worker.textFile(str(path), partitions)
    expected = CONTENTS[name].encode().decode().splitlines()
    assert ds.collect() == expected
    assert ds.count() == len(expected)


def test_invalid_utf8_is_replaced(python_worker, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\n\xff\xfe\n")
    assert python_worker.textFile(str(path), 2).collect() == ["ok", "\ufffd\ufffd"]


def test_word_count_from_text(python_worker, tmp_path, fn):
    text = "".join(f"the quick {i % 7} brown fox {i % 3}\n" for i in range(2000))
    path = tmp_path / "words.txt"
    path.write_text(text)
    counts = dict(python_worker.textFile(str(path), 5)
                  .flatMap(fn("wordcount.py:Split")).reduceByKey(fn("wordcount.py:Join"))
                  .collect())
    expected = {}
    for word in text.split():
        expected[word] = expected.get(word, 0) + 1
    assert counts == expected
