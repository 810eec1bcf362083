// spindle::Value — one record of the Spindle binary format (engine/FORMAT.md):
// none, bool, i64, f64, string, bytes, pair, list, map. Header-only; shared by the executor
// and user function libraries (both must be compiled against the same header).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace spindle {

class Value;

/** Raised when a value does not have the type a function expects (reported as BAD_DATA). */
struct BadValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/** Binary data, distinct from a (UTF-8) string. */
struct Bytes {
  std::string data;
  bool operator==(const Bytes& o) const { return data == o.data; }
};

struct MapEntry;
using List = std::vector<Value>;
/** Map entries in insertion order (FORMAT.md: written in iteration order, keys unique). */
using Map = std::vector<MapEntry>;

struct PairData;

/** Owns a heap pair; copies deeply (Value is a plain value type). */
class PairBox {
 public:
  PairBox();
  PairBox(Value a, Value b);
  PairBox(const PairBox& o);
  PairBox(PairBox&&) noexcept;
  PairBox& operator=(const PairBox& o);
  PairBox& operator=(PairBox&&) noexcept;
  ~PairBox();
  PairData& get() { return *p_; }
  const PairData& get() const { return *p_; }

 private:
  std::unique_ptr<PairData> p_;
};

class Value {
 public:
  enum class Type : uint8_t { None, Bool, Int, Float, String, Bytes, Pair, List, Map };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int v) : v_(int64_t(v)) {}
  Value(long v) : v_(int64_t(v)) {}
  Value(long long v) : v_(int64_t(v)) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(Bytes b) : v_(std::move(b)) {}
  Value(List l) : v_(std::move(l)) {}
  Value(Map m) : v_(std::move(m)) {}
  Value(Value a, Value b) : v_(PairBox(std::move(a), std::move(b))) {}

  static Value pair(Value a, Value b) { return Value(std::move(a), std::move(b)); }

  Type type() const { return Type(v_.index()); }
  bool isNone() const { return type() == Type::None; }
  bool isBool() const { return type() == Type::Bool; }
  bool isInt() const { return type() == Type::Int; }
  bool isFloat() const { return type() == Type::Float; }
  bool isString() const { return type() == Type::String; }
  bool isBytes() const { return type() == Type::Bytes; }
  bool isPair() const { return type() == Type::Pair; }
  bool isList() const { return type() == Type::List; }
  bool isMap() const { return type() == Type::Map; }

  bool asBool() const { return get<bool>("bool"); }
  int64_t asInt() const { return get<int64_t>("int"); }
  double asFloat() const { return get<double>("float"); }
  /** An int or a float, as double. */
  double asNumber() const { return isInt() ? double(asInt()) : asFloat(); }
  const std::string& asString() const { return get<std::string>("string"); }
  std::string& asString() { return get<std::string>("string"); }
  const Bytes& asBytes() const { return get<Bytes>("bytes"); }
  Bytes& asBytes() { return get<Bytes>("bytes"); }
  const List& asList() const { return get<List>("list"); }
  List& asList() { return get<List>("list"); }
  const Map& asMap() const { return get<Map>("map"); }
  Map& asMap() { return get<Map>("map"); }
  /** The elements of a pair. */
  const Value& first() const;
  Value& first();
  const Value& second() const;
  Value& second();

  /** Python-like truthiness (filter functions returning a Value). */
  bool truthy() const {
    switch (type()) {
      case Type::None: return false;
      case Type::Bool: return asBool();
      case Type::Int: return asInt() != 0;
      case Type::Float: return asFloat() != 0.0;
      case Type::String: return !asString().empty();
      case Type::Bytes: return !asBytes().data.empty();
      case Type::Pair: return true;
      case Type::List: return !asList().empty();
      case Type::Map: return !asMap().empty();
    }
    return false;
  }

  /** Structural equality (same type and contents; 1 != 1.0). */
  bool operator==(const Value& o) const { return v_ == o.v_; }
  bool operator!=(const Value& o) const { return !(*this == o); }

  static const char* typeName(Type t) {
    static const char* names[] = {"none", "bool", "int", "float", "string", "bytes", "pair", "list", "map"};
    return unsigned(t) < 9 ? names[int(t)] : "invalid";
  }

 private:
  template <class T>
  const T& get(const char* want) const {
    if (auto* p = std::get_if<T>(&v_)) return *p;
    throw BadValue(std::string("expected ") + want + ", got " + typeName(type()));
  }
  template <class T>
  T& get(const char* want) {
    if (auto* p = std::get_if<T>(&v_)) return *p;
    throw BadValue(std::string("expected ") + want + ", got " + typeName(type()));
  }

  friend bool operator==(const PairBox& a, const PairBox& b);
  std::variant<std::monostate, bool, int64_t, double, std::string, Bytes, PairBox, List, Map> v_;
};

/** One key/value entry of a Map. */
struct MapEntry {
  MapEntry() = default;
  MapEntry(Value k, Value v) : first(std::move(k)), second(std::move(v)) {}
  Value first;
  Value second;
  bool operator==(const MapEntry& o) const { return first == o.first && second == o.second; }
};

/** The two values of a pair. */
struct PairData {
  Value first;
  Value second;
  bool operator==(const PairData& o) const { return first == o.first && second == o.second; }
};

inline const Value& Value::first() const { return get<PairBox>("pair").get().first; }
inline Value& Value::first() { return get<PairBox>("pair").get().first; }
inline const Value& Value::second() const { return get<PairBox>("pair").get().second; }
inline Value& Value::second() { return get<PairBox>("pair").get().second; }

inline PairBox::PairBox() : p_(new PairData()) {}
inline PairBox::PairBox(Value a, Value b) : p_(new PairData{std::move(a), std::move(b)}) {}
inline PairBox::PairBox(const PairBox& o) : p_(new PairData(*o.p_)) {}
inline PairBox::PairBox(PairBox&& o) noexcept = default;
inline PairBox& PairBox::operator=(PairBox&& o) noexcept = default;
inline PairBox::~PairBox() = default;
inline PairBox& PairBox::operator=(const PairBox& o) {
  if (this != &o) p_.reset(new PairData(*o.p_));
  return *this;
}
inline bool operator==(const PairBox& a, const PairBox& b) { return a.get() == b.get(); }

}  // namespace spindle
