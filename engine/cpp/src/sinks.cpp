// Where a task's records go: storage, counts, action results, text files. Shuffles: shuffle.cpp.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <queue>
#include <random>

#include "codec.hpp"
#include "order.hpp"
#include "shuffle.hpp"
#include "text.hpp"

namespace spindle {

namespace {

rpc::TaskResult withValue(int64_t records, const Value& v) {
  rpc::TaskResult r;
  r.records = records;
  r.__set_value(encode(v));
  return r;
}

/** STORE: to a file and/or the cache, as objects or (with `compression`) encoded bytes. */
class StoreSink : public Sink {
 public:
  StoreSink(const rpc::Sink& s, TaskEnv& env) : s_(s), env_(env), raw_(s.__isset.compression && hasKey()) {}
  bool push(Value&& v) override {
    if (raw_) encode(v, encoded_);
    else records_.push_back(std::move(v));
    count_++;
    return true;
  }
  rpc::TaskResult result() override {
    rpc::TaskResult r;
    r.records = int64_t(count_);
    if (s_.__isset.path && !s_.path.empty()) {
      std::string path = env_.ex.work.output(s_.path);
      if (raw_) writeEncodedPartition(path, encoded_, count_);
      else writePartition(path, records_);
      r.__set_files({path});
    }
    if (hasKey()) {
      auto p = raw_ ? CachedPartition::raw(std::move(encoded_), count_, s_.compression)
                    : CachedPartition::objects(std::move(records_));
      r.__set_stored_bytes(p->storedBytes());
      env_.ex.cache.put(s_.cache_key, std::move(p));
    }
    return r;
  }

 private:
  bool hasKey() const { return s_.__isset.cache_key && !s_.cache_key.empty(); }
  const rpc::Sink& s_;
  TaskEnv& env_;
  bool raw_;
  Partition records_;
  std::string encoded_;
  uint64_t count_ = 0;
};

class CountSink : public Sink {
 public:
  bool push(Value&&) override {
    n_++;
    return true;
  }
  rpc::TaskResult result() override {
    rpc::TaskResult r;
    r.records = n_;
    return r;
  }

 private:
  int64_t n_ = 0;
};

class SampleSink : public Sink {
 public:
  SampleSink(const rpc::Sink& s, TaskEnv& env)
      : key_(s, env, rpc::KeyMode::WHOLE), n_(std::max<int64_t>(0, s.n)),
        rng_(uint64_t(s.seed) * 1000003u + uint64_t(env.partition)) {}
  bool push(Value&& v) override {
    if (int64_t(sample_.size()) < n_) {
      sample_.push_back(key_(v));
    } else {
      uint64_t j = std::uniform_int_distribution<uint64_t>(0, uint64_t(seen_))(rng_);
      if (int64_t(j) < n_) sample_[j] = key_(v);
    }
    seen_++;
    return true;
  }
  rpc::TaskResult result() override { return withValue(seen_, Value(std::move(sample_))); }

 private:
  KeyOf key_;
  int64_t n_;
  std::mt19937_64 rng_;
  List sample_;
  int64_t seen_ = 0;
};

class FoldSink : public Sink {
 public:
  FoldSink(const rpc::Sink& s, TaskEnv& env, bool reduce) : env_(env), reduce_(reduce) {
    if (!s.__isset.fn) throw badData("reduce/fold needs a function");
    fn_ = env.function(s.fn, bit(abi::BINARY), reduce ? "reduce" : "fold");
    if (!reduce) {
      acc_ = decode(s.zero);
      has_ = true;
    }
  }
  bool push(Value&& v) override {
    if (!has_) {
      acc_ = std::move(v);
      has_ = true;
    } else {
      auto* f = fn_->as<abi::Binary>();
      acc_ = guarded(fn_, [&] { return f->apply(std::move(acc_), std::move(v), env_.ctx); });
    }
    return true;
  }
  rpc::TaskResult result() override {
    if (!reduce_) return withValue(1, acc_);
    if (!has_) return withValue(0, Value(List()));
    return withValue(1, Value(List{std::move(acc_)}));
  }

 private:
  TaskEnv& env_;
  bool reduce_;
  LoadedFunction* fn_;
  Value acc_;
  bool has_ = false;
};

class TakeSink : public Sink {
 public:
  explicit TakeSink(int64_t n) : n_(std::max<int64_t>(0, n)) {}
  bool push(Value&& v) override {
    if (int64_t(out_.size()) >= n_) return false;
    out_.push_back(std::move(v));
    return int64_t(out_.size()) < n_;
  }
  rpc::TaskResult result() override {
    int64_t n = int64_t(out_.size());
    return withValue(n, Value(std::move(out_)));
  }

 private:
  int64_t n_;
  List out_;
};

/** The n largest records by key, largest first; among equal keys the earlier record first. */
class TopSink : public Sink {
 public:
  TopSink(const rpc::Sink& s, TaskEnv& env)
      : key_(s, env, rpc::KeyMode::WHOLE), n_(size_t(std::max<int64_t>(0, s.n))) {}
  bool push(Value&& v) override {
    if (n_ == 0) return false;
    Entry e{key_(v), std::move(v), seq_++};
    if (heap_.size() < n_) {
      heap_.push_back(std::move(e));
      std::push_heap(heap_.begin(), heap_.end(), worse);
    } else if (worse(e, heap_.front())) {  // better than the worst kept
      std::pop_heap(heap_.begin(), heap_.end(), worse);
      heap_.back() = std::move(e);
      std::push_heap(heap_.begin(), heap_.end(), worse);
    }
    return true;
  }
  rpc::TaskResult result() override {
    std::sort(heap_.begin(), heap_.end(), worse);
    List out;
    for (Entry& e : heap_) out.push_back(std::move(e.record));
    int64_t n = int64_t(out.size());
    return withValue(n, Value(std::move(out)));
  }

 private:
  struct Entry {
    Value key, record;
    uint64_t seq;
  };
  // a "less than" making the heap's front the worst kept entry: a before b when a is better.
  static bool worse(const Entry& a, const Entry& b) {
    int c = compareValues(a.key, b.key);
    return c != 0 ? c > 0 : a.seq < b.seq;
  }
  KeyOf key_;
  size_t n_;
  std::vector<Entry> heap_;
  uint64_t seq_ = 0;
};

class SelectSink : public Sink {
 public:
  explicit SelectSink(const std::vector<int64_t>& idx) : idx_(idx) {}
  bool push(Value&& v) override {
    while (j_ < idx_.size() && idx_[j_] == i_) {
      out_.push_back(v);
      j_++;
    }
    i_++;
    return j_ < idx_.size();
  }
  rpc::TaskResult result() override {
    int64_t n = int64_t(out_.size());
    return withValue(n, Value(std::move(out_)));
  }

 private:
  const std::vector<int64_t>& idx_;
  size_t j_ = 0;
  int64_t i_ = 0;
  List out_;
};

class LinesSink : public Sink {
 public:
  LinesSink(const std::string& path, TaskEnv& env, bool json) : path_(env.ex.work.output(path)), json_(json) {
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) throw TaskFailure("INTERNAL", "cannot create " + path_ + ": " + std::strerror(errno));
  }
  ~LinesSink() override {
    if (f_) std::fclose(f_);
  }
  bool push(Value&& v) override {
    if (!json_ && v.isString()) buf_ += v.asString();
    else appendJson(v, buf_);
    buf_.push_back('\n');
    n_++;
    if (buf_.size() > (1u << 20)) flush();
    return true;
  }
  rpc::TaskResult result() override {
    flush();
    int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) throw TaskFailure("INTERNAL", "cannot write " + path_);
    rpc::TaskResult r;
    r.records = n_;
    r.__set_files({path_});
    return r;
  }

 private:
  void flush() {
    if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw TaskFailure("INTERNAL", "cannot write " + path_ + ": " + std::strerror(errno));
    buf_.clear();
  }
  std::string path_;
  bool json_;
  FILE* f_;
  std::string buf_;
  int64_t n_ = 0;
};

}  // namespace

std::unique_ptr<Sink> buildSink(const rpc::Sink& s, TaskEnv& env) {
  switch (s.kind) {
    case rpc::SinkKind::STORE: return std::make_unique<StoreSink>(s, env);
    case rpc::SinkKind::COUNT: return std::make_unique<CountSink>();
    case rpc::SinkKind::HASH_SHUFFLE: return makeHashShuffle(s, env);
    case rpc::SinkKind::RANGE_SHUFFLE: return makeRangeShuffle(s, env);
    case rpc::SinkKind::SAMPLE_KEYS: return std::make_unique<SampleSink>(s, env);
    case rpc::SinkKind::REDUCE: return std::make_unique<FoldSink>(s, env, true);
    case rpc::SinkKind::FOLD: return std::make_unique<FoldSink>(s, env, false);
    case rpc::SinkKind::TAKE: return std::make_unique<TakeSink>(s.n);
    case rpc::SinkKind::TOP: return std::make_unique<TopSink>(s, env);
    case rpc::SinkKind::SELECT: return std::make_unique<SelectSink>(s.indices);
    case rpc::SinkKind::TEXT_FILE: return std::make_unique<LinesSink>(s.path, env, false);
    case rpc::SinkKind::JSON_FILE: return std::make_unique<LinesSink>(s.path, env, true);
  }
  throw badData("unknown sink kind " + std::to_string(int(s.kind)));
}

}  // namespace spindle
