#include "task.hpp"

#include <unistd.h>

#include <algorithm>

namespace spindle {

LoadedFunction* TaskEnv::function(const rpc::Function& fn, unsigned accepted, const char* use) {
  LoadedFunction* lf = fns.load(fn, accepted, use);
  if (std::find(used.begin(), used.end(), lf) == used.end()) used.push_back(lf);
  return lf;
}

std::string TaskEnv::spillPath() {
  uint64_t n = ex.spills++;
  const std::string& dir = ex.scratch.empty() ? std::string("/tmp") : ex.scratch[n % ex.scratch.size()];
  return dir + "/spill-cpp" + std::to_string(ex.id) + "-" + std::to_string(getpid()) + "-" +
         std::to_string(n) + ".bin";
}

void requirePair(const Value& v, const char* what) {
  if (!v.isPair())
    throw badData(std::string(what) + ": record is a " + Value::typeName(v.type()) +
                  ", not a (key, value) pair");
}

KeyOf::KeyOf(const rpc::Sink& sink, TaskEnv& env, rpc::KeyMode::type dflt)
    : mode_(sink.__isset.key_mode ? sink.key_mode : dflt), ctx_(&env.ctx) {
  if (mode_ == rpc::KeyMode::FUNCTION) {
    if (!sink.__isset.fn) throw badData("key mode FUNCTION needs a function");
    fn_ = env.function(sink.fn, bit(abi::UNARY), "a key function");
  } else if (mode_ != rpc::KeyMode::WHOLE && mode_ != rpc::KeyMode::FIRST) {
    throw badData("key mode " + std::to_string(int(mode_)) + " is not valid here");
  }
}

Value KeyOf::operator()(const Value& r) const {
  if (mode_ == rpc::KeyMode::WHOLE) return r;
  if (mode_ == rpc::KeyMode::FIRST) {
    requirePair(r, "key");
    return r.first();
  }
  Value copy = r;
  return guarded(fn_, [&] { return fn_->as<abi::Unary>()->apply(std::move(copy), *ctx_); });
}

const Value& KeyOf::ref(const Value& r, Value& scratch) const {
  if (mode_ == rpc::KeyMode::WHOLE) return r;
  if (mode_ == rpc::KeyMode::FIRST) {
    requirePair(r, "key");
    return r.first();
  }
  scratch = (*this)(r);
  return scratch;
}

static void hook(LoadedFunction* lf, Context& ctx, bool before) {
  try {
    if (before) lf->obj->before(ctx);
    else lf->obj->after(ctx);
  } catch (const std::exception& e) {
    throw TaskFailure("FUNCTION_FAILED", std::string(before ? "before(): " : "after(): ") + e.what(),
                      lf->ref);
  } catch (...) {
    throw TaskFailure("FUNCTION_FAILED",
                      std::string(before ? "before(): " : "after(): ") + "unknown C++ exception", lf->ref);
  }
}

rpc::TaskResult runTask(const rpc::Task& task, TaskEnv& env) {
  env.partition = task.partition;
  env.ctx.partition_ = task.partition;
  env.ctx.stage_ = task.stage;
  std::unique_ptr<Sink> sink = buildSink(task.sink, env);
  auto ops = buildOps(task.ops, env, sink.get());
  Stage* head = ops.empty() ? static_cast<Stage*>(sink.get()) : ops.back().get();
  if (task.source.__isset.fn && task.source.merge == rpc::MergeKind::MERGE_VALUES)
    env.function(task.source.fn, bit(abi::BINARY), "merging values");
  for (LoadedFunction* lf : env.used) hook(lf, env.ctx, true);
  runSource(task.source, env, head);
  rpc::TaskResult result = sink->result();
  for (LoadedFunction* lf : env.used) hook(lf, env.ctx, false);
  result.__set_spill_files(env.spillFiles);
  result.__set_spill_bytes(env.spillBytes);
  return result;
}

}  // namespace spindle
