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
/** Advances `p` past one encoded value without building it (checked like decodeValue). */
void skipValue(const char*& p, const char* end);
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
  /** The header's flags byte (FORMAT.md: bit 0 SELF_KEYED). */
  uint8_t flags() const { return flags_; }
  /** Next record into `v`; false at the end. */
  bool next(Value& v);
  /** The encoding of the next record (valid while the reader lives); false at the end. */
  bool nextRaw(std::string_view& rec);

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  uint64_t count_ = 0;
  uint64_t read_ = 0;
  uint8_t flags_ = 0;
};

std::vector<Value> readPartition(const std::string& path);

/** Writes a partition file; the count is patched in at close(). */
class PartitionWriter {
 public:
  explicit PartitionWriter(const std::string& path, uint8_t flags = 0);
  ~PartitionWriter();
  void write(const Value& v);
  /** Appends one record already encoded in [p, p+n). */
  void writeRaw(const char* p, size_t n) {
    buf_.append(p, n);
    count_++;
    if (buf_.size() >= (1u << 20)) flush();
  }
  /** Appends the pair of two encoded values [k, k+kn), [r, r+rn). */
  void writeRawPair(const char* k, size_t kn, const char* r, size_t rn) {
    buf_.push_back(char(7));
    buf_.append(k, kn);
    buf_.append(r, rn);
    count_++;
    if (buf_.size() >= (1u << 20)) flush();
  }
  /** Writes the pair (k, v) without building it. */
  void writePair(const Value& k, const Value& v);
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

/** Header flag of a sorted run whose records are their own sort keys (FORMAT.md). */
constexpr uint8_t kSelfKeyed = 0x01;

/** Writes `n` pre-encoded records as one partition file; returns its size. */
uint64_t writeEncodedPartition(const std::string& path, const std::string& encoded, uint64_t n,
                               uint8_t flags = 0);
void writePartition(const std::string& path, const std::vector<Value>& records);

}  // namespace spindle
