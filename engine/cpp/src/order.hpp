// Ordering, hashing and equality of values (FORMAT.md "Order").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spindle/value.hpp"

namespace spindle {

/** <0, 0, >0. Throws BAD_DATA for kinds that have no order (maps, NaN, mixed kinds). */
int compareValues(const Value& a, const Value& b);

struct ValueLess {
  bool operator()(const Value& a, const Value& b) const { return compareValues(a, b) < 0; }
};

/** Hash consistent with Value::operator== (structural). */
struct ValueHash {
  size_t operator()(const Value& v) const;
};

/** Value::operator== with a fast path for the common string and int keys. */
struct ValueEq {
  bool operator()(const Value& a, const Value& b) const {
    if (a.isString() && b.isString()) return a.asString() == b.asString();
    if (a.isInt() && b.isInt()) return a.asInt() == b.asInt();
    return a == b;
  }
};

/** An 8-byte prefix of a key whose unsigned order agrees with compareValues among keys of
    one kind: strings (first 8 bytes big-endian, zero-padded; equal prefixes decide nothing)
    and ints (biased; equal prefixes mean equal keys). */
uint64_t stringPrefix(std::string_view s);
inline uint64_t intPrefix(int64_t x) { return uint64_t(x) ^ (uint64_t(1) << 63); }

/** The positions 0..n-1 of `keys` in sorted order (ascending or descending), equal keys in
    position order (a stable sort). Keys of one kind (all strings, all ints) are sorted by an
    inline prefix, touching the values themselves only on prefix ties. */
std::vector<uint32_t> sortedOrder(const std::vector<Value>& keys, bool ascending);

/** Rough bytes a value takes in memory, for spill decisions. */
size_t approxSize(const Value& v);

}  // namespace spindle
