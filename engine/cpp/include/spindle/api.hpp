// Spindle C++ user-function API (header-only). Compile a library against it:
//
//   g++ -O2 -std=c++17 -shared -fPIC -I engine/cpp/include mylib.cpp -o libmy.so
//
// and reference a function as "/abs/path/libmy.so:Name". A function is a class deriving from
// one of the typed interfaces below; before(Context&) runs once per task before the first
// record, call(...) per record, after(Context&) once after the last. Export it with
//
//   SPINDLE_EXPORT(Name)              // symbol spindle_export_Name, ref "libmy.so:Name"
//   SPINDLE_EXPORT_AS(sym, ns::Name)  // symbol sym, ref "libmy.so:sym"
//
// The executor dlopen()s the library, looks up the ref's symbol (first exactly, then with the
// prefix "spindle_export_"), checks the ABI version and the kind, and creates one instance per
// executor connection with the exported factory. Exceptions thrown by call() fail the task
// (FUNCTION_FAILED, with e.what()); a value of the wrong type fails it with BAD_DATA.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "convert.hpp"
#include "value.hpp"

namespace spindle {

/** What a function sees of its task: the driver's properties, partition, executor, stage. */
class Context {
 public:
  const std::map<std::string, std::string>& props() const { return props_; }
  /** Property `key`, or `dflt` when the driver did not set it. */
  std::string prop(const std::string& key, const std::string& dflt = "") const {
    auto it = props_.find(key);
    return it == props_.end() ? dflt : it->second;
  }
  int32_t partition() const { return partition_; }
  int32_t executorId() const { return executor_; }
  const std::string& stage() const { return stage_; }

  // Set by the executor.
  std::map<std::string, std::string> props_;
  int32_t partition_ = 0;
  int32_t executor_ = 0;
  std::string stage_;
};

namespace abi {

constexpr uint32_t kVersion = 1;

/** Signature family of an exported function; the executor checks it against the operation. */
enum Kind : uint32_t {
  UNARY = 1,      // Value -> Value     : map, keyBy, mapValues, key functions (sort, shuffle, top)
  FLAT = 2,       // Value -> Values    : flatMap
  PREDICATE = 3,  // Value -> bool      : filter
  BINARY = 4,     // Value, Value -> Value : reduce, fold, aggregate, reduceByKey, aggregateByKey
  PARTITION = 5,  // Values -> Values   : mapPartitions
};

/** Type-erased bases the executor calls. Users derive from the typed interfaces instead. */
class FunctionBase {
 public:
  virtual ~FunctionBase() = default;
  virtual void before(Context&) {}
  virtual void after(Context&) {}
};
class Unary : public FunctionBase {
 public:
  static constexpr Kind kKind = UNARY;
  virtual Value apply(Value&& v, Context& ctx) = 0;
};
class Flat : public FunctionBase {
 public:
  static constexpr Kind kKind = FLAT;
  /** Appends the results to `out`. */
  virtual void apply(Value&& v, Context& ctx, std::vector<Value>& out) = 0;
};
class Predicate : public FunctionBase {
 public:
  static constexpr Kind kKind = PREDICATE;
  virtual bool apply(const Value& v, Context& ctx) = 0;
};
class Binary : public FunctionBase {
 public:
  static constexpr Kind kKind = BINARY;
  virtual Value apply(Value&& a, Value&& b, Context& ctx) = 0;
};
class Partition : public FunctionBase {
 public:
  static constexpr Kind kKind = PARTITION;
  /** Appends the results to `out`. */
  virtual void apply(std::vector<Value>&& in, Context& ctx, std::vector<Value>& out) = 0;
};

/** What an exported symbol points to (C layout). */
struct Export {
  uint32_t abi;         // kVersion
  uint32_t kind;        // Kind
  uint32_t value_size;  // sizeof(Value), guards against mismatched headers
  const char* name;     // class name, for messages
  FunctionBase* (*create)();
  void (*destroy)(FunctionBase*);
};

}  // namespace abi

/** map / keyBy / mapValues / key function: Out call(In&, Context&). */
template <class In, class Out>
class IFunction : public abi::Unary {
 public:
  virtual Out call(In& elem, Context& ctx) = 0;
  Value apply(Value&& v, Context& ctx) final {
    In in = fromValue<In>(std::move(v));
    return toValue(call(in, ctx));
  }
};

/** flatMap: std::vector<Out> call(In&, Context&). */
template <class In, class Out>
class IFlatFunction : public abi::Flat {
 public:
  virtual std::vector<Out> call(In& elem, Context& ctx) = 0;
  void apply(Value&& v, Context& ctx, std::vector<Value>& out) final {
    In in = fromValue<In>(std::move(v));
    for (auto& x : call(in, ctx)) out.push_back(toValue(std::move(x)));
  }
};

/** filter: bool call(const In&, Context&); the record is kept when true. */
template <class In>
class IFilterFunction : public abi::Predicate {
 public:
  virtual bool call(const In& elem, Context& ctx) = 0;
  bool apply(const Value& v, Context& ctx) final {
    if constexpr (std::is_same_v<In, Value>) {
      return call(v, ctx);
    } else {
      return call(fromValue<In>(v), ctx);
    }
  }
};

/** reduce / fold / aggregate / reduceByKey / aggregateByKey: Out call(A&, B&, Context&). */
template <class A, class B, class Out>
class IFunction2 : public abi::Binary {
 public:
  virtual Out call(A& a, B& b, Context& ctx) = 0;
  Value apply(Value&& a, Value&& b, Context& ctx) final {
    A x = fromValue<A>(std::move(a));
    B y = fromValue<B>(std::move(b));
    return toValue(call(x, y, ctx));
  }
};

/** mapPartitions: std::vector<Out> call(std::vector<In>&, Context&). */
template <class In, class Out>
class IPartitionFunction : public abi::Partition {
 public:
  virtual std::vector<Out> call(std::vector<In>& part, Context& ctx) = 0;
  void apply(std::vector<Value>&& in, Context& ctx, std::vector<Value>& out) final {
    std::vector<In> part;
    if constexpr (std::is_same_v<In, Value>) {
      part = std::move(in);
    } else {
      part.reserve(in.size());
      for (auto& v : in) part.push_back(fromValue<In>(std::move(v)));
      in.clear();
    }
    for (auto& x : call(part, ctx)) out.push_back(toValue(std::move(x)));
  }
};

}  // namespace spindle

#define SPINDLE_EXPORT_AS(SYMBOL, CLASS)                                                                \
  extern "C" __attribute__((visibility("default")))                                                     \
  const ::spindle::abi::Export SYMBOL = {::spindle::abi::kVersion,                                      \
                                         CLASS::kKind,                                                  \
                                         sizeof(::spindle::Value),                                      \
                                         #CLASS,                                                        \
                                         []() -> ::spindle::abi::FunctionBase* { return new CLASS(); }, \
                                         [](::spindle::abi::FunctionBase* f) { delete f; }};

#define SPINDLE_EXPORT(CLASS) SPINDLE_EXPORT_AS(spindle_export_##CLASS, CLASS)
