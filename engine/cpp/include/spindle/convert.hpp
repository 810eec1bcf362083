// Conversions between spindle::Value and plain C++ types, used by the typed user API.
// Supported: Value, bool, integral types (i64), float/double (f64; ints are accepted),
// std::string, Bytes, std::pair<A,B>, std::vector<T>, std::map/unordered_map<K,V>,
// std::optional<T> (none <-> nullopt).
#pragma once

#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "value.hpp"

namespace spindle {

template <class T, class = void>
struct Convert;

template <>
struct Convert<Value> {
  static Value from(Value&& v) { return std::move(v); }
  static Value from(const Value& v) { return v; }
  static Value to(Value&& v) { return std::move(v); }
  static Value to(const Value& v) { return v; }
};

template <>
struct Convert<bool> {
  static bool from(const Value& v) { return v.asBool(); }
  static Value to(bool b) { return Value(b); }
};

template <class T>
struct Convert<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static T from(const Value& v) { return T(v.asInt()); }
  static Value to(T x) { return Value((long long)x); }
};

template <class T>
struct Convert<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static T from(const Value& v) { return T(v.asNumber()); }
  static Value to(T x) { return Value(double(x)); }
};

template <>
struct Convert<std::string> {
  static std::string from(Value&& v) { return std::move(v.asString()); }
  static std::string from(const Value& v) { return v.asString(); }
  static Value to(std::string&& s) { return Value(std::move(s)); }
  static Value to(const std::string& s) { return Value(s); }
};

template <>
struct Convert<Bytes> {
  static Bytes from(Value&& v) { return std::move(v.asBytes()); }
  static Bytes from(const Value& v) { return v.asBytes(); }
  static Value to(Bytes&& b) { return Value(std::move(b)); }
  static Value to(const Bytes& b) { return Value(b); }
};

template <class T>
T fromValue(Value&& v) {
  return Convert<T>::from(std::move(v));
}
template <class T>
T fromValue(const Value& v) {
  return Convert<T>::from(v);
}
template <class T>
Value toValue(T&& x) {
  return Convert<std::decay_t<T>>::to(std::forward<T>(x));
}

template <class A, class B>
struct Convert<std::pair<A, B>> {
  static std::pair<A, B> from(Value&& v) {
    if (!v.isPair()) throw BadValue(std::string("expected pair, got ") + Value::typeName(v.type()));
    return {fromValue<A>(std::move(v.first())), fromValue<B>(std::move(v.second()))};
  }
  static std::pair<A, B> from(const Value& v) { return {fromValue<A>(v.first()), fromValue<B>(v.second())}; }
  static Value to(std::pair<A, B>&& p) {
    return Value::pair(toValue(std::move(p.first)), toValue(std::move(p.second)));
  }
  static Value to(const std::pair<A, B>& p) { return Value::pair(toValue(p.first), toValue(p.second)); }
};

template <class T>
struct Convert<std::vector<T>, std::enable_if_t<!std::is_same_v<T, Value>>> {
  static std::vector<T> from(Value&& v) {
    std::vector<T> out;
    auto& l = v.asList();
    out.reserve(l.size());
    for (auto& x : l) out.push_back(fromValue<T>(std::move(x)));
    return out;
  }
  static std::vector<T> from(const Value& v) {
    std::vector<T> out;
    for (auto& x : v.asList()) out.push_back(fromValue<T>(x));
    return out;
  }
  static Value to(std::vector<T>&& xs) {
    List l;
    l.reserve(xs.size());
    for (auto& x : xs) l.push_back(toValue(std::move(x)));
    return Value(std::move(l));
  }
  static Value to(const std::vector<T>& xs) {
    List l;
    l.reserve(xs.size());
    for (auto& x : xs) l.push_back(toValue(x));
    return Value(std::move(l));
  }
};

template <>
struct Convert<List> {
  static List from(Value&& v) { return std::move(v.asList()); }
  static List from(const Value& v) { return v.asList(); }
  static Value to(List&& l) { return Value(std::move(l)); }
  static Value to(const List& l) { return Value(l); }
};

template <class M>
struct ConvertMap {
  using K = typename M::key_type;
  using V = typename M::mapped_type;
  static M from(Value&& v) {
    M out;
    for (auto& kv : v.asMap())
      out.emplace(fromValue<K>(std::move(kv.first)), fromValue<V>(std::move(kv.second)));
    return out;
  }
  static M from(const Value& v) {
    M out;
    for (auto& kv : v.asMap()) out.emplace(fromValue<K>(kv.first), fromValue<V>(kv.second));
    return out;
  }
  static Value to(const M& m) {
    Map out;
    out.reserve(m.size());
    for (auto& kv : m) out.emplace_back(toValue(kv.first), toValue(kv.second));
    return Value(std::move(out));
  }
};
template <class K, class V>
struct Convert<std::map<K, V>> : ConvertMap<std::map<K, V>> {};
template <class K, class V>
struct Convert<std::unordered_map<K, V>> : ConvertMap<std::unordered_map<K, V>> {};

template <class T>
struct Convert<std::optional<T>> {
  static std::optional<T> from(Value&& v) {
    if (v.isNone()) return std::nullopt;
    return fromValue<T>(std::move(v));
  }
  static std::optional<T> from(const Value& v) {
    if (v.isNone()) return std::nullopt;
    return fromValue<T>(v);
  }
  static Value to(const std::optional<T>& o) { return o ? toValue(*o) : Value(); }
};

}  // namespace spindle
