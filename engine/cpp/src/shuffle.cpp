#include "shuffle.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "codec.hpp"
#include "order.hpp"

namespace spindle {

namespace {

/** Output files of one shuffle task: spill runs in scratch dirs, final runs under path_prefix
    (one dir for all runs of the task when it is `@work/...`). */
class BucketFiles {
 public:
  BucketFiles(const rpc::Sink& s, TaskEnv& env) : prefix_(env.ex.work.output(s.path_prefix)), env_(env) {}

  /** Writes each non-empty bucket as one run and clears it. */
  void write(std::vector<std::string>& bufs, std::vector<uint64_t>& counts, bool final, uint8_t flags = 0) {
    for (size_t b = 0; b < bufs.size(); b++) {
      if (!counts[b]) continue;
      std::string path = final ? prefix_ + "-" + std::to_string(b) + "-" + std::to_string(run_) + ".bin"
                               : env_.spillPath();
      uint64_t bytes = writeEncodedPartition(path, bufs[b], counts[b], flags);
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

  /** The path of bucket b's next run (a spill path unless final). */
  std::string pathFor(size_t b, bool final) {
    return final ? prefix_ + "-" + std::to_string(b) + "-" + std::to_string(run_) + ".bin" : env_.spillPath();
  }
  /** Records a run written to `path` by the caller. */
  void added(size_t b, const std::string& path, uint64_t bytes, bool final) {
    if (!final) {
      env_.spillFiles++;
      env_.spillBytes += int64_t(bytes);
    }
    files_[int32_t(b)].push_back(path);
  }
  void endRound() { run_++; }

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
      : n_(bucketCount(s)), out_(s, env), env_(env), combine_(combine), bufs_(size_t(n_)),
        counts_(size_t(n_)) {
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
        else it->second = std::move(v.second());
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

/** Range partitioning: per bucket, (sortkey, record) pairs written as sorted runs — or, while
    every key equals its record (sortBy(identity), sort()), the bare records as SELF_KEYED runs.
    Records (and keys) are encoded on arrival into one buffer per bucket, with an inline
    8-byte prefix of each key; a run is an index sorted by prefix (the encoded strings compared
    only on prefix ties; keys of other kinds are decoded for sorting), whose slices are
    streamed to the run file as they are. */
class RangeSink : public Sink {
 public:
  RangeSink(const rpc::Sink& s, TaskEnv& env)
      : n_(bucketCount(s)), out_(s, env), env_(env), key_(s, env, rpc::KeyMode::WHOLE),
        ascending_(!(s.__isset.ascending && !s.ascending)), buckets_(size_t(n_)) {
    if (s.__isset.bounds && !s.bounds.empty()) bounds_ = std::move(decode(s.bounds).asList());
    stringBounds_ = !bounds_.empty();
    for (const Value& x : bounds_)
      if (!x.isString()) stringBounds_ = false;
    if (stringBounds_)
      for (const Value& x : bounds_) boundPrefix_.push_back(stringPrefix(x.asString()));
  }
  bool push(Value&& v) override {
    if (key_.mode() == rpc::KeyMode::WHOLE) {  // the record is its key: no copy
      Bucket& bk = buckets_[bucketOf(v)];
      buffered_ += bk.addKey(v, nullptr) + bk.addRecord(v);
    } else {
      Value k = key_(v);
      if (selfKeyed_ && !(k == v)) pairsFromNowOn();  // structural: never throws, 1 != 1.0
      Bucket& bk = buckets_[bucketOf(k)];
      buffered_ += bk.addKey(k, selfKeyed_ ? nullptr : &bk.keyBuf) + bk.addRecord(v);
    }
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
  using T = Value::Type;
  enum Kind : uint8_t { EMPTY, STRINGS, INTS, OTHER };  // of the keys of a bucket
  struct Bucket {
    std::string recBuf, keyBuf;                    // encoded records; encoded keys unless self-keyed
    std::vector<uint64_t> recOff, keyOff, prefix;  // record i = recBuf[recOff[i], recOff[i+1])
    Kind kind = EMPTY;
    /** Adds the next key (encoded into `into` unless null); returns the bytes it takes. */
    size_t addKey(const Value& k, std::string* into) {
      Kind kk = k.isString() ? STRINGS : k.isInt() ? INTS : OTHER;
      if (kind == EMPTY) kind = kk;
      else if (kind != kk) kind = OTHER;
      prefix.push_back(kk == STRINGS ? stringPrefix(k.asString()) : kk == INTS ? intPrefix(k.asInt()) : 0);
      if (!into) return 8;
      size_t before = into->size();
      keyOff.push_back(before);
      encode(k, *into);
      return into->size() - before + 16;
    }
    /** Adds the next record; returns the bytes it takes. */
    size_t addRecord(const Value& v) {
      size_t before = recBuf.size();
      recOff.push_back(before);
      encode(v, recBuf);
      return recBuf.size() - before + 8;
    }
    size_t size() const { return recOff.size(); }
    /** Encoded key i (the record when self-keyed). */
    std::string_view key(size_t i, bool self) const {
      const std::string& buf = self ? recBuf : keyBuf;
      const std::vector<uint64_t>& off = self ? recOff : keyOff;
      uint64_t end = i + 1 < off.size() ? off[i + 1] : buf.size();
      return std::string_view(buf.data() + off[i], end - off[i]);
    }
    std::string_view record(size_t i) const {
      uint64_t end = i + 1 < recOff.size() ? recOff[i + 1] : recBuf.size();
      return std::string_view(recBuf.data() + recOff[i], end - recOff[i]);
    }
    void clear() {
      std::string().swap(recBuf);
      std::string().swap(keyBuf);
      std::vector<uint64_t>().swap(recOff);
      std::vector<uint64_t>().swap(keyOff);
      std::vector<uint64_t>().swap(prefix);
      kind = EMPTY;
    }
  };
  void pairsFromNowOn() {
    selfKeyed_ = false;
    for (Bucket& bk : buckets_) {
      bk.keyBuf = bk.recBuf;
      bk.keyOff = bk.recOff;
      buffered_ += bk.keyBuf.size() + 8 * bk.keyOff.size();
    }
  }
  size_t bucketOf(const Value& k) const {
    size_t b;
    if (stringBounds_ && k.isString()) {  // prefixes first, the strings on ties
      const std::string& s = k.asString();
      uint64_t p = stringPrefix(s);
      size_t lo = 0, hi = bounds_.size();
      while (lo < hi) {  // the first bound not below k
        size_t mid = (lo + hi) / 2;
        bool below = boundPrefix_[mid] != p ? boundPrefix_[mid] < p : bounds_[mid].asString().compare(s) < 0;
        if (below) lo = mid + 1;
        else hi = mid;
      }
      b = lo;
    } else {
      b = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), k, ValueLess()) - bounds_.begin());
    }
    b = std::min(b, size_t(n_) - 1);
    return ascending_ ? b : size_t(n_) - 1 - b;
  }
  /** Positions of bucket `bk` in key order (stable). */
  std::vector<uint32_t> order(const Bucket& bk, bool self) const {
    size_t n = bk.size();
    if (n > UINT32_MAX) throw badData("too many records in one sorted run");
    if (bk.kind == OTHER) {  // any kinds: decode the keys, compare as values
      std::vector<Value> keys;
      keys.reserve(n);
      for (size_t i = 0; i < n; i++) keys.push_back(decode(bk.key(i, self)));
      return sortedOrder(keys, ascending_);
    }
    struct E {
      uint64_t prefix;
      uint32_t i;
    };
    std::vector<E> e(n);
    for (size_t i = 0; i < n; i++) e[i] = E{bk.prefix[i], uint32_t(i)};
    auto tie = [&](uint32_t a, uint32_t b) -> int {  // strings with equal prefixes
      if (bk.kind != STRINGS) return 0;
      std::string_view x = bk.key(a, self).substr(5), y = bk.key(b, self).substr(5);
      int c = x.compare(y);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    };
    if (ascending_)
      std::sort(e.begin(), e.end(), [&](const E& a, const E& b) {
        if (a.prefix != b.prefix) return a.prefix < b.prefix;
        int c = tie(a.i, b.i);
        return c != 0 ? c < 0 : a.i < b.i;
      });
    else
      std::sort(e.begin(), e.end(), [&](const E& a, const E& b) {
        if (a.prefix != b.prefix) return a.prefix > b.prefix;
        int c = tie(a.i, b.i);
        return c != 0 ? c > 0 : a.i < b.i;
      });
    std::vector<uint32_t> out(n);
    for (size_t i = 0; i < n; i++) out[i] = e[i].i;
    return out;
  }
  void writeRuns(bool final) {
    const bool self = selfKeyed_;
    for (size_t b = 0; b < buckets_.size(); b++) {
      Bucket& bk = buckets_[b];
      if (bk.size() == 0) continue;
      std::vector<uint32_t> ord = order(bk, self);
      std::string path = out_.pathFor(b, final);
      PartitionWriter w(path, self ? kSelfKeyed : 0);
      for (uint32_t i : ord) {
        std::string_view r = bk.record(i);
        if (self) w.writeRaw(r.data(), r.size());
        else {
          std::string_view k = bk.key(i, false);
          w.writeRawPair(k.data(), k.size(), r.data(), r.size());
        }
      }
      out_.added(b, path, w.close(), final);
      bk.clear();
    }
    out_.endRound();
  }
  int32_t n_;
  BucketFiles out_;
  TaskEnv& env_;
  KeyOf key_;
  bool ascending_;
  bool selfKeyed_ = true;
  List bounds_;
  bool stringBounds_ = false;
  std::vector<uint64_t> boundPrefix_;
  std::vector<Bucket> buckets_;
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
