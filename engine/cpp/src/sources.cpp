// Where a task's records come from: partition files, text splits, the cache, shuffle merges.
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "codec.hpp"
#include "order.hpp"
#include "task.hpp"
#include "text.hpp"

namespace spindle {

namespace {

/** Pushes every record of `paths`; false if the consumer stopped. */
bool pushFiles(const std::vector<std::string>& paths, const std::function<bool(Value&&)>& push) {
  Value v;
  for (const std::string& p : paths) {
    PartitionReader r(p);
    while (r.next(v))
      if (!push(std::move(v))) return false;
  }
  return true;
}

/** Keys in first-seen order with one value each (MERGE_VALUES, GROUP). */
class OrderedTable {
 public:
  /** The slot for `key` and whether it is new. */
  std::pair<Value*, bool> slot(Value&& key) {
    auto [it, fresh] = map_.try_emplace(std::move(key));
    if (fresh) order_.push_back(&*it);
    return {&it->second, fresh};
  }
  /** Pushes (key, value) pairs in first-seen order. */
  void drain(Stage* head) {
    for (auto* e : order_)
      if (!head->push(Value::pair(e->first, std::move(e->second)))) break;
    order_.clear();
    map_.clear();
  }

 private:
  std::unordered_map<Value, Value, ValueHash, ValueEq> map_;
  std::vector<std::pair<const Value, Value>*> order_;
};

void mergeValues(const rpc::Source& src, TaskEnv& env, Stage* head) {
  LoadedFunction* lf = env.function(src.fn, bit(abi::BINARY), "merging values (reduceByKey)");
  auto* f = lf->as<abi::Binary>();
  OrderedTable table;
  pushFiles(src.paths, [&](Value&& r) {
    requirePair(r, "reduceByKey");
    auto [slot, fresh] = table.slot(std::move(r.first()));
    if (fresh) *slot = std::move(r.second());
    else *slot = guarded(lf, [&] { return f->apply(std::move(*slot), std::move(r.second()), env.ctx); });
    return true;
  });
  table.drain(head);
}

void group(const rpc::Source& src, Stage* head) {
  OrderedTable table;
  pushFiles(src.paths, [&](Value&& r) {
    requirePair(r, "groupByKey");
    auto [slot, fresh] = table.slot(std::move(r.first()));
    if (fresh) *slot = Value(List());
    slot->asList().push_back(std::move(r.second()));
    return true;
  });
  table.drain(head);
}

void distinct(const rpc::Source& src, Stage* head) {
  std::unordered_set<Value, ValueHash, ValueEq> seen;
  pushFiles(src.paths, [&](Value&& r) {
    if (seen.count(r)) return true;
    seen.insert(r);
    return head->push(std::move(r));
  });
}

void join(const rpc::Source& src, Stage* head) {
  std::unordered_map<Value, std::vector<Value>, ValueHash, ValueEq> right;
  pushFiles(src.right_paths, [&](Value&& r) {
    requirePair(r, "join");
    right[std::move(r.first())].push_back(std::move(r.second()));
    return true;
  });
  pushFiles(src.paths, [&](Value&& r) {
    requirePair(r, "join");
    auto it = right.find(r.first());
    if (it == right.end()) return true;
    for (const Value& w : it->second)
      if (!head->push(Value::pair(r.first(), Value::pair(r.second(), w)))) return false;
    return true;
  });
}

/** k-way merge of sorted runs of (sortkey, record) pairs, or of bare records that are their
    own keys (SELF_KEYED runs), also mixed; ties go to the earlier run. The runs' heads stay
    encoded (string keys compared by an inline prefix, then bytewise); only the record that
    comes next is decoded. */
void sortedRuns(const rpc::Source& src, Stage* head) {
  bool ascending = !(src.__isset.ascending && !src.ascending);
  struct Run {
    std::unique_ptr<PartitionReader> reader;
    bool self = false;
    std::string_view key, rec;  // encodings of the head's sort key and record
    bool str = false;           // the key is a string: compare prefix, then key.substr(5)
    uint64_t prefix = 0;
    Value keyValue;  // the decoded key unless it is a string
    bool next() {
      std::string_view r;
      if (!reader->nextRaw(r)) return false;
      if (self) key = rec = r;
      else {
        if (uint8_t(r[0]) != 7) requirePair(decode(r), "sorted run");
        const char* p = r.data() + 1;
        const char* end = r.data() + r.size();
        skipValue(p, end);
        key = std::string_view(r.data() + 1, size_t(p - r.data() - 1));
        rec = std::string_view(p, size_t(end - p));
      }
      str = uint8_t(key[0]) == 5;
      if (str) prefix = stringPrefix(key.substr(5));
      else keyValue = decode(key);
      return true;
    }
  };
  std::vector<Run> runs;
  for (const std::string& p : src.paths) {
    Run r;
    r.reader = std::make_unique<PartitionReader>(p);
    r.self = r.reader->flags() & kSelfKeyed;
    if (r.next()) runs.push_back(std::move(r));
  }
  auto compare = [](const Run& a, const Run& b) -> int {
    if (a.str && b.str) {
      if (a.prefix != b.prefix) return a.prefix < b.prefix ? -1 : 1;
      int c = a.key.substr(5).compare(b.key.substr(5));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (!a.str && !b.str) return compareValues(a.keyValue, b.keyValue);
    return compareValues(a.str ? decode(a.key) : a.keyValue, b.str ? decode(b.key) : b.keyValue);
  };
  // A binary heap of run indexes; the front is the run whose head comes first.
  auto before = [&](uint32_t a, uint32_t b) {
    int c = compare(runs[a], runs[b]);
    if (!ascending) c = -c;
    return c != 0 ? c < 0 : a < b;
  };
  std::vector<uint32_t> heap;
  auto siftDown = [&](size_t i) {
    size_t n = heap.size();
    for (;;) {
      size_t l = 2 * i + 1, best = i;
      if (l < n && before(heap[l], heap[best])) best = l;
      if (l + 1 < n && before(heap[l + 1], heap[best])) best = l + 1;
      if (best == i) return;
      std::swap(heap[i], heap[best]);
      i = best;
    }
  };
  for (size_t i = 0; i < runs.size(); i++) heap.push_back(uint32_t(i));
  for (size_t i = heap.size() / 2; i-- > 0;) siftDown(i);
  while (!heap.empty()) {
    Run& r = runs[heap[0]];
    if (!head->push(decode(r.rec))) return;
    if (!r.next()) {
      heap[0] = heap.back();
      heap.pop_back();
    }
    if (!heap.empty()) siftDown(0);
  }
}

}  // namespace

/** `src` with every input a local path: remote ones fetched (env.inputs deletes them). */
static rpc::Source localized(const rpc::Source& remote, TaskEnv& env) {
  rpc::Source src = remote;
  if (src.__isset.paths) src.paths = env.inputs.local(src.paths);
  if (src.__isset.right_paths) src.right_paths = env.inputs.local(src.right_paths);
  if (src.__isset.text_path) src.text_path = env.inputs.localSplit(src.text_path, src.offset, src.length);
  return src;
}

void runSource(const rpc::Source& remote, TaskEnv& env, Stage* head) {
  const rpc::Source src = localized(remote, env);
  switch (src.kind) {
    case rpc::SourceKind::FILES:
      pushFiles(src.paths, [&](Value&& v) { return head->push(std::move(v)); });
      break;
    case rpc::SourceKind::TEXT:
      readTextSplit(src.text_path, src.offset, src.length,
                    [&](std::string&& line) { return head->push(Value(std::move(line))); });
      break;
    case rpc::SourceKind::CACHED: {
      auto part = env.ex.cache.get(src.cache_key);
      if (!part) throw TaskFailure("CACHE_MISS", "partition " + src.cache_key + " is not cached here");
      part->forEach([&](Value&& v) { return head->push(std::move(v)); });
      break;
    }
    case rpc::SourceKind::SHUFFLE: {
      auto merge = src.__isset.merge ? src.merge : rpc::MergeKind::CONCAT;
      switch (merge) {
        case rpc::MergeKind::CONCAT:
          pushFiles(src.paths, [&](Value&& v) { return head->push(std::move(v)); });
          break;
        case rpc::MergeKind::MERGE_VALUES: mergeValues(src, env, head); break;
        case rpc::MergeKind::GROUP: group(src, head); break;
        case rpc::MergeKind::DISTINCT: distinct(src, head); break;
        case rpc::MergeKind::JOIN: join(src, head); break;
        case rpc::MergeKind::SORTED_RUNS: sortedRuns(src, head); break;
        default: throw badData("unknown merge kind " + std::to_string(int(merge)));
      }
      break;
    }
    default: throw badData("unknown source kind " + std::to_string(int(src.kind)));
  }
  head->finish();
}

}  // namespace spindle
