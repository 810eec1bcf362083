"""Loading user functions by reference ("file.py:Class") or from cloudpickle, and their context."""

import hashlib
import importlib.util
import os
import sys

import cloudpickle

from .errors import FunctionNotFound


class Context:
    """What a user function sees of its task: driver properties, partition, executor id."""

    def __init__(self, properties, executor_id):
        self.properties = dict(properties)
        self.executor_id = executor_id
        self.partition = -1
        self.stage = ""

    def props(self):
        return self.properties


class UserFunction:
    """A loaded user function: `call` plus whether it takes the context last."""

    def __init__(self, ref, obj):
        self.ref = ref
        self.obj = obj
        self.with_context = hasattr(obj, "call")
        self.call = obj.call if self.with_context else obj

    def before(self, ctx):
        hook = getattr(self.obj, "before", None) if self.with_context else None
        if hook:
            hook(ctx)

    def after(self, ctx):
        hook = getattr(self.obj, "after", None) if self.with_context else None
        if hook:
            hook(ctx)

    def codes(self):
        """Code objects of this function's Python code (to find it in a traceback)."""
        parts = [getattr(self.obj, n, None) for n in ("call", "before", "after")] \
            if self.with_context else [self.obj]
        funcs = [getattr(m, "__func__", m) for m in parts if m is not None]
        return [f.__code__ for f in funcs if hasattr(f, "__code__")]

    def unary(self, ctx):
        """A one-argument callable applying the function (context bound)."""
        c = self.call
        return (lambda x: c(x, ctx)) if self.with_context else c

    def binary(self, ctx):
        """A two-argument callable applying the function (context bound)."""
        c = self.call
        return (lambda a, b: c(a, b, ctx)) if self.with_context else c


class FunctionLoader:
    """Loads and caches user functions for one executor process."""

    def __init__(self, local_file=lambda path: path):
        self._loaded = {}
        self._local_file = local_file  # path or tcp:// URL -> a readable path (hostfiles.py)

    def load(self, fn):
        """Return the UserFunction for a thrift Function."""
        key = (fn.ref, hashlib.sha1(fn.pickled).hexdigest() if fn.pickled else None)
        uf = self._loaded.get(key)
        if uf is None:
            uf = UserFunction(fn.ref, _instantiate(fn.ref, self._resolve(fn)))
            self._loaded[key] = uf
        return uf

    def _resolve(self, fn):
        if fn.pickled:
            try:
                return cloudpickle.loads(fn.pickled)
            except Exception as e:
                raise FunctionNotFound(f"cannot unpickle {fn.ref}: {e!r}", fn.ref) from None
        path, sep, name = fn.ref.rpartition(":")
        if not sep or not path.endswith(".py"):
            raise FunctionNotFound(f"bad python function reference {fn.ref!r} "
                                   "(expected 'path/file.py:Class')", fn.ref)
        path = self._local_file(path)
        if not os.path.isfile(path):
            raise FunctionNotFound(f"function file {path} does not exist", fn.ref)
        module_name = "spindle_user_" + hashlib.sha1(path.encode()).hexdigest()[:12]
        module = sys.modules.get(module_name)
        if module is None:
            try:
                spec = importlib.util.spec_from_file_location(module_name, path)
                module = importlib.util.module_from_spec(spec)
                sys.path.insert(0, os.path.dirname(path))
                spec.loader.exec_module(module)
            except Exception as e:
                raise FunctionNotFound(f"cannot import {path}: {e!r}", fn.ref) from None
            sys.modules[module_name] = module
        if not hasattr(module, name):
            raise FunctionNotFound(f"{path} has no attribute {name!r}", fn.ref)
        return getattr(module, name)


def _instantiate(ref, obj):
    if isinstance(obj, type) and hasattr(obj, "call"):
        try:
            return obj()
        except Exception as e:
            raise FunctionNotFound(f"cannot instantiate {ref}: {e!r}", ref) from None
    if not callable(obj) and not hasattr(obj, "call"):
        raise FunctionNotFound(f"{ref} is neither a class, an object with call() "
                               "nor a callable", ref)
    return obj


def culprit(exc, used):
    """Ref of the user function whose code raised `exc` (outermost such frame), else of a used
    function without Python code (a builtin such as `max`), else None."""
    codes = {code: uf.ref for uf in used for code in uf.codes()}
    tb = exc.__traceback__
    while tb is not None:
        ref = codes.get(tb.tb_frame.f_code)
        if ref is not None:
            return ref
        tb = tb.tb_next
    return next((uf.ref for uf in used if not uf.codes()), None)
