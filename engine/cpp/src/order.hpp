// Ordering, hashing and equality of values (FORMAT.md "Order").
#pragma once

#include <cstddef>

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

/** Rough bytes a value takes in memory, for spill decisions. */
size_t approxSize(const Value& v);

}  // namespace spindle
