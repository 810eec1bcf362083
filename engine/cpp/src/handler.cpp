#include "handler.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>

namespace spindle {

void ExecutorHandler::hello(rpc::ExecutorInfo& info, const std::map<std::string, std::string>& props) {
  ctx_.props_ = props;
  info.language = "cpp";
  info.id = ex_.id;
  info.pid = int32_t(getpid());
  info.cores = ex_.cores;
}

void ExecutorHandler::run(rpc::TaskResult& result, const rpc::Task& task) {
  TaskEnv env(ex_, functions_, ctx_);
  env.memory = ex_.memory / std::max(1, ex_.cores);
  auto fail = [&](const std::string& kind, const std::string& msg, const std::string& fn,
                  const std::string& host = "") {
    rpc::TaskError err;
    err.kind = kind;
    err.message = msg;
    err.__set_function_(fn);
    err.__set_partition(task.partition);
    if (!host.empty()) err.__set_host(host);
    std::cerr << "cpp executor " << ex_.id << ": " << task.stage << " partition " << task.partition << ": "
              << kind << (fn.empty() ? "" : " in " + fn) << ": " << msg << std::endl;
    throw err;
  };
  auto t0 = std::chrono::steady_clock::now();
  try {
    result = runTask(task, env);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "cpp executor " << ex_.id << ": " << task.stage << " partition " << task.partition << ": "
              << result.records << " records in " << int64_t(ms) << " ms" << std::endl;
  } catch (const TaskFailure& e) {
    fail(e.kind, e.what(), e.function, e.host);
  } catch (const BadValue& e) {
    fail("BAD_DATA", e.what(), "");
  } catch (const std::bad_alloc&) {
    fail("INTERNAL", "out of memory", "");
  } catch (const std::exception& e) {
    fail("INTERNAL", e.what(), "");
  }
}

void ExecutorHandler::uncache(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) ex_.cache.drop(k);
}

void ExecutorHandler::shutdown() { stopping_ = true; }

}  // namespace spindle
