"""Where a task's records go: storage, shuffle buckets (with spill), action results, text files."""

import base64
import heapq
import itertools
import json
import os
import random
from bisect import bisect_left
from functools import reduce
from operator import itemgetter

from .codec import (
    SELF_KEYED,
    RawPartition,
    decode,
    encode,
    encode_into,
    encode_records,
    hash_key,
    write_encoded,
    write_partition,
)
from .errors import BadData
from .hdfs import is_hdfs, write_file
from .rpc import ttypes

SinkKind = ttypes.SinkKind
KeyMode = ttypes.KeyMode
Combine = ttypes.Combine
_CHECK_EVERY = 256  # records between memory checks
_MISSING = object()


class BucketFiles:
    """Shuffle output of one task: spill runs in scratch dirs, final runs in shared memory."""

    def __init__(self, prefix, env):
        self.prefix = prefix
        self.env = env
        self.files = {}
        self.run = 0

    def write(self, bufs, counts, final, flags=0):
        """Write each non-empty encoded bucket as one run; reset the buffers."""
        for b, buf in enumerate(bufs):
            if not counts[b]:
                continue
            if final:
                path = f"{self.prefix}-{b}-{self.run}.bin"
            else:
                path = self.env.spill_path()
            _, nbytes = write_encoded(path, buf, counts[b], flags)
            if not final:
                self.env.spill_files += 1
                self.env.spill_bytes += nbytes
            self.files.setdefault(b, []).append(path)
            bufs[b] = bytearray()
            counts[b] = 0
        self.run += 1


def _key_function(sink, env):
    mode = sink.key_mode or KeyMode.WHOLE
    if mode == KeyMode.WHOLE:
        return None
    if mode == KeyMode.FIRST:
        return itemgetter(0)
    if mode == KeyMode.FUNCTION:
        return env.function(sink.fn).unary(env.ctx)
    raise BadData(f"key mode {mode} not valid here")


def _hash_shuffle(sink, it, partition, env):
    n = sink.buckets
    out = BucketFiles(sink.path_prefix, env)
    bufs = [bytearray() for _ in range(n)]
    counts = [0] * n
    combine = sink.combine or Combine.NONE
    if combine == Combine.NONE:
        records = _bucket_plain(sink, it, partition, n, bufs, counts, out, env)
    else:
        records = _bucket_combined(sink, it, combine, n, bufs, counts, out, env)
    out.write(bufs, counts, final=True)
    return ttypes.TaskResult(records=records, buckets=out.files)


def _bucket_plain(sink, it, partition, n, bufs, counts, out, env):
    mode = sink.key_mode or KeyMode.FIRST
    keyf = None if mode == KeyMode.ROUND_ROBIN else _key_function(sink, env)
    records = 0
    for r in it:
        if mode == KeyMode.ROUND_ROBIN:
            b = (partition + records) % n
        else:
            b = hash_key(keyf(r) if keyf else r) % n
        encode_into(bufs[b], r)
        counts[b] += 1
        records += 1
        if records % _CHECK_EVERY == 0 and sum(map(len, bufs)) > env.memory:
            out.write(bufs, counts, final=False)
    return records


def _bucket_combined(sink, it, combine, n, bufs, counts, out, env):
    acc = {}
    get = acc.get
    keys_only = combine == Combine.DISTINCT
    budget = _EntryBudget(env.memory, keys_only)
    records = -1
    if keys_only:
        for records, r in enumerate(it):  # noqa: B007 - the count is read after the loop
            if r not in acc:
                acc[r] = None
                if len(acc) > budget.limit and budget.over(acc):
                    _flush_combined(acc, True, n, bufs, counts, out, final=False)
    else:
        uf = env.function(sink.fn)
        f, wc, ctx = uf.call, uf.with_context, env.ctx  # no wrapper frame per record
        aggregate = combine == Combine.AGGREGATE
        for records, (k, v) in enumerate(it):  # noqa: B007 - the count is read after the loop
            old = get(k, _MISSING)
            if old is not _MISSING:
                acc[k] = f(old, v, ctx) if wc else f(old, v)
                continue
            if aggregate:
                zero = decode(sink.zero)
                acc[k] = f(zero, v, ctx) if wc else f(zero, v)
            else:
                acc[k] = v
            if len(acc) > budget.limit and budget.over(acc):
                _flush_combined(acc, False, n, bufs, counts, out, final=False)
    _flush_combined(acc, keys_only, n, bufs, counts, out, final=None)
    return records + 1


class _EntryBudget:
    """How many combined entries fit in memory; checked only when a new key arrives."""

    def __init__(self, memory, keys_only):
        self.memory = memory
        self.keys_only = keys_only
        self.limit = 32  # entries before the first size estimate

    def over(self, acc):
        """Re-estimate the limit from the entries so far; True if acc is over it."""
        self.limit = max(32, self.memory // _entry_size(acc, self.keys_only))
        return len(acc) > self.limit


def _entry_size(acc, keys_only):
    """Average encoded size of a few entries, plus Python object overhead."""
    sample = list(itertools.islice(acc.items(), 32))
    buf = bytearray()
    for k, v in sample:
        encode_into(buf, k if keys_only else (k, v))
    return len(buf) // max(1, len(sample)) + 64


def _flush_combined(acc, keys_only, n, bufs, counts, out, final):
    """Encode the combined entries into buckets; write them as spill runs unless final is None."""
    for k, v in acc.items():
        b = hash_key(k) % n
        encode_into(bufs[b], k if keys_only else (k, v))
        counts[b] += 1
    acc.clear()
    if final is not None:
        out.write(bufs, counts, final=final)


def _range_shuffle(sink, it, env):
    n = sink.buckets
    bounds = decode(sink.bounds) if sink.bounds else []
    ascending = sink.ascending is not False
    keyf = _key_function(sink, env)
    lists = [[] for _ in range(n)]
    out = BucketFiles(sink.path_prefix, env)
    records = buffered = 0
    record_size = None
    self_keyed = True  # while every key is its record itself, runs hold records, not pairs
    for r in it:
        k = keyf(r) if keyf else r
        if k is not r and self_keyed:
            self_keyed = False
            for lst in lists:
                lst[:] = [(x, x) for x in lst]
        b = bisect_left(bounds, k)
        b = b if ascending else n - 1 - b
        lists[b].append(r if self_keyed else (k, r))
        records += 1
        buffered += 1
        if buffered % _CHECK_EVERY == 0:
            record_size = record_size or len(encode(lists[b][-1])) + 64
            if buffered * record_size > env.memory:
                _write_sorted_runs(lists, ascending, out, False, self_keyed)
                buffered = 0
    _write_sorted_runs(lists, ascending, out, True, self_keyed)
    return ttypes.TaskResult(records=records, buckets=out.files)


def _write_sorted_runs(lists, ascending, out, final, self_keyed):
    bufs, counts = [], []
    for lst in lists:
        lst.sort(key=None if self_keyed else itemgetter(0), reverse=not ascending)
        buf = bytearray()
        encode_records(buf, lst)
        bufs.append(buf)
        counts.append(len(lst))
        lst.clear()
    out.write(bufs, counts, final, SELF_KEYED if self_keyed else 0)


def _sample_keys(sink, it, partition, env):
    keyf = _key_function(sink, env)
    rng = random.Random((sink.seed or 0) * 1_000_003 + partition)
    n = sink.n or 0
    sample = []
    records = 0
    for r in it:
        k = keyf(r) if keyf else r
        if records < n:
            sample.append(k)
        else:
            j = rng.randint(0, records)
            if j < n:
                sample[j] = k
        records += 1
    return ttypes.TaskResult(records=records, value=encode(sample))


def _select(indices, it):
    out = []
    j = 0
    if not indices:
        return out
    for i, r in enumerate(it):
        while j < len(indices) and indices[j] == i:
            out.append(r)
            j += 1
        if j == len(indices):
            break
    return out


def to_json(v):
    """JSON text of a value (FORMAT.md 'Text and JSON output')."""
    return json.dumps(_jsonable(v), ensure_ascii=False, separators=(",", ":"))


def _jsonable(v):
    t = type(v)
    if t is tuple or t is list:
        return [_jsonable(x) for x in v]
    if t is dict:
        if all(type(k) is str for k in v):
            return {k: _jsonable(x) for k, x in v.items()}
        return [[_jsonable(k), _jsonable(x)] for k, x in v.items()]
    if t is bytes or t is bytearray:
        return base64.b64encode(v).decode()
    return v


def _line_batches(it, as_json, counter):
    """UTF-8 text of the records, one per line, in batches of 4096; counter[0] counts them."""
    it = iter(it)
    while True:
        batch = [to_json(r) if as_json or type(r) is not str else r
                 for r in itertools.islice(it, 4096)]
        if not batch:
            return
        counter[0] += len(batch)
        batch.append("")
        yield "\n".join(batch).encode("utf-8")


def _write_lines(path, it, as_json):
    """Write the lines to the local file `path`, or stream them to the HDFS file `path`."""
    counter = [0]
    if is_hdfs(path):
        write_file(path, _line_batches(it, as_json, counter))
    else:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as f:
            for chunk in _line_batches(it, as_json, counter):
                f.write(chunk)
    return ttypes.TaskResult(records=counter[0], files=[path])


def _count(it):
    n = 0
    for _ in it:
        n += 1
    return n


def run_sink(sink, it, partition, env):
    """Drain iterator `it` into thrift Sink `sink`; return a TaskResult."""
    kind = sink.kind
    R = ttypes.TaskResult
    if kind == SinkKind.STORE:
        if not sink.cache_key:  # stream: encoded bytes are far smaller than Python objects
            if not sink.path:
                return R(records=_count(it))
            count, _ = write_partition(sink.path, it)
            return R(records=count, files=[sink.path])
        if sink.compression is not None:  # RAW_MEMORY: encoded (and compressed) bytes
            raw = RawPartition(it, sink.compression)
            env.cache[sink.cache_key] = raw
            if sink.path:
                write_encoded(sink.path, raw.body(), raw.count)
            return R(records=raw.count, files=[sink.path] if sink.path else None,
                     stored_bytes=len(raw.blob))
        records = list(it)
        env.cache[sink.cache_key] = records
        if sink.path:
            write_partition(sink.path, records)
        return R(records=len(records), files=[sink.path] if sink.path else None)
    if kind == SinkKind.COUNT:
        return R(records=_count(it))
    if kind == SinkKind.HASH_SHUFFLE:
        return _hash_shuffle(sink, it, partition, env)
    if kind == SinkKind.RANGE_SHUFFLE:
        return _range_shuffle(sink, it, env)
    if kind == SinkKind.SAMPLE_KEYS:
        return _sample_keys(sink, it, partition, env)
    if kind == SinkKind.REDUCE:
        f = env.function(sink.fn).binary(env.ctx)
        it = iter(it)
        first = next(it, _MISSING)
        if first is _MISSING:
            return R(records=0, value=encode([]))
        return R(records=1, value=encode([reduce(f, it, first)]))
    if kind == SinkKind.FOLD:
        f = env.function(sink.fn).binary(env.ctx)
        return R(records=1, value=encode(reduce(f, it, decode(sink.zero))))
    if kind == SinkKind.TAKE:
        taken = list(itertools.islice(it, max(0, sink.n or 0)))
        return R(records=len(taken), value=encode(taken))
    if kind == SinkKind.TOP:
        keyf = _key_function(sink, env)
        top = heapq.nlargest(max(0, sink.n or 0), it, key=keyf)
        return R(records=len(top), value=encode(top))
    if kind == SinkKind.SELECT:
        chosen = _select(sink.indices or [], it)
        return R(records=len(chosen), value=encode(chosen))
    if kind in (SinkKind.TEXT_FILE, SinkKind.JSON_FILE):
        return _write_lines(sink.path, it, kind == SinkKind.JSON_FILE)
    raise BadData(f"unknown sink kind {kind}")
