// User functions by reference ("/abs/lib.so:symbol", or "tcp://HOST:PORT/abs/lib.so:symbol",
// fetched once per process): libraries are dlopen()ed once per process; instances are created
// per connection (so concurrent tasks never share one).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "executor_types.h"
#include "fetch.hpp"
#include "spindle/api.hpp"

namespace spindle {

/** One loaded instance of a user function. */
struct LoadedFunction {
  std::string ref;
  const abi::Export* exp = nullptr;
  abi::FunctionBase* obj = nullptr;
  ~LoadedFunction();
  abi::Kind kind() const { return abi::Kind(exp->kind); }
  template <class T>
  T* as() const {
    return static_cast<T*>(obj);
  }
};

const char* kindName(abi::Kind k);

/** Per-connection cache of function instances. */
class FunctionCache {
 public:
  explicit FunctionCache(Fetcher& fetcher) : fetcher_(fetcher) {}
  /** The instance for `fn`; throws FUNCTION_NOT_FOUND if it cannot be loaded or its kind is
      not one of `accepted` (a bit mask of 1 << Kind). */
  LoadedFunction* load(const rpc::Function& fn, unsigned accepted, const char* use);

 private:
  Fetcher& fetcher_;
  std::map<std::string, std::unique_ptr<LoadedFunction>> cache_;
};

constexpr unsigned bit(abi::Kind k) { return 1u << k; }

}  // namespace spindle
