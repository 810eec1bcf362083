// The Executor Thrift service (engine/rpc/executor.thrift), one handler per connection.
#pragma once

#include <atomic>

#include "Executor.h"
#include "task.hpp"

namespace spindle {

class ExecutorHandler : public rpc::ExecutorIf {
 public:
  ExecutorHandler(ExecutorState& ex, std::atomic<bool>& stopping)
      : ex_(ex), stopping_(stopping), functions_(ex.fetcher) {
    ctx_.executor_ = ex.id;
  }
  void hello(rpc::ExecutorInfo& info, const std::map<std::string, std::string>& props) override;
  void run(rpc::TaskResult& result, const rpc::Task& task) override;
  void uncache(const std::vector<std::string>& keys) override;
  void shutdown() override;

 private:
  ExecutorState& ex_;
  std::atomic<bool>& stopping_;
  FunctionCache functions_;
  Context ctx_;
};

}  // namespace spindle
