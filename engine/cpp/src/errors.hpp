// A task failure with the kind the backend expects (engine/rpc/EXECUTOR_CLI.md).
#pragma once

#include <stdexcept>
#include <string>

namespace spindle {

struct TaskFailure : std::runtime_error {
  TaskFailure(std::string kind, const std::string& message, std::string function = "")
      : std::runtime_error(message), kind(std::move(kind)), function(std::move(function)) {}
  std::string kind;      // FUNCTION_NOT_FOUND | FUNCTION_FAILED | BAD_DATA | CACHE_MISS | INTERNAL
  std::string function;  // ref of the function at fault, or ""
};

inline TaskFailure badData(const std::string& message) { return TaskFailure("BAD_DATA", message); }

}  // namespace spindle
