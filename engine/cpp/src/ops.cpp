// Narrow operations (OpKind), fused into one pass as push stages.
#include "task.hpp"

namespace spindle {

namespace {

class OpStage : public Stage {
 public:
  OpStage(Stage* next, LoadedFunction* fn, Context& ctx) : next_(next), fn_(fn), ctx_(ctx) {}
  void finish() override { next_->finish(); }

 protected:
  Stage* next_;
  LoadedFunction* fn_;
  Context& ctx_;
};

class MapStage : public OpStage {
 public:
  using OpStage::OpStage;
  bool push(Value&& v) override {
    auto* f = fn_->as<abi::Unary>();
    return next_->push(guarded(fn_, [&] { return f->apply(std::move(v), ctx_); }));
  }
};

class FlatMapStage : public OpStage {
 public:
  using OpStage::OpStage;
  bool push(Value&& v) override {
    auto* f = fn_->as<abi::Flat>();
    out_.clear();
    guarded(fn_, [&] { f->apply(std::move(v), ctx_, out_); });
    for (Value& x : out_)
      if (!next_->push(std::move(x))) return false;
    return true;
  }

 private:
  std::vector<Value> out_;
};

class FilterStage : public OpStage {
 public:
  using OpStage::OpStage;
  bool push(Value&& v) override {
    bool keep;
    if (fn_->kind() == abi::PREDICATE) {
      auto* f = fn_->as<abi::Predicate>();
      keep = guarded(fn_, [&] { return f->apply(v, ctx_); });
    } else {
      auto* f = fn_->as<abi::Unary>();
      Value copy = v;
      keep = guarded(fn_, [&] { return f->apply(std::move(copy), ctx_).truthy(); });
    }
    return keep ? next_->push(std::move(v)) : true;
  }
};

class KeyByStage : public OpStage {
 public:
  using OpStage::OpStage;
  bool push(Value&& v) override {
    auto* f = fn_->as<abi::Unary>();
    Value copy = v;
    Value k = guarded(fn_, [&] { return f->apply(std::move(copy), ctx_); });
    return next_->push(Value::pair(std::move(k), std::move(v)));
  }
};

class MapValuesStage : public OpStage {
 public:
  using OpStage::OpStage;
  bool push(Value&& v) override {
    requirePair(v, "mapValues");
    auto* f = fn_->as<abi::Unary>();
    v.second() = guarded(fn_, [&] { return f->apply(std::move(v.second()), ctx_); });
    return next_->push(std::move(v));
  }
};

class PairPartStage : public OpStage {
 public:
  PairPartStage(Stage* next, bool first, Context& ctx) : OpStage(next, nullptr, ctx), first_(first) {}
  bool push(Value&& v) override {
    requirePair(v, first_ ? "keys" : "values");
    return next_->push(std::move(first_ ? v.first() : v.second()));
  }

 private:
  bool first_;
};

class MapPartitionsStage : public OpStage {
 public:
  using OpStage::OpStage;
  bool push(Value&& v) override {
    in_.push_back(std::move(v));
    return true;
  }
  void finish() override {
    auto* f = fn_->as<abi::Partition>();
    std::vector<Value> out;
    guarded(fn_, [&] { f->apply(std::move(in_), ctx_, out); });
    in_.clear();
    for (Value& x : out)
      if (!next_->push(std::move(x))) break;
    next_->finish();
  }

 private:
  std::vector<Value> in_;
};

}  // namespace

std::vector<std::unique_ptr<Stage>> buildOps(const std::vector<rpc::Op>& ops, TaskEnv& env, Stage* next) {
  std::vector<std::unique_ptr<Stage>> stages;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const rpc::Op& op = *it;
    auto fn = [&](unsigned accepted, const char* use) {
      if (!op.__isset.fn) throw badData(std::string(use) + " needs a function");
      return env.function(op.fn, accepted, use);
    };
    std::unique_ptr<Stage> s;
    switch (op.kind) {
      case rpc::OpKind::MAP: s.reset(new MapStage(next, fn(bit(abi::UNARY), "map"), env.ctx)); break;
      case rpc::OpKind::FLAT_MAP:
        s.reset(new FlatMapStage(next, fn(bit(abi::FLAT), "flatMap"), env.ctx));
        break;
      case rpc::OpKind::FILTER:
        s.reset(new FilterStage(next, fn(bit(abi::PREDICATE) | bit(abi::UNARY), "filter"), env.ctx));
        break;
      case rpc::OpKind::KEY_BY: s.reset(new KeyByStage(next, fn(bit(abi::UNARY), "keyBy"), env.ctx)); break;
      case rpc::OpKind::KEYS: s.reset(new PairPartStage(next, true, env.ctx)); break;
      case rpc::OpKind::VALUES: s.reset(new PairPartStage(next, false, env.ctx)); break;
      case rpc::OpKind::MAP_PARTITIONS:
        s.reset(new MapPartitionsStage(next, fn(bit(abi::PARTITION), "mapPartitions"), env.ctx));
        break;
      case rpc::OpKind::MAP_VALUES:
        s.reset(new MapValuesStage(next, fn(bit(abi::UNARY), "mapValues"), env.ctx));
        break;
      default: throw badData("unknown op kind " + std::to_string(int(op.kind)));
    }
    next = s.get();
    stages.push_back(std::move(s));
  }
  return stages;
}

}  // namespace spindle
