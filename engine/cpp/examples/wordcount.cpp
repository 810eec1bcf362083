// Word count functions (the seed's Figure 6): a tokenizer and an i64 reducer.
//   flatMap("libwordcount.so:Split")        line -> words
//   flatMap("libwordcount.so:SplitPairs")   line -> (word, 1) pairs
//   reduceByKey("libwordcount.so:Join")     (count, count) -> count
#include <spindle/api.hpp>

using namespace spindle;

namespace {

// Words = runs of non-whitespace (like Python's str.split() on ASCII whitespace).
inline bool space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

template <class Emit>
void words(const std::string& line, Emit emit) {
  size_t i = 0, n = line.size();
  while (i < n) {
    while (i < n && space(line[i])) i++;
    size_t start = i;
    while (i < n && !space(line[i])) i++;
    if (i > start) emit(line.substr(start, i - start));
  }
}

}  // namespace

class Split : public IFlatFunction<std::string, std::string> {
 public:
  std::vector<std::string> call(std::string& line, Context&) override {
    std::vector<std::string> out;
    out.reserve(16);
    words(line, [&](std::string&& w) { out.push_back(std::move(w)); });
    return out;
  }
};

class SplitPairs : public IFlatFunction<std::string, std::pair<std::string, int64_t>> {
 public:
  std::vector<std::pair<std::string, int64_t>> call(std::string& line, Context&) override {
    std::vector<std::pair<std::string, int64_t>> out;
    out.reserve(16);
    words(line, [&](std::string&& w) { out.emplace_back(std::move(w), 1); });
    return out;
  }
};

class Join : public IFunction2<int64_t, int64_t, int64_t> {
 public:
  int64_t call(int64_t& a, int64_t& b, Context&) override { return a + b; }
};

SPINDLE_EXPORT(Split)
SPINDLE_EXPORT(SplitPairs)
SPINDLE_EXPORT(Join)
