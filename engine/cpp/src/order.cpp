#include "order.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string_view>

#include "codec.hpp"
#include "errors.hpp"

namespace spindle {

namespace {

using T = Value::Type;

int sign(long double a, long double b) { return a < b ? -1 : (a > b ? 1 : 0); }

[[noreturn]] void noOrder(const Value& a, const Value& b) {
  throw badData(std::string("cannot order ") + Value::typeName(a.type()) + " and " +
                Value::typeName(b.type()));
}

int compareSeq(const Value* a, size_t na, const Value* b, size_t nb) {
  size_t n = na < nb ? na : nb;
  for (size_t i = 0; i < n; i++) {
    int c = compareValues(a[i], b[i]);
    if (c) return c;
  }
  return na < nb ? -1 : (na > nb ? 1 : 0);
}

bool sequence(const Value& v) { return v.isPair() || v.isList(); }

}  // namespace

int compareValues(const Value& a, const Value& b) {
  T ta = a.type(), tb = b.type();
  if (ta == T::Int && tb == T::Int) {
    int64_t x = a.asInt(), y = b.asInt();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (ta == T::String && tb == T::String) {
    int c = a.asString().compare(b.asString());  // bytewise = code point order for UTF-8
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if ((ta == T::Int || ta == T::Float) && (tb == T::Int || tb == T::Float)) {
    long double x = ta == T::Int ? (long double)a.asInt() : a.asFloat();
    long double y = tb == T::Int ? (long double)b.asInt() : b.asFloat();
    if (std::isnan(x) || std::isnan(y)) throw badData("cannot order NaN");
    return sign(x, y);
  }
  if (ta == T::Bool && tb == T::Bool) return int(a.asBool()) - int(b.asBool());
  if (ta == T::Bytes && tb == T::Bytes) {
    int c = a.asBytes().data.compare(b.asBytes().data);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (sequence(a) && sequence(b)) {
    Value pa[2], pb[2];
    const Value* xa;
    const Value* xb;
    size_t na, nb;
    if (ta == T::Pair) {
      int c = 0;
      if (tb == T::Pair) {
        c = compareValues(a.first(), b.first());
        return c ? c : compareValues(a.second(), b.second());
      }
      pa[0] = a.first();
      pa[1] = a.second();
      xa = pa;
      na = 2;
    } else {
      xa = a.asList().data();
      na = a.asList().size();
    }
    if (tb == T::Pair) {
      pb[0] = b.first();
      pb[1] = b.second();
      xb = pb;
      nb = 2;
    } else {
      xb = b.asList().data();
      nb = b.asList().size();
    }
    return compareSeq(xa, na, xb, nb);
  }
  if (ta == T::None && tb == T::None) return 0;
  noOrder(a, b);
}

size_t ValueHash::operator()(const Value& v) const {
  switch (v.type()) {
    case T::String: return std::hash<std::string_view>()(v.asString());
    case T::Int: {
      uint64_t x = uint64_t(v.asInt());
      x ^= x >> 33;
      x *= 0xff51afd7ed558ccdULL;
      x ^= x >> 33;
      return size_t(x);
    }
    case T::None: return 0x9e3779b9;
    default: {
      std::string enc;
      encode(v, enc);
      return std::hash<std::string_view>()(enc);
    }
  }
}

uint64_t stringPrefix(std::string_view s) {
  unsigned char b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(b, s.data(), s.size() < 8 ? s.size() : 8);
  uint64_t x;
  std::memcpy(&x, b, 8);
  return __builtin_bswap64(x);  // big-endian: unsigned order = bytewise order
}

namespace {

struct SortEntry {
  uint64_t prefix;
  const Value* v;  // into the keys vector: pointer order = position order
};

template <bool Ascending, class Tie>
void sortEntries(std::vector<SortEntry>& e, Tie tie) {
  std::sort(e.begin(), e.end(), [&](const SortEntry& a, const SortEntry& b) {
    if (a.prefix != b.prefix) return Ascending ? a.prefix < b.prefix : a.prefix > b.prefix;
    int c = tie(*a.v, *b.v);
    if (c != 0) return Ascending ? c < 0 : c > 0;
    return a.v < b.v;
  });
}

template <bool Ascending>
void sortByKind(std::vector<SortEntry>& e, T kind) {
  if (kind == T::String)
    sortEntries<Ascending>(e, [](const Value& a, const Value& b) {
      const std::string& x = a.asString();
      const std::string& y = b.asString();
      int c = x.compare(y);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    });
  else if (kind == T::Int) sortEntries<Ascending>(e, [](const Value&, const Value&) { return 0; });
  else sortEntries<Ascending>(e, [](const Value& a, const Value& b) { return compareValues(a, b); });
}

}  // namespace

std::vector<uint32_t> sortedOrder(const std::vector<Value>& keys, bool ascending) {
  if (keys.size() > UINT32_MAX) throw badData("too many records in one sorted run");
  std::vector<uint32_t> order(keys.size());
  if (keys.empty()) return order;
  T kind = keys[0].type();
  if (kind != T::String && kind != T::Int) kind = T::None;
  for (const Value& k : keys)
    if (k.type() != kind) {
      kind = T::None;
      break;
    }
  std::vector<SortEntry> e(keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    const Value& k = keys[i];
    e[i].v = &k;
    e[i].prefix = kind == T::String ? stringPrefix(k.asString()) : kind == T::Int ? intPrefix(k.asInt()) : 0;
  }
  if (ascending) sortByKind<true>(e, kind);
  else sortByKind<false>(e, kind);
  for (size_t i = 0; i < e.size(); i++) order[i] = uint32_t(e[i].v - keys.data());
  return order;
}

size_t approxSize(const Value& v) {
  switch (v.type()) {
    case T::String: return sizeof(Value) + v.asString().capacity();
    case T::Bytes: return sizeof(Value) + v.asBytes().data.capacity();
    case T::Pair: return sizeof(Value) + approxSize(v.first()) + approxSize(v.second()) + 16;
    case T::List: {
      size_t n = sizeof(Value);
      for (const Value& x : v.asList()) n += approxSize(x);
      return n;
    }
    case T::Map: {
      size_t n = sizeof(Value);
      for (const auto& kv : v.asMap()) n += approxSize(kv.first) + approxSize(kv.second);
      return n;
    }
    default: return sizeof(Value);
  }
}

}  // namespace spindle
