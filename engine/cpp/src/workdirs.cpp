#include "workdirs.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"

namespace spindle {

std::string WorkDirs::output(const std::string& path) {
  static const std::string work = "@work/";
  std::string real = path;
  if (path.compare(0, work.size(), work) == 0) {
    if (dirs.empty()) throw TaskFailure("INTERNAL", "no --work dirs for " + path);
    real = dirs[n_++ % dirs.size()] + "/" + path.substr(work.size());
  }
  makeParents(real);
  return real;
}

void makeParents(const std::string& path) {
  for (size_t i = 1; i < path.size(); i++) {
    if (path[i] != '/') continue;
    std::string dir = path.substr(0, i);
    if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
      throw TaskFailure("INTERNAL", "cannot create directory " + dir + ": " + std::strerror(errno));
  }
}

}  // namespace spindle
