/*
 * The engine's binary value format (engine/FORMAT.md) in C, for the Python executor and driver.
 * Same bytes and the same Python type rules as the pure-Python codec in codec.py (which stays
 * the reference and the fallback): exact types only; a 2-tuple is a pair, any other tuple a list;
 * bytes, bytearray and memoryview are bytes; an int outside i64 and any other type are BadData.
 *
 *   encode_into(bytearray, value)        append the encoding of value
 *   encode_records(bytearray, iterable)  append each value's encoding; returns the count
 *   decode_at(buffer, pos) -> (value, pos)
 *   decode_all(buffer, pos, count) -> (list of the count values from pos, next pos)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *BadData = NULL; /* spindle_engine.errors.BadData, set by set_bad_data() */

static PyObject *bad(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (msg) {
    PyErr_SetObject(BadData ? BadData : PyExc_ValueError, msg);
    Py_DECREF(msg);
  }
  return NULL;
}

/* ---------- encoding into a growable C buffer ---------- */

typedef struct {
  char *data;
  Py_ssize_t len, cap;
} Buf;

static int grow(Buf *b, Py_ssize_t more) {
  if (b->len + more <= b->cap) return 0;
  Py_ssize_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more) cap *= 2;
  char *d = PyMem_Realloc(b->data, cap);
  if (!d) {
    PyErr_NoMemory();
    return -1;
  }
  b->data = d;
  b->cap = cap;
  return 0;
}

static int put(Buf *b, const void *p, Py_ssize_t n) {
  if (grow(b, n) < 0) return -1;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

static int put_tag_u32(Buf *b, uint8_t tag, Py_ssize_t n) {
  if (n > 0xFFFFFFFFLL) {
    bad("a value of %zd bytes or items is too large for the format", n);
    return -1;
  }
  uint8_t h[5] = {tag, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
  return put(b, h, 5);
}

static int put_tag_u64(Buf *b, uint8_t tag, uint64_t v) {
  uint8_t h[9];
  h[0] = tag;
  for (int i = 0; i < 8; i++) h[1 + i] = (uint8_t)(v >> (8 * i));
  return put(b, h, 9);
}

static int enc(Buf *b, PyObject *v, int depth);

static int enc_seq(Buf *b, PyObject *v, int depth) {
  PyObject *fast = PySequence_Fast(v, "sequence");
  if (!fast) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject **items = PySequence_Fast_ITEMS(fast);
  int rc = put_tag_u32(b, 8, n);
  for (Py_ssize_t i = 0; rc == 0 && i < n; i++) rc = enc(b, items[i], depth + 1);
  Py_DECREF(fast);
  return rc;
}

static int enc(Buf *b, PyObject *v, int depth) {
  if (depth > 1000) {
    bad("value nested deeper than 1000 levels");
    return -1;
  }
  PyTypeObject *t = Py_TYPE(v);
  if (t == &PyUnicode_Type) {
    if (PyUnicode_IS_COMPACT_ASCII(v)) { /* its bytes are its UTF-8: no copy, no cache */
      Py_ssize_t n = PyUnicode_GET_LENGTH(v);
      if (put_tag_u32(b, 5, n) < 0) return -1;
      return put(b, PyUnicode_DATA(v), n);
    }
    /* Not PyUnicode_AsUTF8AndSize: that would keep a UTF-8 copy alive on the str object. */
    PyObject *u = PyUnicode_AsUTF8String(v);
    if (!u) {
      if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyErr_NormalizeException(&type, &value, &tb);
      bad("string is not valid unicode: %S", value ? value : Py_None);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
      return -1;
    }
    int rc = put_tag_u32(b, 5, PyBytes_GET_SIZE(u));
    if (rc == 0) rc = put(b, PyBytes_AS_STRING(u), PyBytes_GET_SIZE(u));
    Py_DECREF(u);
    return rc;
  }
  if (t == &PyLong_Type) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) {
      bad("int %R does not fit in i64", v);
      return -1;
    }
    if (x == -1 && PyErr_Occurred()) return -1;
    return put_tag_u64(b, 3, (uint64_t)x);
  }
  if (t == &PyTuple_Type) {
    Py_ssize_t n = PyTuple_GET_SIZE(v);
    if (n == 2) {
      uint8_t tag = 7;
      if (put(b, &tag, 1) < 0) return -1;
      if (enc(b, PyTuple_GET_ITEM(v, 0), depth + 1) < 0) return -1;
      return enc(b, PyTuple_GET_ITEM(v, 1), depth + 1);
    }
    return enc_seq(b, v, depth);
  }
  if (t == &PyFloat_Type) {
    double d = PyFloat_AS_DOUBLE(v);
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return put_tag_u64(b, 4, bits);
  }
  if (v == Py_None) {
    uint8_t tag = 0;
    return put(b, &tag, 1);
  }
  if (t == &PyBool_Type) {
    uint8_t tag = v == Py_True ? 2 : 1;
    return put(b, &tag, 1);
  }
  if (t == &PyList_Type) return enc_seq(b, v, depth);
  if (t == &PyDict_Type) {
    if (put_tag_u32(b, 9, PyDict_GET_SIZE(v)) < 0) return -1;
    Py_ssize_t pos = 0;
    PyObject *k, *x;
    while (PyDict_Next(v, &pos, &k, &x)) {
      if (enc(b, k, depth + 1) < 0 || enc(b, x, depth + 1) < 0) return -1;
    }
    return 0;
  }
  if (t == &PyBytes_Type || t == &PyByteArray_Type || t == &PyMemoryView_Type) {
    Py_buffer view;
    if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) return -1;
    int rc = put_tag_u32(b, 6, view.len);
    if (rc == 0) rc = put(b, view.buf, view.len);
    PyBuffer_Release(&view);
    return rc;
  }
  PyObject *name = PyType_GetName(t); /* t.__name__, as the Python codec says */
  if (name) {
    bad("type %U is not supported by the engine format", name);
    Py_DECREF(name);
  }
  return -1;
}

/* encode_into's buffer, reused by every call: enc() runs no Python code until it fails, so no
 * other call (another thread, a nested call) can use it meanwhile. */
static Buf scratch = {NULL, 0, 0};

static int append_buf(PyObject *out, const Buf *b) {
  Py_ssize_t old = PyByteArray_GET_SIZE(out);
  if (b->len == 0) return 0;
  if (PyByteArray_Resize(out, old + b->len) < 0) return -1;
  memcpy(PyByteArray_AS_STRING(out) + old, b->data, b->len);
  return 0;
}

static PyObject *encode_into(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyByteArray_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "encode_into(bytearray, value)");
    return NULL;
  }
  scratch.len = 0;
  int rc = enc(&scratch, args[1], 0);
  if (rc == 0) rc = append_buf(args[0], &scratch);
  if (scratch.cap > (1 << 24)) { /* do not keep a huge buffer after one huge value */
    PyMem_Free(scratch.data);
    scratch.data = NULL;
    scratch.cap = 0;
  }
  scratch.len = 0;
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *encode_records(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyByteArray_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "encode_records(bytearray, iterable)");
    return NULL;
  }
  PyObject *it = PyObject_GetIter(args[1]);
  if (!it) return NULL;
  /* Its own buffer, not `scratch`: the iterable runs Python code between records, which may
   * call encode_into or encode_records (hash_key does), from this thread or another. */
  Buf buf = {NULL, 0, 0};
  Py_ssize_t count = 0;
  PyObject *v;
  while ((v = PyIter_Next(it))) {
    int rc = enc(&buf, v, 0);
    Py_DECREF(v);
    if (rc < 0) break;
    count++;
    if (buf.len >= (1 << 20)) { /* flush every MiB */
      if (append_buf(args[0], &buf) < 0) break;
      buf.len = 0;
    }
  }
  Py_DECREF(it);
  PyObject *r = NULL;
  if (!PyErr_Occurred() && append_buf(args[0], &buf) == 0) r = PyLong_FromSsize_t(count);
  PyMem_Free(buf.data);
  return r;
}

/* ---------- decoding ---------- */

typedef struct {
  const uint8_t *p;
  Py_ssize_t len;
} In;

static int need(const In *in, Py_ssize_t pos, Py_ssize_t n, const char *what) {
  if (n < 0 || pos > in->len || n > in->len - pos) { /* no overflow for any pos */
    bad("%s at byte %zd runs past the end of the data (%zd bytes)", what, pos, in->len);
    return -1;
  }
  return 0;
}

static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static PyObject *dec(const In *in, Py_ssize_t *pos, int depth) {
  if (depth > 1000) return bad("value nested deeper than 1000 levels");
  if (need(in, *pos, 1, "a value") < 0) return NULL;
  uint8_t tag = in->p[(*pos)++];
  const uint8_t *p = in->p + *pos;
  switch (tag) {
    case 0: Py_RETURN_NONE;
    case 1: Py_RETURN_FALSE;
    case 2: Py_RETURN_TRUE;
    case 3:
      if (need(in, *pos, 8, "an i64") < 0) return NULL;
      *pos += 8;
      return PyLong_FromLongLong((long long)u64(p));
    case 4: {
      if (need(in, *pos, 8, "an f64") < 0) return NULL;
      uint64_t bits = u64(p);
      double d;
      memcpy(&d, &bits, 8);
      *pos += 8;
      return PyFloat_FromDouble(d);
    }
    case 5:
    case 6: {
      if (need(in, *pos, 4, "a length") < 0) return NULL;
      Py_ssize_t n = u32(p);
      *pos += 4;
      if (need(in, *pos, n, tag == 5 ? "a string" : "bytes") < 0) return NULL;
      const char *s = (const char *)in->p + *pos;
      *pos += n;
      if (tag == 6) return PyBytes_FromStringAndSize(s, n);
      PyObject *str = PyUnicode_DecodeUTF8(s, n, "strict");
      if (!str) {
        PyErr_Clear();
        return bad("a string at byte %zd is not valid UTF-8", *pos - n);
      }
      return str;
    }
    case 7: {
      PyObject *a = dec(in, pos, depth + 1);
      if (!a) return NULL;
      PyObject *b = dec(in, pos, depth + 1);
      if (!b) {
        Py_DECREF(a);
        return NULL;
      }
      PyObject *t = PyTuple_New(2);
      if (!t) {
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
      }
      PyTuple_SET_ITEM(t, 0, a);
      PyTuple_SET_ITEM(t, 1, b);
      /* A pair of atoms (str, int, ...) can never be in a reference cycle: untrack it now, as
       * CPython's collector would later, so millions of decoded pairs cost it nothing. */
      if (!PyObject_GC_IsTracked(a) && !PyObject_GC_IsTracked(b)) PyObject_GC_UnTrack(t);
      return t;
    }
    case 8: {
      if (need(in, *pos, 4, "a count") < 0) return NULL;
      Py_ssize_t n = u32(p);
      *pos += 4;
      if (n > in->len - *pos) return bad("a list of %zd items runs past the end", n);
      PyObject *list = PyList_New(n);
      if (!list) return NULL;
      for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = dec(in, pos, depth + 1);
        if (!x) {
          Py_DECREF(list);
          return NULL;
        }
        PyList_SET_ITEM(list, i, x);
      }
      return list;
    }
    case 9: {
      if (need(in, *pos, 4, "a count") < 0) return NULL;
      Py_ssize_t n = u32(p);
      *pos += 4;
      if (n > in->len - *pos) return bad("a map of %zd entries runs past the end", n);
      PyObject *d = PyDict_New();
      if (!d) return NULL;
      for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t at = *pos;
        PyObject *k = dec(in, pos, depth + 1);
        PyObject *x = k ? dec(in, pos, depth + 1) : NULL;
        int rc = x ? PyDict_SetItem(d, k, x) : -1;
        if (rc < 0 && x && PyErr_ExceptionMatches(PyExc_TypeError)) {
          PyErr_Clear(); /* e.g. a list key: a 3-tuple key is written as a list */
          bad("map key of type %s at byte %zd cannot be a Python dict key", Py_TYPE(k)->tp_name, at);
        }
        if (rc < 0) {
          Py_XDECREF(k);
          Py_XDECREF(x);
          Py_DECREF(d);
          return NULL;
        }
        Py_DECREF(k);
        Py_DECREF(x);
      }
      return d;
    }
    default:
      return bad("unknown tag 0x%02x at byte %zd", (unsigned)tag, *pos - 1);
  }
}

/* Arguments (buffer, int, ...) of the decoders: METH_FASTCALL, no argument tuple to parse. */
static int decode_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *usage,
                       Py_buffer *view, Py_ssize_t *ints) {
  if (nargs != want) {
    PyErr_SetString(PyExc_TypeError, usage);
    return -1;
  }
  for (Py_ssize_t i = 1; i < want; i++) {
    ints[i - 1] = PyLong_AsSsize_t(args[i]);
    if (ints[i - 1] == -1 && PyErr_Occurred()) {
      if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        bad("position or count %R out of range", args[i]);
      }
      return -1;
    }
  }
  return PyObject_GetBuffer(args[0], view, PyBUF_SIMPLE);
}

static PyObject *decode_at(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  Py_buffer view;
  Py_ssize_t pos;
  if (decode_args(args, nargs, 2, "decode_at(buffer, pos)", &view, &pos) < 0) return NULL;
  In in = {view.buf, view.len};
  PyObject *v = pos < 0 ? bad("negative position %zd", pos) : dec(&in, &pos, 0);
  PyBuffer_Release(&view);
  if (!v) return NULL;
  PyObject *p = PyLong_FromSsize_t(pos);
  if (!p) {
    Py_DECREF(v);
    return NULL;
  }
  PyObject *r = PyTuple_New(2);
  if (!r) {
    Py_DECREF(v);
    Py_DECREF(p);
    return NULL;
  }
  PyTuple_SET_ITEM(r, 0, v);
  PyTuple_SET_ITEM(r, 1, p);
  return r;
}

static PyObject *decode_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  Py_buffer view;
  Py_ssize_t ints[2];
  if (decode_args(args, nargs, 3, "decode_all(buffer, pos, count)", &view, ints) < 0) return NULL;
  Py_ssize_t pos = ints[0], count = ints[1];
  In in = {view.buf, view.len};
  PyObject *list = NULL;
  if (pos < 0 || count < 0) {
    bad("negative position %zd or count %zd", pos, count);
    goto done;
  }
  if (pos > view.len || count > view.len - pos) { /* every value takes at least one byte */
    bad("%zd values cannot fit in the %zd bytes after byte %zd", count, pos > view.len ? 0 : view.len - pos, pos);
    goto done;
  }
  list = PyList_New(count);
  if (!list) goto done;
  for (Py_ssize_t i = 0; i < count; i++) {
    PyObject *x = dec(&in, &pos, 0);
    if (!x) {
      Py_CLEAR(list);
      goto done;
    }
    PyList_SET_ITEM(list, i, x);
  }
done:
  PyBuffer_Release(&view);
  return list ? Py_BuildValue("(Nn)", list, pos) : NULL;
}

static PyObject *set_bad_data(PyObject *self, PyObject *cls) {
  Py_XINCREF(cls);
  Py_XSETREF(BadData, cls);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"encode_into", (PyCFunction)(void (*)(void))encode_into, METH_FASTCALL,
     "Append the encoding of a value to a bytearray."},
    {"encode_records", (PyCFunction)(void (*)(void))encode_records, METH_FASTCALL,
     "Append the encodings of an iterable's values to a bytearray; return how many."},
    {"decode_at", (PyCFunction)(void (*)(void))decode_at, METH_FASTCALL, "Decode the value at pos: (value, next pos)."},
    {"decode_all", (PyCFunction)(void (*)(void))decode_all, METH_FASTCALL, "Decode count consecutive values from pos: (list, next pos)."},
    {"set_bad_data", set_bad_data, METH_O, "The exception class raised for bad data."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_codec", NULL, -1, methods,
                                     NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__codec(void) {
  if (!BadData) { /* codec.py also calls set_bad_data(); this covers a direct import */
    PyObject *errors = PyImport_ImportModule("spindle_engine.errors");
    if (errors) {
      BadData = PyObject_GetAttrString(errors, "BadData");
      Py_DECREF(errors);
    }
    if (!BadData) PyErr_Clear();
  }
  return PyModule_Create(&module);
}
