// Shared helpers of the libFuzzer targets (tests/fuzz/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <streambuf>

namespace fuzz {

// A stream buffer that discards everything, with a buffer so that formatted
// output runs its full path at the cost of a pointer reset per 4 KiB.
class NullBuf final : public std::streambuf {
 public:
  NullBuf() { setp(buf_, buf_ + sizeof buf_); }

 protected:
  int overflow(int c) override {
    setp(buf_, buf_ + sizeof buf_);
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  int sync() override {
    setp(buf_, buf_ + sizeof buf_);
    return 0;
  }

 private:
  char buf_[4096];
};

// FNV-1a: picks per-input settings deterministically, so a saved input
// reproduces with the same settings.
inline uint64_t hash_input(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace fuzz
