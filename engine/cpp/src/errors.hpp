// A task failure with the kind the backend expects (engine/rpc/EXECUTOR_CLI.md).
#pragma once

#include <stdexcept>
#include <string>

namespace spindle {

struct TaskFailure : std::runtime_error {
  TaskFailure(std::string kind, const std::string& message, std::string function = "")
      : std::runtime_error(message), kind(std::move(kind)), function(std::move(function)) {}
  std::string kind;      // FUNCTION_NOT_FOUND | FUNCTION_FAILED | BAD_DATA | CACHE_MISS |
                         // FETCH_FAILED | INTERNAL
  std::string function;  // ref of the function at fault, or ""
  std::string host;      // FETCH_FAILED: HOST:PORT of the file server, or ""
};

/** A file of another host could not be fetched (engine/rpc/FETCH.md). */
inline TaskFailure fetchFailed(const std::string& url, const std::string& host, const std::string& reason) {
  TaskFailure f("FETCH_FAILED", "cannot fetch " + url + ": " + reason);
  f.host = host;
  return f;
}

inline TaskFailure badData(const std::string& message) { return TaskFailure("BAD_DATA", message); }

}  // namespace spindle
