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

/** k-way merge of sorted runs of (sortkey, record) pairs; ties go to the earlier run. */
void sortedRuns(const rpc::Source& src, Stage* head) {
  bool ascending = !(src.__isset.ascending && !src.ascending);
  struct Run {
    std::unique_ptr<PartitionReader> reader;
    Value cur;
  };
  std::vector<Run> runs;
  for (const std::string& p : src.paths) {
    Run r{std::make_unique<PartitionReader>(p), Value()};
    if (r.reader->next(r.cur)) {
      requirePair(r.cur, "sorted run");
      runs.push_back(std::move(r));
    }
  }
  // The heap's top is the run whose head comes first.
  auto after = [&](size_t a, size_t b) {
    int c = compareValues(runs[a].cur.first(), runs[b].cur.first());
    if (!ascending) c = -c;
    return c != 0 ? c > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(after)> heap(after);
  for (size_t i = 0; i < runs.size(); i++) heap.push(i);
  while (!heap.empty()) {
    size_t i = heap.top();
    heap.pop();
    Run& r = runs[i];
    if (!head->push(std::move(r.cur.second()))) return;
    if (r.reader->next(r.cur)) {
      requirePair(r.cur, "sorted run");
      heap.push(i);
    }
  }
}

}  // namespace

void runSource(const rpc::Source& src, TaskEnv& env, Stage* head) {
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
      for (const Value& v : *part)
        if (!head->push(Value(v))) break;
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
