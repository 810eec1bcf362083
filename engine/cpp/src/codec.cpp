#include "codec.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"

namespace spindle {

namespace {

enum Tag : uint8_t {
  NONE = 0,
  FALSE = 1,
  TRUE = 2,
  I64 = 3,
  F64 = 4,
  STR = 5,
  BYTES = 6,
  PAIR = 7,
  LIST = 8,
  MAP = 9
};

void putU32(std::string& out, uint32_t x) {
  char b[4];
  std::memcpy(b, &x, 4);  // little-endian host (x86-64, arm64)
  out.append(b, 4);
}
void put64(std::string& out, const void* x) { out.append(static_cast<const char*>(x), 8); }

void putLen(std::string& out, size_t n) {
  if (n > 0xFFFFFFFFu) throw badData("value too large for the format (more than 2^32-1 items)");
  putU32(out, uint32_t(n));
}

void need(const char* p, const char* end, size_t n) {
  if (size_t(end - p) < n) throw badData("truncated value");
}
uint32_t getU32(const char*& p, const char* end) {
  need(p, end, 4);
  uint32_t x;
  std::memcpy(&x, p, 4);
  p += 4;
  return x;
}

std::string sysError(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

void encode(const Value& v, std::string& out) {
  switch (v.type()) {
    case Value::Type::None: out.push_back(char(NONE)); break;
    case Value::Type::Bool: out.push_back(char(v.asBool() ? TRUE : FALSE)); break;
    case Value::Type::Int: {
      int64_t x = v.asInt();
      out.push_back(char(I64));
      put64(out, &x);
      break;
    }
    case Value::Type::Float: {
      double x = v.asFloat();
      out.push_back(char(F64));
      put64(out, &x);
      break;
    }
    case Value::Type::String: {
      const std::string& s = v.asString();
      out.push_back(char(STR));
      putLen(out, s.size());
      out += s;
      break;
    }
    case Value::Type::Bytes: {
      const std::string& s = v.asBytes().data;
      out.push_back(char(BYTES));
      putLen(out, s.size());
      out += s;
      break;
    }
    case Value::Type::Pair:
      out.push_back(char(PAIR));
      encode(v.first(), out);
      encode(v.second(), out);
      break;
    case Value::Type::List: {
      const List& l = v.asList();
      out.push_back(char(LIST));
      putLen(out, l.size());
      for (const Value& x : l) encode(x, out);
      break;
    }
    case Value::Type::Map: {
      const Map& m = v.asMap();
      out.push_back(char(MAP));
      putLen(out, m.size());
      for (const auto& kv : m) {
        encode(kv.first, out);
        encode(kv.second, out);
      }
      break;
    }
  }
}

std::string encode(const Value& v) {
  std::string out;
  encode(v, out);
  return out;
}

Value decodeValue(const char*& p, const char* end) {
  need(p, end, 1);
  uint8_t tag = uint8_t(*p++);
  switch (tag) {
    case NONE: return Value();
    case FALSE: return Value(false);
    case TRUE: return Value(true);
    case I64: {
      need(p, end, 8);
      int64_t x;
      std::memcpy(&x, p, 8);
      p += 8;
      return Value((long long)x);
    }
    case F64: {
      need(p, end, 8);
      double x;
      std::memcpy(&x, p, 8);
      p += 8;
      return Value(x);
    }
    case STR:
    case BYTES: {
      uint32_t n = getU32(p, end);
      need(p, end, n);
      std::string s(p, n);
      p += n;
      if (tag == STR) return Value(std::move(s));
      return Value(Bytes{std::move(s)});
    }
    case PAIR: {
      Value a = decodeValue(p, end);
      Value b = decodeValue(p, end);
      return Value::pair(std::move(a), std::move(b));
    }
    case LIST: {
      uint32_t n = getU32(p, end);
      List l;
      l.reserve(std::min<size_t>(n, size_t(end - p)));  // each item is at least one byte
      for (uint32_t i = 0; i < n; i++) l.push_back(decodeValue(p, end));
      return Value(std::move(l));
    }
    case MAP: {
      uint32_t n = getU32(p, end);
      Map m;
      m.reserve(std::min<size_t>(n, size_t(end - p) / 2));
      for (uint32_t i = 0; i < n; i++) {
        Value k = decodeValue(p, end);
        Value x = decodeValue(p, end);
        m.emplace_back(std::move(k), std::move(x));
      }
      return Value(std::move(m));
    }
  }
  throw badData("unknown value tag " + std::to_string(tag));
}

void skipValue(const char*& p, const char* end) {
  need(p, end, 1);
  uint8_t tag = uint8_t(*p++);
  switch (tag) {
    case NONE:
    case FALSE:
    case TRUE: return;
    case I64:
    case F64:
      need(p, end, 8);
      p += 8;
      return;
    case STR:
    case BYTES: {
      uint32_t n = getU32(p, end);
      need(p, end, n);
      p += n;
      return;
    }
    case PAIR:
      skipValue(p, end);
      skipValue(p, end);
      return;
    case LIST: {
      uint32_t n = getU32(p, end);
      for (uint32_t i = 0; i < n; i++) skipValue(p, end);
      return;
    }
    case MAP: {
      uint32_t n = getU32(p, end);
      for (uint32_t i = 0; i < n; i++) {
        skipValue(p, end);
        skipValue(p, end);
      }
      return;
    }
  }
  throw badData("unknown value tag " + std::to_string(tag));
}

Value decode(std::string_view data) {
  const char* p = data.data();
  const char* end = p + data.size();
  Value v = decodeValue(p, end);
  if (p != end) throw badData("trailing bytes after value");
  return v;
}

uint32_t hashKey(const Value& key) {
  const unsigned char* data;
  size_t n;
  std::string enc;
  int64_t x;
  if (key.isString()) {
    data = reinterpret_cast<const unsigned char*>(key.asString().data());
    n = key.asString().size();
  } else if (key.isInt()) {
    x = key.asInt();
    data = reinterpret_cast<const unsigned char*>(&x);
    n = 8;
  } else {
    encode(key, enc);
    data = reinterpret_cast<const unsigned char*>(enc.data());
    n = enc.size();
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {  // zlib takes uInt lengths
    uInt chunk = n > (1u << 30) ? (1u << 30) : uInt(n);
    crc = crc32(crc, data, chunk);
    data += chunk;
    n -= chunk;
  }
  return uint32_t(crc);
}

// ---- partition files ----

static constexpr char kMagic[4] = {'S', 'P', 'D', 'L'};

PartitionReader::PartitionReader(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw badData(sysError("cannot open partition file", path));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    throw badData(sysError("cannot stat", path));
  }
  size_ = size_t(st.st_size);
  if (size_ < 16) {
    ::close(fd);
    throw badData("not a partition file (shorter than its header): " + path);
  }
  map_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw badData(sysError("cannot map", path));
  }
  madvise(map_, size_, MADV_SEQUENTIAL);
  const char* base = static_cast<const char*>(map_);
  if (std::memcmp(base, kMagic, 4) != 0) throw badData("not a partition file (bad magic): " + path);
  if (base[4] != 1)
    throw badData("unsupported partition file version " + std::to_string(int(base[4])) + ": " + path);
  std::memcpy(&count_, base + 8, 8);
  flags_ = uint8_t(base[5]);
  p_ = base + 16;
  end_ = base + size_;
}

PartitionReader::~PartitionReader() {
  if (map_) munmap(map_, size_);
}

bool PartitionReader::next(Value& v) {
  if (read_ == count_) return false;
  try {
    v = decodeValue(p_, end_);
  } catch (const TaskFailure& e) {
    throw badData(std::string(e.what()) + " in " + path_ + " (record " + std::to_string(read_) + ")");
  }
  read_++;
  return true;
}

bool PartitionReader::nextRaw(std::string_view& rec) {
  if (read_ == count_) return false;
  const char* start = p_;
  try {
    skipValue(p_, end_);
  } catch (const TaskFailure& e) {
    throw badData(std::string(e.what()) + " in " + path_ + " (record " + std::to_string(read_) + ")");
  }
  rec = std::string_view(start, size_t(p_ - start));
  read_++;
  return true;
}

std::vector<Value> readPartition(const std::string& path) {
  PartitionReader r(path);
  std::vector<Value> out;
  out.reserve(r.count());
  Value v;
  while (r.next(v)) out.push_back(std::move(v));
  return out;
}

PartitionWriter::PartitionWriter(const std::string& path, uint8_t flags) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw TaskFailure("INTERNAL", sysError("cannot create", path));
  char header[16] = {'S', 'P', 'D', 'L', 1, char(flags), 0, 0};
  buf_.append(header, 16);
}

PartitionWriter::~PartitionWriter() {
  if (f_) std::fclose(f_);
}

void PartitionWriter::flush() {
  if (buf_.empty()) return;
  if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
    throw TaskFailure("INTERNAL", sysError("cannot write", path_));
  bytes_ += buf_.size();
  buf_.clear();
}

void PartitionWriter::write(const Value& v) {
  encode(v, buf_);
  count_++;
  if (buf_.size() >= (1u << 20)) flush();
}

void PartitionWriter::writePair(const Value& k, const Value& v) {
  buf_.push_back(char(PAIR));
  encode(k, buf_);
  encode(v, buf_);
  count_++;
  if (buf_.size() >= (1u << 20)) flush();
}

void PartitionWriter::writeEncoded(const std::string& encoded, uint64_t n) {
  flush();
  if (std::fwrite(encoded.data(), 1, encoded.size(), f_) != encoded.size())
    throw TaskFailure("INTERNAL", sysError("cannot write", path_));
  bytes_ += encoded.size();
  count_ += n;
}

uint64_t PartitionWriter::close() {
  flush();
  if (std::fseek(f_, 8, SEEK_SET) != 0 || std::fwrite(&count_, 8, 1, f_) != 1)
    throw TaskFailure("INTERNAL", sysError("cannot write", path_));
  int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) throw TaskFailure("INTERNAL", sysError("cannot close", path_));
  return bytes_;
}

uint64_t writeEncodedPartition(const std::string& path, const std::string& encoded, uint64_t n,
                               uint8_t flags) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw TaskFailure("INTERNAL", sysError("cannot create", path));
  char header[16] = {'S', 'P', 'D', 'L', 1, char(flags), 0, 0};
  std::memcpy(header + 8, &n, 8);
  bool ok = std::fwrite(header, 1, 16, f) == 16 &&
            std::fwrite(encoded.data(), 1, encoded.size(), f) == encoded.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) throw TaskFailure("INTERNAL", sysError("cannot write", path));
  return 16 + encoded.size();
}

void writePartition(const std::string& path, const std::vector<Value>& records) {
  PartitionWriter w(path);
  for (const Value& v : records) w.write(v);
  w.close();
}

}  // namespace spindle
