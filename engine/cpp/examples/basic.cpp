// Small functions for tests and examples.
//   map("libbasic.so:Identity")      x -> x (any value)
//   filter("libbasic.so:Even")       keep even ints
//   keyBy("libbasic.so:FirstChar")   string -> its first character ("" for "")
//   map("libbasic.so:AddOne")        int -> int + 1
//   reduce("libbasic.so:Sum")        numbers -> their sum (int if both ints, else float)
//   mapPartitions("libbasic.so:CountPartition")  records -> [(partition, count)]
//   map("libbasic.so:Fail")          throws on any record (error-path tests)
//   map("libbasic.so:Tag")           x -> (prop "tag" of the driver, x); before/after counted
#include <spindle/api.hpp>

#include <stdexcept>

using namespace spindle;

class Identity : public IFunction<Value, Value> {
 public:
  Value call(Value& v, Context&) override { return std::move(v); }
};

class Even : public IFilterFunction<int64_t> {
 public:
  bool call(const int64_t& x, Context&) override { return x % 2 == 0; }
};

class FirstChar : public IFunction<std::string, std::string> {
 public:
  std::string call(std::string& s, Context&) override {
    if (s.empty()) return "";
    size_t n = 1;  // one UTF-8 character
    unsigned char c = static_cast<unsigned char>(s[0]);
    if (c >= 0xF0) n = 4;
    else if (c >= 0xE0) n = 3;
    else if (c >= 0xC0) n = 2;
    return s.substr(0, n);
  }
};

class AddOne : public IFunction<int64_t, int64_t> {
 public:
  int64_t call(int64_t& x, Context&) override { return x + 1; }
};

class Sum : public IFunction2<Value, Value, Value> {
 public:
  Value call(Value& a, Value& b, Context&) override {
    if (a.isInt() && b.isInt()) return Value((long long)(a.asInt() + b.asInt()));
    return Value(a.asNumber() + b.asNumber());
  }
};

class CountPartition : public IPartitionFunction<Value, std::pair<int64_t, int64_t>> {
 public:
  std::vector<std::pair<int64_t, int64_t>> call(std::vector<Value>& part, Context& ctx) override {
    return {{ctx.partition(), int64_t(part.size())}};
  }
};

class Fail : public IFunction<Value, Value> {
 public:
  Value call(Value&, Context& ctx) override {
    throw std::runtime_error("Fail always fails (partition " + std::to_string(ctx.partition()) + ")");
  }
};

class Tag : public IFunction<Value, std::pair<std::string, Value>> {
 public:
  void before(Context& ctx) override { tag_ = ctx.prop("tag", "none"); }
  std::pair<std::string, Value> call(Value& v, Context&) override { return {tag_, std::move(v)}; }

 private:
  std::string tag_;
};

SPINDLE_EXPORT(Identity)
SPINDLE_EXPORT(Even)
SPINDLE_EXPORT(FirstChar)
SPINDLE_EXPORT(AddOne)
SPINDLE_EXPORT(Sum)
SPINDLE_EXPORT(CountPartition)
SPINDLE_EXPORT(Fail)
SPINDLE_EXPORT(Tag)
