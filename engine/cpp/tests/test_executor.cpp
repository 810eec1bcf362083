// End-to-end test of spindle-cpp-executor: starts the binary, talks Thrift to it like the
// backend does, and checks every source, op and sink kind on real files.
// Usage: test-executor BUILD_DIR
#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "harness.hpp"
#include "order.hpp"

static void basics(Client& cl) {
  rpc::ExecutorInfo info;
  cl.c->hello(info, {{"tag", "T1"}});
  CHECK_EQ(info.language, std::string("cpp"));
  CHECK_EQ(info.id, 1);

  std::string in = g_tmp + "/ints.bin", out = g_tmp + "/out.bin";
  writePartition(in, ints(0, 100));
  auto addOne = fn("basic", "AddOne"), even = fn("basic", "Even");
  rpc::Sink store = sinkOf(rpc::SinkKind::STORE);
  store.__set_path(out);
  store.__set_cache_key("k1");
  rpc::TaskResult r;
  cl.c->run(r, task(files({in}), {op(rpc::OpKind::MAP, &addOne), op(rpc::OpKind::FILTER, &even)}, store));
  CHECK_EQ(r.records, 50);
  std::vector<Value> want;
  for (int64_t i = 0; i < 100; i++)
    if ((i + 1) % 2 == 0) want.push_back(Value((long long)(i + 1)));
  CHECK(readPartition(out) == want);

  rpc::Source cached;
  cached.kind = rpc::SourceKind::CACHED;
  cached.__set_cache_key("k1");
  cl.c->run(r, task(cached, {}, sinkOf(rpc::SinkKind::COUNT)));
  CHECK_EQ(r.records, 50);
  cl.c->uncache({"k1", "unknown"});
  CHECK_EQ(errorKind(cl, task(cached, {}, sinkOf(rpc::SinkKind::COUNT))), std::string("CACHE_MISS"));

  // reduce / fold / take / top / select / sample
  auto sum = fn("basic", "Sum");
  rpc::Sink red = sinkOf(rpc::SinkKind::REDUCE);
  red.__set_fn(sum);
  cl.c->run(r, task(files({in}), {}, red));
  CHECK(resultValue(r) == Value(List{Value(4950)}));
  std::string empty = g_tmp + "/empty.bin";
  writePartition(empty, {});
  cl.c->run(r, task(files({empty}), {}, red));
  CHECK(resultValue(r) == Value(List{}));
  rpc::Sink fold = sinkOf(rpc::SinkKind::FOLD);
  fold.__set_fn(sum);
  fold.__set_zero(encode(Value(0.5)));
  cl.c->run(r, task(files({in}), {}, fold));
  CHECK(resultValue(r) == Value(4950.5));
  rpc::Sink take = sinkOf(rpc::SinkKind::TAKE);
  take.__set_n(3);
  cl.c->run(r, task(files({in}), {op(rpc::OpKind::MAP, &addOne)}, take));
  CHECK(resultValue(r) == Value(List{Value(1), Value(2), Value(3)}));
  rpc::Sink top = sinkOf(rpc::SinkKind::TOP);
  top.__set_n(2);
  cl.c->run(r, task(files({in}), {}, top));
  CHECK(resultValue(r) == Value(List{Value(99), Value(98)}));
  rpc::Sink sel = sinkOf(rpc::SinkKind::SELECT);
  sel.__set_indices({0, 5, 5, 99});
  cl.c->run(r, task(files({in}), {}, sel));
  CHECK(resultValue(r) == Value(List{Value(0), Value(5), Value(5), Value(99)}));
  rpc::Sink sample = sinkOf(rpc::SinkKind::SAMPLE_KEYS);
  sample.__set_n(10);
  sample.__set_seed(7);
  cl.c->run(r, task(files({in}), {}, sample));
  CHECK_EQ(resultValue(r).asList().size(), size_t(10));
  CHECK_EQ(r.records, 100);

  // keyBy, keys, values, mapValues, mapPartitions, context properties
  std::string words = g_tmp + "/words.bin";
  writePartition(words, {Value("apple"), Value("\xC3\xA9t\xC3\xA9"), Value("avocado"), Value("")});
  auto first = fn("basic", "FirstChar"), count = fn("basic", "CountPartition"), tag = fn("basic", "Tag");
  rpc::Sink all = sinkOf(rpc::SinkKind::TAKE);
  all.__set_n(1000);
  cl.c->run(r, task(files({words}), {op(rpc::OpKind::KEY_BY, &first), op(rpc::OpKind::KEYS)}, all));
  CHECK(resultValue(r) == Value(List{Value("a"), Value("\xC3\xA9"), Value("a"), Value("")}));
  cl.c->run(r, task(files({words}), {op(rpc::OpKind::KEY_BY, &first), op(rpc::OpKind::VALUES)}, all));
  CHECK(resultValue(r) ==
        Value(List{Value("apple"), Value("\xC3\xA9t\xC3\xA9"), Value("avocado"), Value("")}));
  cl.c->run(r, task(files({words}),
                    {op(rpc::OpKind::KEY_BY, &first), op(rpc::OpKind::MAP_VALUES, &first),
                     op(rpc::OpKind::MAP_PARTITIONS, &count)},
                    all, 3));
  CHECK(resultValue(r) == Value(List{Value::pair(3, 4)}));
  cl.c->run(r, task(files({empty}), {op(rpc::OpKind::MAP_PARTITIONS, &count)}, all, 2));
  CHECK(resultValue(r) == Value(List{Value::pair(2, 0)}));
  cl.c->run(r, task(files({empty}), {op(rpc::OpKind::MAP, &tag)}, all));
  take.__set_n(1);
  cl.c->run(r, task(files({words}), {op(rpc::OpKind::MAP, &tag)}, take));
  CHECK(resultValue(r) == Value(List{Value::pair("T1", "apple")}));

  // text and JSON output
  std::string txt = g_tmp + "/out/sub/part-0.txt", js = g_tmp + "/out/part-0.json";
  std::string mixed = g_tmp + "/mixed.bin";
  writePartition(mixed, {Value("plain"), Value::pair("k", 1.0), Value(Map{{Value("a"), Value()}})});
  rpc::Sink tf = sinkOf(rpc::SinkKind::TEXT_FILE);
  tf.__set_path(txt);
  cl.c->run(r, task(files({mixed}), {}, tf));
  std::ifstream f1(txt);
  std::string got((std::istreambuf_iterator<char>(f1)), {});
  CHECK_EQ(got, std::string("plain\n[\"k\",1.0]\n{\"a\":null}\n"));
  rpc::Sink jf = sinkOf(rpc::SinkKind::JSON_FILE);
  jf.__set_path(js);
  cl.c->run(r, task(files({mixed}), {}, jf));
  std::ifstream f2(js);
  got.assign((std::istreambuf_iterator<char>(f2)), {});
  CHECK_EQ(got, std::string("\"plain\"\n[\"k\",1.0]\n{\"a\":null}\n"));
}

static void errors(Client& cl) {
  std::string in = g_tmp + "/ints.bin";
  rpc::Sink count = sinkOf(rpc::SinkKind::COUNT);
  std::string fnName;
  auto missingSym = fn("basic", "NoSuchThing");
  CHECK_EQ(errorKind(cl, task(files({in}), {op(rpc::OpKind::MAP, &missingSym)}, count), &fnName),
           std::string("FUNCTION_NOT_FOUND"));
  CHECK_EQ(fnName, missingSym.ref);
  auto missingLib = fn("nosuchlib", "X");
  CHECK_EQ(errorKind(cl, task(files({in}), {op(rpc::OpKind::MAP, &missingLib)}, count)),
           std::string("FUNCTION_NOT_FOUND"));
  auto wrongKind = fn("wordcount", "Join");
  CHECK_EQ(errorKind(cl, task(files({in}), {op(rpc::OpKind::MAP, &wrongKind)}, count)),
           std::string("FUNCTION_NOT_FOUND"));
  auto fail = fn("basic", "Fail");
  CHECK_EQ(errorKind(cl, task(files({in}), {op(rpc::OpKind::MAP, &fail)}, count), &fnName),
           std::string("FUNCTION_FAILED"));
  CHECK_EQ(fnName, fail.ref);
  auto split = fn("wordcount", "Split");  // ints are not strings
  CHECK_EQ(errorKind(cl, task(files({in}), {op(rpc::OpKind::FLAT_MAP, &split)}, count)),
           std::string("BAD_DATA"));
  CHECK_EQ(errorKind(cl, task(files({g_tmp + "/nothere.bin"}), {}, count)), std::string("BAD_DATA"));
  // still usable afterwards
  rpc::TaskResult r;
  cl.c->run(r, task(files({in}), {}, count));
  CHECK_EQ(r.records, 100);
}

/** Word count through a combined hash shuffle; returns counts; checks spills if expected. */
static std::map<std::string, int64_t> wordCount(Client& cl, const std::string& text, int splits,
                                                bool expectSpill, const std::string& tag) {
  struct stat st;
  stat(text.c_str(), &st);
  auto pairs = fn("wordcount", "SplitPairs"), join = fn("wordcount", "Join");
  const int buckets = 3;
  std::map<int32_t, std::vector<std::string>> byBucket;
  int64_t chunk = (st.st_size + splits - 1) / splits;
  int spills = 0;
  for (int p = 0; p < splits; p++) {
    rpc::Source src;
    src.kind = rpc::SourceKind::TEXT;
    src.__set_text_path(text);
    src.__set_offset(p * chunk);
    src.__set_length(chunk);
    rpc::Sink hs = sinkOf(rpc::SinkKind::HASH_SHUFFLE);
    hs.__set_buckets(buckets);
    hs.__set_path_prefix(g_tmp + "/wc-" + tag + "-" + std::to_string(p));
    hs.__set_combine(rpc::Combine::MERGE_VALUES);
    hs.__set_fn(join);
    hs.__set_key_mode(rpc::KeyMode::FIRST);
    rpc::TaskResult r;
    cl.c->run(r, task(src, {op(rpc::OpKind::FLAT_MAP, &pairs)}, hs, p));
    spills += r.spill_files;
    for (auto& [b, fs] : r.buckets)
      for (auto& f : fs) byBucket[b].push_back(f);
  }
  CHECK(expectSpill ? spills > 0 : spills == 0);
  std::map<std::string, int64_t> counts;
  for (auto& [b, fs] : byBucket) {
    rpc::Source src = shuffle(rpc::MergeKind::MERGE_VALUES, fs);
    src.__set_fn(join);
    rpc::Sink all = sinkOf(rpc::SinkKind::TAKE);
    all.__set_n(1 << 30);
    rpc::TaskResult r;
    cl.c->run(r, task(src, {}, all, b));
    Value got = resultValue(r);
    for (const Value& kv : got.asList()) {
      CHECK(hashKey(kv.first()) % buckets == uint32_t(b));
      CHECK(counts.emplace(kv.first().asString(), kv.second().asInt()).second);  // one per key
    }
  }
  return counts;
}

static void shuffles(Client& cl, Client& tiny) {
  std::string text = g_tmp + "/text.txt";
  std::map<std::string, int64_t> want;
  {
    std::ofstream f(text, std::ios::binary);
    std::mt19937 rng(3);
    for (int line = 0; line < 3000; line++) {
      int n = int(rng() % 12);
      for (int i = 0; i < n; i++) {
        std::string w = "w" + std::to_string(rng() % (i % 3 == 0 ? 5 : 2000));  // skewed keys
        if (rng() % 50 == 0) w += "\xC3\xA9";
        f << w << (i + 1 < n ? " " : "");
        want[w]++;
      }
      f << (line % 7 == 0 ? "\r\n" : "\n");
    }
  }
  CHECK(wordCount(cl, text, 4, false, "a") == want);
  CHECK(wordCount(tiny, text, 3, true, "b") == want);  // --memory 4000: spills

  // groupByKey, distinct, join, round-robin repartition
  std::string kv1 = g_tmp + "/kv1.bin", kv2 = g_tmp + "/kv2.bin";
  writePartition(kv1, {Value::pair("a", 1), Value::pair("b", 2), Value::pair("a", 3)});
  writePartition(kv2, {Value::pair("a", "x"), Value::pair("c", "y"), Value::pair("a", "z")});
  rpc::Sink all = sinkOf(rpc::SinkKind::TAKE);
  all.__set_n(1000);
  rpc::TaskResult r;
  cl.c->run(r, task(shuffle(rpc::MergeKind::GROUP, {kv1, kv1}), {}, all));
  CHECK(resultValue(r) == Value(List{Value::pair("a", List{Value(1), Value(3), Value(1), Value(3)}),
                                     Value::pair("b", List{Value(2), Value(2)})}));
  cl.c->run(r, task(shuffle(rpc::MergeKind::DISTINCT, {kv1, kv1}), {}, all));
  CHECK_EQ(resultValue(r).asList().size(), size_t(3));
  rpc::Source j = shuffle(rpc::MergeKind::JOIN, {kv1});
  j.__set_right_paths({kv2});
  cl.c->run(r, task(j, {}, all));
  CHECK(resultValue(r) ==
        Value(List{Value::pair("a", Value::pair(1, "x")), Value::pair("a", Value::pair(1, "z")),
                   Value::pair("a", Value::pair(3, "x")), Value::pair("a", Value::pair(3, "z"))}));
  rpc::Sink rr = sinkOf(rpc::SinkKind::HASH_SHUFFLE);
  rr.__set_buckets(2);
  rr.__set_key_mode(rpc::KeyMode::ROUND_ROBIN);
  rr.__set_path_prefix(g_tmp + "/rr");
  cl.c->run(r, task(files({kv1}), {}, rr, 1));
  CHECK(readPartition(r.buckets[1][0]) == (std::vector<Value>{Value::pair("a", 1), Value::pair("a", 3)}));
  CHECK(readPartition(r.buckets[0][0]) == (std::vector<Value>{Value::pair("b", 2)}));
  rpc::Sink dist = sinkOf(rpc::SinkKind::HASH_SHUFFLE);
  dist.__set_buckets(2);
  dist.__set_combine(rpc::Combine::DISTINCT);
  dist.__set_path_prefix(g_tmp + "/dist");
  cl.c->run(r, task(files({kv1, kv1}), {}, dist));
  size_t n = 0;
  for (auto& [b, fs] : r.buckets)
    for (auto& f : fs) n += readPartition(f).size();
  CHECK_EQ(n, size_t(3));
  rpc::Sink agg = sinkOf(rpc::SinkKind::HASH_SHUFFLE);
  agg.__set_buckets(1);
  agg.__set_combine(rpc::Combine::AGGREGATE);
  agg.__set_fn(fn("basic", "Sum"));
  agg.__set_zero(encode(Value(100)));
  agg.__set_path_prefix(g_tmp + "/agg");
  cl.c->run(r, task(files({kv1}), {}, agg));
  CHECK(readPartition(r.buckets[0][0]) == (std::vector<Value>{Value::pair("a", 104), Value::pair("b", 102)}));
}

static std::vector<Value> rangeSort(Client& cl, const std::vector<std::string>& parts,
                                    rpc::KeyMode::type mode, const rpc::Function* key, const List& bounds,
                                    bool ascending, const std::string& name, int* spills,
                                    std::vector<int>* flags);

static void sorting(Client& cl, bool spill, bool ascending) {
  std::mt19937_64 rng(ascending ? 11 : 12);
  std::vector<std::string> parts;
  std::vector<Value> all;
  for (int p = 0; p < 3; p++) {
    std::vector<Value> recs;
    for (int i = 0; i < 700; i++) recs.push_back(Value((long long)(rng() % 1000) - 500));
    if (p == 1) recs.clear();  // an empty partition
    parts.push_back(g_tmp + "/sort-in-" + std::to_string(p) + ".bin");
    writePartition(parts.back(), recs);
    all.insert(all.end(), recs.begin(), recs.end());
  }
  int spills = 0;
  std::vector<Value> got = rangeSort(cl, parts, rpc::KeyMode::WHOLE, nullptr, List{Value(-200), Value(150)},
                                     ascending, "sort-" + std::to_string(spill) + std::to_string(ascending),
                                     &spills, nullptr);
  CHECK(spill ? spills > 0 : spills == 0);
  std::stable_sort(all.begin(), all.end(), [&](const Value& a, const Value& b) {
    return ascending ? compareValues(a, b) < 0 : compareValues(a, b) > 0;
  });
  CHECK(got == all);
}

static int fileFlags(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return -1;
  unsigned char h[16];
  size_t n = std::fread(h, 1, 16, f);
  std::fclose(f);
  return n == 16 ? int(h[5]) : -1;
}

/** RANGE_SHUFFLE of `parts` (partition files) with `key`/`mode`, then SORTED_RUNS per bucket. */
static std::vector<Value> rangeSort(Client& cl, const std::vector<std::string>& parts,
                                    rpc::KeyMode::type mode, const rpc::Function* key, const List& bounds,
                                    bool ascending, const std::string& name, int* spills,
                                    std::vector<int>* flags) {
  int buckets = int(bounds.size()) + 1;
  std::map<int32_t, std::vector<std::string>> runs;
  for (size_t p = 0; p < parts.size(); p++) {
    rpc::Sink rs = sinkOf(rpc::SinkKind::RANGE_SHUFFLE);
    rs.__set_buckets(buckets);
    rs.__set_bounds(encode(Value(bounds)));
    rs.__set_ascending(ascending);
    rs.__set_key_mode(mode);
    if (key) rs.__set_fn(*key);
    rs.__set_path_prefix(g_tmp + "/" + name + "-" + std::to_string(p));
    rpc::TaskResult r;
    cl.c->run(r, task(files({parts[p]}), {}, rs, int(p)));
    if (spills) *spills += r.spill_files;
    for (auto& [b, fs] : r.buckets)
      for (auto& f : fs) {
        runs[b].push_back(f);
        if (flags) flags->push_back(fileFlags(f));
      }
  }
  std::vector<Value> got;
  for (int b = 0; b < buckets; b++) {
    rpc::Source src = shuffle(rpc::MergeKind::SORTED_RUNS, runs[b]);
    src.__set_ascending(ascending);
    rpc::Sink take = sinkOf(rpc::SinkKind::TAKE);
    take.__set_n(1 << 30);
    rpc::TaskResult r;
    cl.c->run(r, task(src, {}, take, b));
    Value part = resultValue(r);
    for (Value& v : part.asList()) got.push_back(v);
  }
  return got;
}

/** SELF_KEYED runs (WHOLE keys, or a key function returning the record), pair runs, both
    merged within one bucket; string keys sharing long prefixes; spills; mixed kinds. */
static void sortedRunKinds(Client& cl, Client& tiny) {
  std::mt19937_64 rng(21);
  const char* stems[] = {"",       "a", "ab", "abcdefgh", "abcdefghi", "abcdefgh\x01", "zz", "h\xC3\xA9llo",
                         "abcdefg"};
  std::vector<std::string> parts;
  std::vector<Value> all;
  for (int p = 0; p < 3; p++) {
    std::vector<Value> recs;
    for (int i = 0; i < 500; i++) {
      std::string s = stems[rng() % 9];
      int extra = int(rng() % 4);
      for (int j = 0; j < extra; j++) s.push_back(char('a' + rng() % 3));
      recs.push_back(Value(s));
    }
    parts.push_back(g_tmp + "/runs-in-" + std::to_string(p) + ".bin");
    writePartition(parts.back(), recs);
    all.insert(all.end(), recs.begin(), recs.end());
  }
  List bounds{Value("abcdefgh"), Value("abcdefgha"), Value("b")};
  rpc::Function identity = fn("basic", "Identity"), first = fn("basic", "FirstChar");
  for (bool ascending : {true, false}) {
    auto cmp = [&](const Value& a, const Value& b) {
      return ascending ? compareValues(a, b) < 0 : compareValues(a, b) > 0;
    };
    std::vector<Value> want = all;
    std::stable_sort(want.begin(), want.end(), cmp);
    for (int variant = 0; variant < 3; variant++) {  // WHOLE, FUNCTION identity, and spilling
      std::vector<int> flags;
      int spills = 0;
      auto mode = variant == 0 ? rpc::KeyMode::WHOLE : rpc::KeyMode::FUNCTION;
      std::vector<Value> got = rangeSort(variant == 2 ? tiny : cl, parts, mode, variant ? &identity : nullptr,
                                         bounds, ascending,
                                         "self" + std::to_string(variant) + std::to_string(ascending),
                                         &spills, &flags);
      CHECK(got == want);
      CHECK(!flags.empty());
      for (int f : flags) CHECK_EQ(f, 1);  // every run SELF_KEYED
      CHECK(variant == 2 ? spills > 0 : spills == 0);
    }
    // a key function of its own: pair runs, ties in input order
    std::vector<Value> want2 = all;
    std::stable_sort(want2.begin(), want2.end(), [&](const Value& a, const Value& b) {
      Value ka(a.asString().substr(0, a.asString().empty() ? 0 : 1)),
          kb(b.asString().substr(0, b.asString().empty() ? 0 : 1));
      return ascending ? compareValues(ka, kb) < 0 : compareValues(ka, kb) > 0;
    });
    std::vector<int> flags;
    List charBounds{Value("a"), Value("b")};
    std::vector<Value> got = rangeSort(cl, parts, rpc::KeyMode::FUNCTION, &first, charBounds, ascending,
                                       "pairs" + std::to_string(ascending), nullptr, &flags);
    CHECK(got == want2);
    for (int f : flags) CHECK_EQ(f, 0);
  }

  // One bucket holding a SELF_KEYED run and a pair run: ties go to the earlier file.
  std::string selfRun = g_tmp + "/mixed-self.bin", pairRun = g_tmp + "/mixed-pairs.bin";
  writeEncodedPartition(selfRun, encode(Value("a")) + encode(Value("b")) + encode(Value("d")), 3, kSelfKeyed);
  writePartition(pairRun, {Value::pair("b", "b-pair"), Value::pair("c", "c-pair"), Value::pair("d", "d-pair"),
                           Value::pair("e", "e-pair")});
  for (bool selfFirst : {true, false}) {
    rpc::Source src = shuffle(rpc::MergeKind::SORTED_RUNS, selfFirst
                                                               ? std::vector<std::string>{selfRun, pairRun}
                                                               : std::vector<std::string>{pairRun, selfRun});
    rpc::Sink take = sinkOf(rpc::SinkKind::TAKE);
    take.__set_n(100);
    rpc::TaskResult r;
    cl.c->run(r, task(src, {}, take));
    List want = selfFirst ? List{"a", "b", "b-pair", "c-pair", "d", "d-pair", "e-pair"}
                          : List{"a", "b-pair", "b", "c-pair", "d-pair", "d", "e-pair"};
    CHECK(resultValue(r) == Value(want));
  }

  // Keys that are not their records and of another kind (pairs of ints), and mixed int/float
  // keys compared as numbers (equal ones keep their input order).
  std::string nums = g_tmp + "/runs-nums.bin";
  writePartition(nums, {Value(3), Value(1.5), Value(2), Value(1.0), Value(1), Value(-4), Value(2.0)});
  rpc::Function tag = fn("basic", "Tag");
  std::vector<Value> got = rangeSort(cl, {nums}, rpc::KeyMode::FUNCTION, &tag, List{}, true, "tagged",
                                     nullptr, nullptr);
  CHECK(got ==
        (std::vector<Value>{Value(-4), Value(1.0), Value(1), Value(1.5), Value(2), Value(2.0), Value(3)}));
  got = rangeSort(cl, {nums}, rpc::KeyMode::WHOLE, nullptr, List{Value(2)}, false, "numsdesc", nullptr,
                  nullptr);
  CHECK(got ==
        (std::vector<Value>{Value(3), Value(2), Value(2.0), Value(1.5), Value(1.0), Value(1), Value(-4)}));
}

int main(int argc, char** argv) {
  g_build = argc > 1 ? argv[1] : "build";
  char tmpl[] = "/tmp/spindle-cpp-e2e-XXXXXX";
  g_tmp = mkdtemp(tmpl);
  mkdir((g_tmp + "/scratch1").c_str(), 0777);
  mkdir((g_tmp + "/scratch2").c_str(), 0777);
  signal(SIGPIPE, SIG_IGN);

  Proc ex = startExecutor(1, 1LL << 30, 2);
  Proc small = startExecutor(2, 4000, 1);
  {
    Client cl(ex.port), cl2(ex.port), tiny(small.port);
    rpc::ExecutorInfo info;
    cl2.c->hello(info, {});
    tiny.c->hello(info, {});
    CHECK_EQ(info.id, 2);
    basics(cl);
    errors(cl2);
    shuffles(cl, tiny);
    sorting(cl, false, true);
    sorting(cl, false, false);
    sorting(tiny, true, true);
    sorting(tiny, true, false);
    sortedRunKinds(cl, tiny);
    cl.c->shutdown();
  }
  int status = 0;
  CHECK(waitpid(ex.pid, &status, 0) == ex.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(small.stdinFd);  // EOF on stdin: the executor exits
  CHECK(waitpid(small.pid, &status, 0) == small.pid && WIFEXITED(status));
  close(ex.stdinFd);
  std::string rm = "rm -rf " + g_tmp;
  if (system(rm.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", g_tmp.c_str());
  return checkSummary("test-executor");
}
