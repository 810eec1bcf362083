#include "functions.hpp"

#include <dlfcn.h>

#include <mutex>

#include "errors.hpp"

namespace spindle {

namespace {

std::mutex g_libs_mutex;
std::map<std::string, void*> g_libs;  // path -> dlopen handle (never closed)

/** The library of `ref` at `pathOrUrl` (fetched first if on another host), opened once. */
void* openLibrary(const std::string& pathOrUrl, const std::string& ref, Fetcher& fetcher) {
  std::string path;
  try {
    path = fetcher.library(pathOrUrl);
  } catch (const TaskFailure& e) {
    TaskFailure f(e.kind, "function " + ref + ": " + e.what(), ref);
    f.host = e.host;
    throw f;
  }
  std::lock_guard<std::mutex> lock(g_libs_mutex);
  auto it = g_libs.find(path);
  if (it != g_libs.end()) return it->second;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* err = dlerror();
    throw TaskFailure("FUNCTION_NOT_FOUND",
                      std::string("cannot load ") + path + ": " + (err ? err : "dlopen failed"), ref);
  }
  g_libs[path] = h;
  return h;
}

}  // namespace

const char* kindName(abi::Kind k) {
  switch (k) {
    case abi::UNARY: return "IFunction (map/keyBy/mapValues/key)";
    case abi::FLAT: return "IFlatFunction (flatMap)";
    case abi::PREDICATE: return "IFilterFunction (filter)";
    case abi::BINARY: return "IFunction2 (reduce/fold/aggregate/reduceByKey)";
    case abi::PARTITION: return "IPartitionFunction (mapPartitions)";
  }
  return "unknown kind";
}

LoadedFunction::~LoadedFunction() {
  if (obj && exp) exp->destroy(obj);
}

LoadedFunction* FunctionCache::load(const rpc::Function& fn, unsigned accepted, const char* use) {
  const std::string& ref = fn.ref;
  if (fn.__isset.pickled)
    throw TaskFailure("FUNCTION_NOT_FOUND", "a pickled Python function cannot run on a C++ executor: " + ref,
                      ref);
  auto it = cache_.find(ref);
  if (it == cache_.end()) {
    size_t colon = ref.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == ref.size())
      throw TaskFailure("FUNCTION_NOT_FOUND", "bad C++ function reference (want /path/lib.so:symbol): " + ref,
                        ref);
    std::string path = ref.substr(0, colon), symbol = ref.substr(colon + 1);
    void* h = openLibrary(path, ref, fetcher_);
    void* sym = dlsym(h, symbol.c_str());
    if (!sym) sym = dlsym(h, ("spindle_export_" + symbol).c_str());
    if (!sym)
      throw TaskFailure("FUNCTION_NOT_FOUND",
                        "no symbol " + symbol + " (nor spindle_export_" + symbol + ") in " + path, ref);
    auto* exp = static_cast<const abi::Export*>(sym);
    if (exp->abi != abi::kVersion || exp->value_size != sizeof(Value))
      throw TaskFailure("FUNCTION_NOT_FOUND",
                        "symbol " + symbol + " in " + path +
                            " was built against another Spindle API version (rebuild it)",
                        ref);
    auto lf = std::make_unique<LoadedFunction>();
    lf->ref = ref;
    lf->exp = exp;
    try {
      lf->obj = exp->create();
    } catch (const std::exception& e) {
      throw TaskFailure("FUNCTION_FAILED", std::string("constructor: ") + e.what(), ref);
    }
    it = cache_.emplace(ref, std::move(lf)).first;
  }
  LoadedFunction* lf = it->second.get();
  if (!(accepted & bit(lf->kind())))
    throw TaskFailure("FUNCTION_NOT_FOUND",
                      ref + " is an " + kindName(lf->kind()) + ", which cannot be used for " + use, ref);
  return lf;
}

}  // namespace spindle
