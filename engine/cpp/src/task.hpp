// The runtime of one task: Source -> fused narrow ops -> Sink, as a chain of push stages.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache.hpp"
#include "errors.hpp"
#include "executor_types.h"
#include "fetch.hpp"
#include "functions.hpp"
#include "spindle/api.hpp"
#include "workdirs.hpp"

namespace spindle {

/** What the process gives every task. */
struct ExecutorState {
  int32_t id = 0;
  int32_t cores = 1;
  int64_t memory = int64_t(1) << 30;
  std::vector<std::string> scratch;
  std::string bind = "127.0.0.1";
  std::vector<int> affinity;  // --affinity: cpu of connection i = affinity[i mod n]
  WorkDirs work;              // --work, for `@work/` outputs
  Fetcher fetcher;            // --advertise, --fetch-dir
  PartitionCache cache;
  std::atomic<uint64_t> spills{0};
};

/** Per-task view: functions, context, memory budget, spill counters. */
struct TaskEnv {
  ExecutorState& ex;
  FunctionCache& fns;
  Context& ctx;
  int32_t partition = 0;
  int64_t memory = 0;  // bytes of buffered shuffle output this task may hold
  std::vector<LoadedFunction*> used;
  int32_t spillFiles = 0;
  int64_t spillBytes = 0;
  TaskInputs inputs;  // local copies of remote inputs, deleted with the task

  TaskEnv(ExecutorState& e, FunctionCache& f, Context& c) : ex(e), fns(f), ctx(c), inputs(e.fetcher) {}
  LoadedFunction* function(const rpc::Function& fn, unsigned accepted, const char* use);
  std::string spillPath();
};

/** Runs `f` (a call into user code of `lf`), turning its exceptions into TaskFailures. */
template <class F>
auto guarded(const LoadedFunction* lf, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const TaskFailure&) {
    throw;
  } catch (const BadValue& e) {
    throw TaskFailure("BAD_DATA", e.what(), lf->ref);
  } catch (const std::exception& e) {
    throw TaskFailure("FUNCTION_FAILED", e.what(), lf->ref);
  } catch (...) {
    throw TaskFailure("FUNCTION_FAILED", "unknown C++ exception", lf->ref);
  }
}

/** One step of the pipeline. push() returns false when no more records are wanted. */
class Stage {
 public:
  virtual ~Stage() = default;
  virtual bool push(Value&& v) = 0;
  virtual void finish() {}
};

/** The end of the pipeline; result() after finish(). */
class Sink : public Stage {
 public:
  virtual rpc::TaskResult result() = 0;
};

/** Builds the ops in front of `next`; returns the stages (head = back()), may be empty. */
std::vector<std::unique_ptr<Stage>> buildOps(const std::vector<rpc::Op>& ops, TaskEnv& env, Stage* next);
std::unique_ptr<Sink> buildSink(const rpc::Sink& sink, TaskEnv& env);
/** Pushes the records of `src` into `head`, then calls head->finish(). */
void runSource(const rpc::Source& src, TaskEnv& env, Stage* head);

/** Runs a whole task (before/after hooks included). */
rpc::TaskResult runTask(const rpc::Task& task, TaskEnv& env);

/** Key of a record per KeyMode (WHOLE, FIRST, FUNCTION); a copy, the record is untouched. */
class KeyOf {
 public:
  KeyOf(const rpc::Sink& sink, TaskEnv& env, rpc::KeyMode::type dflt);
  Value operator()(const Value& r) const;
  /** The key without copying when it is part of `r`; else computed into `scratch`. */
  const Value& ref(const Value& r, Value& scratch) const;
  rpc::KeyMode::type mode() const { return mode_; }

 private:
  rpc::KeyMode::type mode_;
  LoadedFunction* fn_ = nullptr;
  Context* ctx_ = nullptr;
};

/** Requires a (k, v) pair. */
void requirePair(const Value& v, const char* what);

}  // namespace spindle
