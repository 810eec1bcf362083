#include "shuffle.hpp"

#include <algorithm>
#include <unordered_map>

#include "codec.hpp"
#include "order.hpp"

namespace spindle {

namespace {

/** Output files of one shuffle task: spill runs in scratch dirs, final runs in shared memory. */
class BucketFiles {
 public:
  BucketFiles(const rpc::Sink& s, TaskEnv& env) : prefix_(s.path_prefix), env_(env) {}

  /** Writes each non-empty bucket as one run and clears it. */
  void write(std::vector<std::string>& bufs, std::vector<uint64_t>& counts, bool final) {
    for (size_t b = 0; b < bufs.size(); b++) {
      if (!counts[b]) continue;
      std::string path = final ? prefix_ + "-" + std::to_string(b) + "-" + std::to_string(run_) + ".bin"
                               : env_.spillPath();
      uint64_t bytes = writeEncodedPartition(path, bufs[b], counts[b]);
      if (!final) {
        env_.spillFiles++;
        env_.spillBytes += int64_t(bytes);
      }
      files_[int32_t(b)].push_back(path);
      std::string().swap(bufs[b]);
      counts[b] = 0;
    }
    run_++;
  }

  rpc::TaskResult result(int64_t records) {
    rpc::TaskResult r;
    r.records = records;
    r.__set_buckets(files_);
    return r;
  }

 private:
  std::string prefix_;
  TaskEnv& env_;
  std::map<int32_t, std::vector<std::string>> files_;
  int run_ = 0;
};

int32_t bucketCount(const rpc::Sink& s) {
  if (!s.__isset.buckets || s.buckets <= 0) throw badData("shuffle needs buckets > 0");
  if (!s.__isset.path_prefix || s.path_prefix.empty()) throw badData("shuffle needs path_prefix");
  return s.buckets;
}

/** No combining: records are encoded straight into their bucket's buffer. */
class PlainHashSink : public Sink {
 public:
  PlainHashSink(const rpc::Sink& s, TaskEnv& env)
      : n_(bucketCount(s)), out_(s, env), env_(env), bufs_(size_t(n_)), counts_(size_t(n_)),
        roundRobin_(s.__isset.key_mode && s.key_mode == rpc::KeyMode::ROUND_ROBIN) {
    if (!roundRobin_) key_ = std::make_unique<KeyOf>(s, env, rpc::KeyMode::FIRST);
  }
  bool push(Value&& v) override {
    size_t b = roundRobin_ ? size_t((int64_t(env_.partition) + records_) % n_)
                           : hashKey(key_->ref(v, scratch_)) % uint32_t(n_);
    size_t before = bufs_[b].size();
    encode(v, bufs_[b]);
    buffered_ += bufs_[b].size() - before;
    counts_[b]++;
    records_++;
    if (buffered_ > uint64_t(env_.memory)) {
      out_.write(bufs_, counts_, false);
      buffered_ = 0;
    }
    return true;
  }
  rpc::TaskResult result() override {
    out_.write(bufs_, counts_, true);
    return out_.result(records_);
  }

 private:
  int32_t n_;
  BucketFiles out_;
  TaskEnv& env_;
  std::vector<std::string> bufs_;
  std::vector<uint64_t> counts_;
  bool roundRobin_;
  Value scratch_;
  std::unique_ptr<KeyOf> key_;
  int64_t records_ = 0;
  uint64_t buffered_ = 0;
};

/** Map-side combining (MERGE_VALUES, AGGREGATE, DISTINCT) in a hash table, flushed by bucket. */
class CombinedHashSink : public Sink {
 public:
  CombinedHashSink(const rpc::Sink& s, TaskEnv& env, rpc::Combine::type combine)
      : n_(bucketCount(s)), out_(s, env), env_(env), combine_(combine),
        bufs_(size_t(n_)), counts_(size_t(n_)) {
    if (combine != rpc::Combine::DISTINCT) {
      if (!s.__isset.fn) throw badData("combining needs a function");
      fn_ = env.function(s.fn, bit(abi::BINARY),
                         combine == rpc::Combine::AGGREGATE ? "aggregateByKey" : "reduceByKey");
      if (combine == rpc::Combine::AGGREGATE) zero_ = s.zero;
    }
  }
  bool push(Value&& v) override {
    if (combine_ == rpc::Combine::DISTINCT) {
      auto [it, fresh] = acc_.try_emplace(std::move(v));
      if (fresh) order_.push_back(&*it);
    } else {
      requirePair(v, combine_ == rpc::Combine::AGGREGATE ? "aggregateByKey" : "reduceByKey");
      auto [it, fresh] = acc_.try_emplace(std::move(v.first()));
      auto* f = fn_->as<abi::Binary>();
      if (fresh) {
        order_.push_back(&*it);
        if (combine_ == rpc::Combine::AGGREGATE)
          it->second = guarded(fn_, [&] { return f->apply(decode(zero_), std::move(v.second()), env_.ctx); });
        else
          it->second = std::move(v.second());
      } else {
        it->second = guarded(fn_, [&] {
          return f->apply(std::move(it->second), std::move(v.second()), env_.ctx);
        });
      }
    }
    records_++;
    if ((records_ & 255) == 0) checkMemory();
    return true;
  }
  rpc::TaskResult result() override {
    encodeAll();
    out_.write(bufs_, counts_, true);
    return out_.result(records_);
  }

 private:
  void checkMemory() {
    if (entrySize_ == 0 || (records_ & 65535) == 0) {  // re-estimate from a sample now and then
      size_t n = 0, bytes = 0;
      for (size_t i = order_.size(); i-- > 0 && n < 32; n++)
        bytes += approxSize(order_[i]->first) + approxSize(order_[i]->second) + 64;
      entrySize_ = n ? bytes / n : 0;
    }
    if (acc_.size() * entrySize_ > uint64_t(env_.memory)) {
      encodeAll();
      out_.write(bufs_, counts_, false);
      entrySize_ = 0;
    }
  }
  void encodeAll() {
    bool keysOnly = combine_ == rpc::Combine::DISTINCT;
    for (auto* e : order_) {
      uint32_t b = hashKey(e->first) % uint32_t(n_);
      if (keysOnly) encode(e->first, bufs_[b]);
      else {
        bufs_[b].push_back(char(7));  // a (key, value) pair, encoded without building it
        encode(e->first, bufs_[b]);
        encode(e->second, bufs_[b]);
      }
      counts_[b]++;
    }
    order_.clear();
    acc_.clear();
  }
  int32_t n_;
  BucketFiles out_;
  TaskEnv& env_;
  rpc::Combine::type combine_;
  LoadedFunction* fn_ = nullptr;
  std::string zero_;
  std::unordered_map<Value, Value, ValueHash, ValueEq> acc_;
  std::vector<std::pair<const Value, Value>*> order_;
  std::vector<std::string> bufs_;
  std::vector<uint64_t> counts_;
  int64_t records_ = 0;
  size_t entrySize_ = 0;
};

/** Range partitioning: per bucket, (sortkey, record) pairs written as sorted runs. */
class RangeSink : public Sink {
 public:
  RangeSink(const rpc::Sink& s, TaskEnv& env)
      : n_(bucketCount(s)), out_(s, env), env_(env), key_(s, env, rpc::KeyMode::WHOLE),
        ascending_(!(s.__isset.ascending && !s.ascending)), lists_(size_t(n_)) {
    if (s.__isset.bounds && !s.bounds.empty()) bounds_ = std::move(decode(s.bounds).asList());
  }
  bool push(Value&& v) override {
    Value k = key_(v);
    size_t b = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), k, ValueLess()) - bounds_.begin());
    if (!ascending_) b = size_t(n_) - 1 - std::min(b, size_t(n_) - 1);
    else b = std::min(b, size_t(n_) - 1);
    buffered_ += approxSize(k) + approxSize(v) + 32;
    lists_[b].emplace_back(std::move(k), std::move(v));
    records_++;
    if (buffered_ > uint64_t(env_.memory)) {
      writeRuns(false);
      buffered_ = 0;
    }
    return true;
  }
  rpc::TaskResult result() override {
    writeRuns(true);
    return out_.result(records_);
  }

 private:
  void writeRuns(bool final) {
    std::vector<std::string> bufs(static_cast<size_t>(n_));
    std::vector<uint64_t> counts(static_cast<size_t>(n_));
    for (size_t b = 0; b < lists_.size(); b++) {
      auto& l = lists_[b];
      if (ascending_)
        std::stable_sort(l.begin(), l.end(), [](const auto& x, const auto& y) {
          return compareValues(x.first, y.first) < 0;
        });
      else
        std::stable_sort(l.begin(), l.end(), [](const auto& x, const auto& y) {
          return compareValues(x.first, y.first) > 0;
        });
      for (auto& kv : l) {
        bufs[b].push_back(char(7));
        encode(kv.first, bufs[b]);
        encode(kv.second, bufs[b]);
      }
      counts[b] = l.size();
      std::vector<std::pair<Value, Value>>().swap(l);
    }
    out_.write(bufs, counts, final);
  }
  int32_t n_;
  BucketFiles out_;
  TaskEnv& env_;
  KeyOf key_;
  bool ascending_;
  List bounds_;
  std::vector<std::vector<std::pair<Value, Value>>> lists_;
  int64_t records_ = 0;
  uint64_t buffered_ = 0;
};

}  // namespace

std::unique_ptr<Sink> makeHashShuffle(const rpc::Sink& s, TaskEnv& env) {
  auto combine = s.__isset.combine ? s.combine : rpc::Combine::NONE;
  if (combine == rpc::Combine::NONE) return std::make_unique<PlainHashSink>(s, env);
  return std::make_unique<CombinedHashSink>(s, env, combine);
}

std::unique_ptr<Sink> makeRangeShuffle(const rpc::Sink& s, TaskEnv& env) {
  return std::make_unique<RangeSink>(s, env);
}

}  // namespace spindle
