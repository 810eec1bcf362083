// The partition cache of the process (STORE with cache_key, CACHED sources, uncache): records
// kept as objects (MEMORY) or FORMAT-encoded and zlib-compressed (RAW_MEMORY).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "spindle/value.hpp"

namespace spindle {

using Partition = std::vector<Value>;

class CachedPartition {
 public:
  /** MEMORY: the records as objects. */
  static std::shared_ptr<const CachedPartition> objects(Partition&& records);
  /** RAW_MEMORY: `count` records encoded one after the other in `encoded`, compressed with
      zlib at `level` (1..9; 0 keeps the encoded bytes). */
  static std::shared_ptr<const CachedPartition> raw(std::string&& encoded, uint64_t count, int level);

  /** Bytes held: exact for raw storage, an estimate for objects. */
  int64_t storedBytes() const { return stored_; }
  /** Pushes copies of the records in order while `push` returns true. */
  void forEach(const std::function<bool(Value&&)>& push) const;

 private:
  Partition records_;
  bool raw_ = false;
  std::string bytes_;  // raw: the encoded records, compressed if level_ > 0
  int level_ = 0;
  uint64_t count_ = 0, encodedSize_ = 0;
  int64_t stored_ = 0;
};

class PartitionCache {
 public:
  std::shared_ptr<const CachedPartition> get(const std::string& key);
  void put(const std::string& key, std::shared_ptr<const CachedPartition> p);
  void drop(const std::string& key);

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CachedPartition>> parts_;
};

}  // namespace spindle
