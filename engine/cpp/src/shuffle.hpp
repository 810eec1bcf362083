// Shuffle sinks: hash partitioning (with map-side combining) and range partitioning into
// sorted runs, spilling runs to the scratch dirs above the task's memory budget.
#pragma once

#include <memory>

#include "task.hpp"

namespace spindle {

std::unique_ptr<Sink> makeHashShuffle(const rpc::Sink& s, TaskEnv& env);
std::unique_ptr<Sink> makeRangeShuffle(const rpc::Sink& s, TaskEnv& env);

}  // namespace spindle
