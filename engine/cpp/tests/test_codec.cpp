// Unit tests of the binary format (engine/FORMAT.md worked examples), ordering, JSON, text.
// Usage: test-codec [python-fixture.bin ...]  (each fixture: a partition file written by Python
// whose records are compared against fixtures' expected values when known).
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>

#include "check.hpp"
#include "spindle/convert.hpp"
#include "codec.hpp"
#include "order.hpp"
#include "text.hpp"

using namespace spindle;

static std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

static std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += char(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

static std::string tmpPath(const char* name) {
  return "/tmp/spindle-cpp-test-" + std::to_string(getpid()) + "-" + name;
}

static std::string readAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

static void workedExample() {
  std::string path = tmpPath("worked.bin");
  std::vector<Value> records{Value(7), Value("h\xC3\xA9"), Value::pair("a", 1.5)};
  writePartition(path, records);
  CHECK_EQ(hex(readAll(path)), std::string("5350444c01000000"
                                           "0300000000000000"
                                           "030700000000000000"
                                           "0503000000"
                                           "68c3a9"
                                           "07050100000061"
                                           "04000000000000f83f"));
  CHECK(readPartition(path) == records);
  unlink(path.c_str());

  CHECK_EQ(hex(encode(Value(List{Value(), Value(true)}))), std::string("08020000000002"));
  CHECK_EQ(hex(encode(Value(Map{{Value("k"), Value(-1)}}))),
           std::string("090100000005010000006b03ffffffffffffffff"));
  CHECK_EQ(hex(encode(Value(Bytes{std::string(1, '\0')}))), std::string("060100000000"));
  CHECK(decode(unhex("090100000005010000006b03ffffffffffffffff")) == Value(Map{{Value("k"), Value(-1)}}));

  CHECK_EQ(hashKey(Value("a")), 0xE8B7BE43u);
  CHECK_EQ(hashKey(Value("a")) % 4, 3u);
  CHECK_EQ(hashKey(Value(7)), 0x6FE7D670u);
  CHECK_EQ(hashKey(Value(7)) % 4, 0u);
  // values computed with the Python executor's codec.hash_key
  CHECK_EQ(hashKey(Value::pair("a", 1)), 1959313352u);
  CHECK_EQ(hashKey(Value(Bytes{"xy"})), 2102096169u);
  CHECK_EQ(hashKey(Value(1.5)), 3521512234u);
  CHECK_EQ(hashKey(Value()), 3523407757u);

  // empty partition: 16 bytes
  std::string empty = tmpPath("empty.bin");
  writePartition(empty, {});
  CHECK_EQ(readAll(empty).size(), size_t(16));
  CHECK(readPartition(empty).empty());
  unlink(empty.c_str());
}

static Value randomValue(std::mt19937_64& rng, int depth) {
  int kind = int(rng() % (depth > 2 ? 7 : 10));
  switch (kind) {
    case 0: return Value();
    case 1: return Value(bool(rng() & 1));
    case 2: return Value((long long)rng());
    case 3: return Value(double(int64_t(rng())) / 1e6);
    case 4: return Value(std::string(rng() % 20, char('a' + rng() % 26)));
    case 5: return Value(Bytes{std::string(rng() % 5, char(rng() % 256))});
    case 6: return Value("\xE2\x82\xAC uni \xF0\x9F\x98\x80");
    case 7: return Value::pair(randomValue(rng, depth + 1), randomValue(rng, depth + 1));
    case 8: {
      List l;
      for (size_t i = rng() % 5; i > 0; i--) l.push_back(randomValue(rng, depth + 1));
      return Value(std::move(l));
    }
    default: {
      Map m;
      for (size_t i = rng() % 4; i > 0; i--)
        m.emplace_back(Value(std::to_string(i)), randomValue(rng, depth + 1));
      return Value(std::move(m));
    }
  }
}

static void roundTrips() {
  std::mt19937_64 rng(42);
  std::vector<Value> records;
  for (int i = 0; i < 2000; i++) records.push_back(randomValue(rng, 0));
  for (const Value& v : records) CHECK(decode(encode(v)) == v);
  std::string path = tmpPath("random.bin");
  writePartition(path, records);
  CHECK(readPartition(path) == records);
  // truncated file -> BAD_DATA
  std::string data = readAll(path);
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << data.substr(0, data.size() - 3);
  }
  CHECK_THROWS(readPartition(path));
  unlink(path.c_str());
  CHECK_THROWS(decode(unhex("0a")));          // unknown tag
  CHECK_THROWS(decode(unhex("0503000000")));  // string shorter than its length
}

static void ordering() {
  CHECK(compareValues(Value(1), Value(1.5)) < 0);
  CHECK(compareValues(Value(2.0), Value(2)) == 0);
  CHECK(compareValues(Value(false), Value(true)) < 0);
  CHECK(compareValues(Value("a"), Value("b")) < 0);
  CHECK(compareValues(Value("z"), Value("\xC3\xA9")) < 0);  // code point order
  CHECK(compareValues(Value::pair("a", 2), Value::pair("a", 10)) < 0);
  CHECK(compareValues(Value(List{Value(1)}), Value(List{Value(1), Value(0)})) < 0);
  CHECK(compareValues(Value::pair(1, 2), Value(List{Value(1), Value(3)})) < 0);
  CHECK(compareValues(Value(int64_t(1) << 62), Value(double(int64_t(1) << 62) + 2048.0)) < 0);
  CHECK_THROWS(compareValues(Value("a"), Value(1)));
  CHECK_THROWS(compareValues(Value(NAN), Value(1.0)));
}

static void json() {
  auto j = [](const Value& v) {
    std::string s;
    appendJson(v, s);
    return s;
  };
  CHECK_EQ(floatRepr(1.0), std::string("1.0"));
  CHECK_EQ(floatRepr(1.5), std::string("1.5"));
  CHECK_EQ(floatRepr(1e20), std::string("1e+20"));
  CHECK_EQ(floatRepr(1e-7), std::string("1e-07"));
  CHECK_EQ(floatRepr(0.1), std::string("0.1"));
  CHECK_EQ(floatRepr(1e16), std::string("1e+16"));
  CHECK_EQ(floatRepr(1e15), std::string("1000000000000000.0"));
  CHECK_EQ(floatRepr(0.0001), std::string("0.0001"));
  CHECK_EQ(floatRepr(0.00001), std::string("1e-05"));
  CHECK_EQ(floatRepr(-2.5e-300), std::string("-2.5e-300"));
  CHECK_EQ(floatRepr(123456.789), std::string("123456.789"));
  CHECK_EQ(floatRepr(-0.0), std::string("-0.0"));
  CHECK_EQ(floatRepr(NAN), std::string("NaN"));
  CHECK_EQ(floatRepr(-INFINITY), std::string("-Infinity"));
  CHECK_EQ(j(Value(Map{{Value("k"), Value(List{Value(), Value(true), Value(2.0)})}})),
           std::string("{\"k\":[null,true,2.0]}"));
  CHECK_EQ(j(Value(Map{{Value(1), Value("x")}})), std::string("[[1,\"x\"]]"));
  CHECK_EQ(j(Value::pair("a\"\\\n\x01", Bytes{"hi!"})), std::string("[\"a\\\"\\\\\\n\\u0001\",\"aGkh\"]"));
  CHECK_EQ(j(Value("h\xC3\xA9")), std::string("\"h\xC3\xA9\""));
}

static void text() {
  CHECK_EQ(utf8Repaired("ab", 2), std::string("ab"));
  CHECK_EQ(utf8Repaired("a\xFF"
                        "b",
                        3),
           std::string("a\xEF\xBF\xBD"
                       "b"));
  CHECK_EQ(utf8Repaired("\xE2\x82", 2), std::string("\xEF\xBF\xBD"));  // truncated: one U+FFFD
  CHECK_EQ(utf8Repaired("\xED\xA0\x80", 3), std::string("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
  std::string path = tmpPath("text.txt");
  {
    std::ofstream f(path, std::ios::binary);
    f << "one\r\ntwo\n\nthree\nfour";
  }
  std::string content = readAll(path);
  // every way of cutting the file into 1..4 splits emits each line once, in order
  for (size_t cut = 1; cut <= content.size(); cut++) {
    std::vector<std::string> lines;
    for (size_t off = 0; off < content.size(); off += cut)
      readTextSplit(path, int64_t(off), int64_t(cut), [&](std::string&& l) {
        lines.push_back(l);
        return true;
      });
    CHECK(lines == (std::vector<std::string>{"one", "two", "", "three", "four"}));
  }
  unlink(path.c_str());
}

/** Decodes fixture files given on the command line; a file named *.expected.json next to a
    fixture, if present, must equal the JSON lines of its records. */
static void fixtures(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string path = argv[i];
    std::vector<Value> records = readPartition(path);
    std::string json;
    for (const Value& v : records) {
      appendJson(v, json);
      json += '\n';
      CHECK(decode(encode(v)) == v);
    }
    std::string exp = path.substr(0, path.rfind('.')) + ".expected.json";
    std::ifstream f(exp);
    if (f) {
      std::string want((std::istreambuf_iterator<char>(f)), {});
      CHECK_EQ(json, want);
    }
    // re-encoding gives the same bytes (the C++ and Python encoders agree)
    std::string again = tmpPath("again.bin");
    writePartition(again, records);
    CHECK(readAll(again) == readAll(path));
    unlink(again.c_str());
    std::printf("fixture %s: %zu records ok\n", path.c_str(), records.size());
  }
}

static void conversions() {
  std::pair<std::string, int64_t> p{"w", 3};
  Value v = toValue(p);
  CHECK(v == Value::pair("w", 3));
  CHECK((fromValue<std::pair<std::string, int64_t>>(v) == p));
  std::vector<double> xs{1.5, 2.0};
  CHECK(toValue(xs) == Value(List{Value(1.5), Value(2.0)}));
  CHECK(fromValue<std::vector<double>>(Value(List{Value(1), Value(2.5)})) == (std::vector<double>{1.0, 2.5}));
  std::map<std::string, std::vector<int64_t>> m{{"a", {1, 2}}, {"b", {}}};
  CHECK((fromValue<std::map<std::string, std::vector<int64_t>>>(toValue(m)) == m));
  CHECK(!fromValue<std::optional<int64_t>>(Value()).has_value());
  CHECK(fromValue<std::optional<int64_t>>(Value(4)) == std::optional<int64_t>(4));
  CHECK(toValue(Bytes{"x"}) == Value(Bytes{"x"}));
  CHECK_THROWS(fromValue<std::string>(Value(1)));
  CHECK_THROWS((fromValue<std::pair<int64_t, int64_t>>(Value(List{Value(1), Value(2)}))));
  CHECK(Value("").truthy() == false && Value(List{Value()}).truthy() && !Value(0.0).truthy());
}

int main(int argc, char** argv) {
  workedExample();
  conversions();
  roundTrips();
  ordering();
  json();
  text();
  fixtures(argc, argv);
  return checkSummary("test-codec");
}
