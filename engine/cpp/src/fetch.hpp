// Files of other hosts (engine/rpc/FETCH.md): `tcp://HOST:PORT/abs/path` URLs are read locally
// when HOST:PORT is this host's file server (--advertise), else fetched into the fetch dir.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace spindle {

struct FileUrl {
  std::string host;  // "HOST:PORT" of the file server
  std::string path;  // "/abs/path" on that host
};

/** Parses "tcp://HOST:PORT/abs/path"; false if `s` is not such a URL (a plain path). */
bool parseFileUrl(const std::string& s, FileUrl& out);

/** Process-wide: where fetched files go, and the libraries fetched so far. */
class Fetcher {
 public:
  std::string advertise;  // this host's file server "HOST:PORT", or ""
  std::string dir;        // --fetch-dir
  int32_t id = 0;         // executor id, for file names

  /** True (and `local` set) if `pathOrUrl` is a plain path or a URL of this host. */
  bool isLocal(const std::string& pathOrUrl, std::string& local) const;
  /** Copies bytes [offset, offset+length) (length -1: to the end) of `url` into a new file of
      the fetch dir named with `tag`; returns its path. Throws FETCH_FAILED (the file removed). */
  std::string fetch(const std::string& url, int64_t offset, int64_t length, const std::string& tag);
  /** A local path of the library `pathOrUrl`, fetched at most once per process and kept. */
  std::string library(const std::string& pathOrUrl);

 private:
  std::atomic<uint64_t> n_{0};
  std::mutex libsMutex_;
  std::map<std::string, std::string> libs_;  // URL -> fetched copy
};

/** The inputs of one task as local paths; the copies it fetched are deleted with it (at the
    end of the task, success or failure). */
class TaskInputs {
 public:
  explicit TaskInputs(Fetcher& f) : f_(f) {}
  ~TaskInputs();
  TaskInputs(const TaskInputs&) = delete;
  TaskInputs& operator=(const TaskInputs&) = delete;

  std::string local(const std::string& pathOrUrl);
  std::vector<std::string> local(const std::vector<std::string>& paths);
  /** A text split [offset, offset+length): a remote one is fetched as exactly those bytes and
      `offset` becomes 0 (the local copy is the split). */
  std::string localSplit(const std::string& pathOrUrl, int64_t& offset, int64_t length);

 private:
  Fetcher& f_;
  std::vector<std::string> fetched_;
};

}  // namespace spindle
