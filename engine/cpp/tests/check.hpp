// A tiny assertion helper for the unit test programs (no framework needed).
#pragma once

#include <cstdio>
#include <string>

namespace check {
inline int failures = 0;
inline int passed = 0;
}  // namespace check

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (cond) {                                                                     \
      check::passed++;                                                              \
    } else {                                                                        \
      check::failures++;                                                            \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                               \
  } while (0)

#define CHECK_EQ(a, b)                                                                        \
  do {                                                                                        \
    auto _a = (a);                                                                            \
    auto _b = (b);                                                                            \
    if (_a == _b) {                                                                           \
      check::passed++;                                                                        \
    } else {                                                                                  \
      check::failures++;                                                                      \
      std::fprintf(stderr, "%s:%d: CHECK_EQ failed: %s != %s\n", __FILE__, __LINE__, #a, #b); \
    }                                                                                         \
  } while (0)

#define CHECK_THROWS(expr)                                                                   \
  do {                                                                                       \
    bool _thrown = false;                                                                    \
    try {                                                                                    \
      (void)(expr);                                                                          \
    } catch (...) {                                                                          \
      _thrown = true;                                                                        \
    }                                                                                        \
    if (_thrown) check::passed++;                                                            \
    else {                                                                                   \
      check::failures++;                                                                     \
      std::fprintf(stderr, "%s:%d: expected an exception: %s\n", __FILE__, __LINE__, #expr); \
    }                                                                                        \
  } while (0)

inline int checkSummary(const char* name) {
  std::printf("%s: %d checks passed, %d failed\n", name, check::passed, check::failures);
  return check::failures ? 1 : 0;
}
