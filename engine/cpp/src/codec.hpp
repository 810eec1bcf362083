// The binary format of engine/FORMAT.md: value encoding, partition files, hash partitioning.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "spindle/value.hpp"

namespace spindle {

/** Appends the encoding of `v` to `out`. */
void encode(const Value& v, std::string& out);
std::string encode(const Value& v);

/** Decodes one value at `p`, advancing it; throws BAD_DATA past `end` or on a bad tag. */
Value decodeValue(const char*& p, const char* end);
/** Decodes exactly one value filling `data`. */
Value decode(std::string_view data);

/** FORMAT.md hash: zlib crc32 of the key's hash bytes. */
uint32_t hashKey(const Value& key);

/** Reads the records of one partition file (memory-mapped). */
class PartitionReader {
 public:
  explicit PartitionReader(const std::string& path);
  ~PartitionReader();
  PartitionReader(const PartitionReader&) = delete;
  PartitionReader& operator=(const PartitionReader&) = delete;
  uint64_t count() const { return count_; }
  /** Next record into `v`; false at the end. */
  bool next(Value& v);

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  uint64_t count_ = 0;
  uint64_t read_ = 0;
};

std::vector<Value> readPartition(const std::string& path);

/** Writes a partition file; the count is patched in at close(). */
class PartitionWriter {
 public:
  explicit PartitionWriter(const std::string& path);
  ~PartitionWriter();
  void write(const Value& v);
  /** Appends `n` records already encoded in `encoded`. */
  void writeEncoded(const std::string& encoded, uint64_t n);
  /** Finishes the file; returns its size in bytes. */
  uint64_t close();

 private:
  void flush();
  std::string path_;
  FILE* f_ = nullptr;
  std::string buf_;
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
};

/** Writes `n` pre-encoded records as one partition file; returns its size. */
uint64_t writeEncodedPartition(const std::string& path, const std::string& encoded, uint64_t n);
void writePartition(const std::string& path, const std::vector<Value>& records);

}  // namespace spindle
