"""Where a task's records come from: partition files, text splits, the cache, shuffle merges."""

import heapq
from itertools import chain
from operator import itemgetter

from .codec import SELF_KEYED, RawPartition, file_flags, iter_file
from .errors import BadData, CacheMiss
from .hdfs import is_hdfs, open_range
from .rpc import ttypes

SourceKind = ttypes.SourceKind
MergeKind = ttypes.MergeKind


_BLOCK = 1 << 22


def read_text_split(path, offset, length):
    """Lines of `path` that begin in [offset, offset+length) (FORMAT.md 'Text input'); `path`
    is a local file or an HDFS file (`webhdfs://`, read from a DataNode, hdfs.py).

    Reads blocks cut at newlines, so each block decodes on its own."""
    if length <= 0:  # an empty split (of an empty input): nothing to open
        return
    start = max(0, offset - 1)
    if is_hdfs(path):
        f = open_range(path, start)
    else:
        f = open(path, "rb")  # noqa: SIM115 - closed below, like the HDFS stream
        f.seek(start)
    try:
        yield from _split_lines(f, offset, offset + length)
    finally:
        f.close()


def _split_lines(f, offset, end):
    """Lines of stream `f` (positioned at max(0, offset-1)) that begin in [offset, end)."""
    pos = offset - 1 + len(f.readline()) if offset > 0 else 0
    while pos < end:
        block = f.read(min(_BLOCK, end - pos))
        if not block:
            break
        pos += len(block)
        if block[-1:] != b"\n":
            rest = f.readline()  # finish the line that begins before the end
            block += rest
            pos += len(rest)
        text = block.decode("utf-8", "replace")
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        if "\r" in text:
            lines = [x[:-1] if x[-1:] == "\r" else x for x in lines]
        yield from lines


def open_source(src, loader, ctx, cache, used):
    """Iterator over the records of thrift Source `src`."""
    kind = src.kind
    if kind == SourceKind.FILES:
        return chain.from_iterable(map(iter_file, src.paths or []))
    if kind == SourceKind.TEXT:
        return read_text_split(src.text_path, src.offset or 0, src.length or 0)
    if kind == SourceKind.CACHED:
        records = cache.get(src.cache_key)
        if records is None:
            raise CacheMiss(f"partition {src.cache_key} is not cached here")
        return records.records() if isinstance(records, RawPartition) else iter(records)
    if kind == SourceKind.SHUFFLE:
        return _merge(src, loader, ctx, used)
    raise BadData(f"unknown source kind {kind}")


def _files(paths):
    return chain.from_iterable(map(iter_file, paths or []))


def _merge(src, loader, ctx, used):
    merge = src.merge or MergeKind.CONCAT
    if merge == MergeKind.CONCAT:
        return _files(src.paths)
    if merge == MergeKind.MERGE_VALUES:
        uf = loader.load(src.fn)
        used.append(uf)
        return _merge_values(_files(src.paths), uf, ctx)
    if merge == MergeKind.GROUP:
        return _group(_files(src.paths))
    if merge == MergeKind.DISTINCT:
        return _distinct(_files(src.paths))
    if merge == MergeKind.JOIN:
        return _join(_files(src.paths), _files(src.right_paths))
    if merge == MergeKind.SORTED_RUNS:
        return _merge_runs(src.paths or [], src.ascending is False)
    raise BadData(f"unknown merge kind {merge}")


def _merge_runs(paths, reverse):
    """K-way merge (heapq) of sorted runs of (sortkey, record) pairs, or of records that are
    their own keys (runs flagged SELF_KEYED, FORMAT.md): no run is sorted again."""
    flags = [file_flags(p) & SELF_KEYED for p in paths]
    if all(flags):
        return heapq.merge(*map(iter_file, paths), reverse=reverse)
    runs = [map(_self_pair, iter_file(p)) if f else iter_file(p) for p, f in zip(paths, flags, strict=False)]
    return map(itemgetter(1), heapq.merge(*runs, key=itemgetter(0), reverse=reverse))


def _self_pair(r):
    return (r, r)


def _merge_values(records, uf, ctx):
    acc = {}
    get = acc.get
    missing = object()
    f, wc = uf.call, uf.with_context  # no wrapper frame per record
    for k, v in records:
        old = get(k, missing)
        if old is missing:
            acc[k] = v
        else:
            acc[k] = f(old, v, ctx) if wc else f(old, v)
    yield from acc.items()


def _group(records):
    groups = {}
    for k, v in records:
        g = groups.get(k)
        if g is None:
            groups[k] = [v]
        else:
            g.append(v)
    yield from groups.items()


def _distinct(records):
    yield from dict.fromkeys(records)


def _join(left, right):
    table = {}
    for k, w in right:
        table.setdefault(k, []).append(w)
    for k, v in left:
        for w in table.get(k, ()):
            yield (k, (v, w))
