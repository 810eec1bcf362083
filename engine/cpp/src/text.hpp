// Text input splits and JSON/text output lines (FORMAT.md "Text input", "Text and JSON output").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "spindle/value.hpp"

namespace spindle {

/** Calls `emit` with each line of the split [offset, offset+length) of `path`, as UTF-8
    (invalid bytes replaced by U+FFFD). `emit` returns false to stop early. */
void readTextSplit(const std::string& path, int64_t offset, int64_t length,
                   const std::function<bool(std::string&&)>& emit);

/** Valid UTF-8 copy of `s` (each maximal invalid subpart replaced by U+FFFD, like Python). */
std::string utf8Repaired(const char* s, size_t n);

/** Appends the JSON of `v` (Python json.dumps(ensure_ascii=False, separators=(",", ":"))). */
void appendJson(const Value& v, std::string& out);
/** Python repr() of a float. */
std::string floatRepr(double d);

}  // namespace spindle
