// Output paths: `@work/REL` is striped over the --work dirs; parent directories are created.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace spindle {

class WorkDirs {
 public:
  std::vector<std::string> dirs;  // --work (default: --scratch)

  /** The real path of the output `path`, its missing parent directories created: `@work/REL`
      becomes dirs[i mod n]/REL for the i-th such output of the process; others are kept. */
  std::string output(const std::string& path);

 private:
  std::atomic<uint64_t> n_{0};
};

/** Creates the missing directories above `path` (mkdir -p of its parent); throws INTERNAL. */
void makeParents(const std::string& path);

}  // namespace spindle
