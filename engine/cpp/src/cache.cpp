#include "cache.hpp"

#include <zlib.h>

#include "codec.hpp"
#include "errors.hpp"
#include "order.hpp"

namespace spindle {

std::shared_ptr<const CachedPartition> CachedPartition::objects(Partition&& records) {
  auto p = std::make_shared<CachedPartition>();
  p->stored_ = int64_t(sizeof(Partition) + records.capacity() * sizeof(Value));
  for (const Value& v : records) p->stored_ += int64_t(approxSize(v));
  p->records_ = std::move(records);
  return p;
}

std::shared_ptr<const CachedPartition> CachedPartition::raw(std::string&& encoded, uint64_t count,
                                                            int level) {
  if (level < 0 || level > 9) throw badData("compression level " + std::to_string(level) + " is not 0..9");
  auto p = std::make_shared<CachedPartition>();
  p->raw_ = true;
  p->level_ = level;
  p->count_ = count;
  p->encodedSize_ = encoded.size();
  if (level == 0) {
    p->bytes_ = std::move(encoded);
    p->bytes_.shrink_to_fit();
  } else {
    uLongf n = compressBound(uLong(encoded.size()));
    p->bytes_.resize(n);
    int rc = compress2(reinterpret_cast<Bytef*>(&p->bytes_[0]), &n,
                       reinterpret_cast<const Bytef*>(encoded.data()), uLong(encoded.size()), level);
    if (rc != Z_OK) throw TaskFailure("INTERNAL", "zlib compress failed (" + std::to_string(rc) + ")");
    p->bytes_.resize(n);
    p->bytes_.shrink_to_fit();
  }
  p->stored_ = int64_t(p->bytes_.size());
  return p;
}

void CachedPartition::forEach(const std::function<bool(Value&&)>& push) const {
  if (!raw_) {
    for (const Value& v : records_)
      if (!push(Value(v))) return;
    return;
  }
  std::string plain;
  const std::string* data = &bytes_;
  if (level_ > 0) {
    plain.resize(encodedSize_);
    uLongf n = uLongf(encodedSize_);
    int rc = uncompress(reinterpret_cast<Bytef*>(&plain[0]), &n,
                        reinterpret_cast<const Bytef*>(bytes_.data()), uLong(bytes_.size()));
    if (rc != Z_OK || n != encodedSize_)
      throw TaskFailure("INTERNAL",
                        "zlib uncompress of a cached partition failed (" + std::to_string(rc) + ")");
    data = &plain;
  }
  const char* p = data->data();
  const char* end = p + data->size();
  for (uint64_t i = 0; i < count_; i++)
    if (!push(decodeValue(p, end))) return;
}

std::shared_ptr<const CachedPartition> PartitionCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = parts_.find(key);
  return it == parts_.end() ? nullptr : it->second;
}

void PartitionCache::put(const std::string& key, std::shared_ptr<const CachedPartition> p) {
  std::lock_guard<std::mutex> lock(mutex_);
  parts_[key] = std::move(p);
}

void PartitionCache::drop(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  parts_.erase(key);
}

}  // namespace spindle
