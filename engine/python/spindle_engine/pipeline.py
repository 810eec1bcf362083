"""Narrow operations chained as iterators: a fused chain runs as one pass over a partition."""

from itertools import chain, repeat
from operator import itemgetter

from .errors import BadData
from .rpc import ttypes

OpKind = ttypes.OpKind
_first = itemgetter(0)
_second = itemgetter(1)


def _pairs_only(it, what):
    for r in it:
        if type(r) is not tuple:
            raise BadData(f"{what}: record {r!r:.80} is not a (key, value) pair")
        yield r


def apply_op(it, kind, uf, ctx):
    """Iterator of op `kind` (with loaded function `uf`, may be None) over `it`."""
    if kind == OpKind.KEYS:
        return map(_first, _pairs_only(it, "keys"))
    if kind == OpKind.VALUES:
        return map(_second, _pairs_only(it, "values"))
    c = uf.call
    wc = uf.with_context
    if kind == OpKind.MAP:
        out = map(c, it, repeat(ctx)) if wc else map(c, it)
    elif kind == OpKind.FLAT_MAP:
        out = chain.from_iterable(map(c, it, repeat(ctx)) if wc else map(c, it))
    elif kind == OpKind.FILTER:
        out = (x for x in it if c(x, ctx)) if wc else filter(c, it)
    elif kind == OpKind.KEY_BY:
        out = ((c(x, ctx), x) for x in it) if wc else ((c(x), x) for x in it)
    elif kind == OpKind.MAP_VALUES:
        it = _pairs_only(it, "mapValues")
        out = ((k, c(v, ctx)) for k, v in it) if wc else ((k, c(v)) for k, v in it)
    elif kind == OpKind.MAP_PARTITIONS:
        out = _map_partition(c, wc, it, ctx)
    else:
        raise BadData(f"unknown op kind {kind}")
    return out


def _map_partition(c, wc, it, ctx):
    result = c(it, ctx) if wc else c(it)
    if result is not None:
        yield from result


def run_ops(it, ops, loader, ctx, used):
    """Chain `ops` (thrift Op list) over `it`; loaded functions are added to `used`."""
    for op in ops:
        uf = loader.load(op.fn) if op.fn is not None else None
        if uf is not None:
            used.append(uf)
        elif op.kind not in (OpKind.KEYS, OpKind.VALUES):
            raise BadData(f"op {OpKind._VALUES_TO_NAMES.get(op.kind)} needs a function")
        it = apply_op(it, op.kind, uf, ctx)
    return it
