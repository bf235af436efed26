// Helpers the fuzz targets share: a per-process temporary file for readers
// that only take a path, a reader of option bytes at the front of an
// input, and a check that aborts (so that libFuzzer and the replay driver
// both report a broken invariant as a crash).
//
// Thread-safety: a TempFile or FuzzBytes is used by one thread at a time.

#ifndef CHAINTAG_FUZZ_FUZZ_UTIL_H_
#define CHAINTAG_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

// Aborts with the condition's text when it does not hold: an invariant of
// the library that an input broke is a bug, like a crash.
#define FUZZ_CHECK(condition)                                           \
  do {                                                                  \
    if (!(condition)) {                                                 \
      ::chaintag::fuzzing::CheckFailed(#condition, __FILE__, __LINE__); \
    }                                                                   \
  } while (false)

namespace chaintag {
namespace fuzzing {

[[noreturn]] void CheckFailed(const char* condition, const char* file,
                              int line);

// A file under $TMPDIR (else /tmp) named after the target and the process
// id, so that parallel fuzzing jobs never share one; removed on
// destruction. Keep one per target as a function-local static.
class TempFile {
 public:
  explicit TempFile(absl::string_view name);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Replaces the file's contents with `bytes` and returns its path; aborts
  // when the file cannot be written (the machine's fault, not the input's).
  const std::string& Write(absl::string_view bytes);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Consumes option bytes from the front of an input; past the end every
// read gives 0. The rest of the input is remaining().
class FuzzBytes {
 public:
  FuzzBytes(const uint8_t* data, size_t size)
      : data_(reinterpret_cast<const char*>(data)), size_(size) {}

  uint8_t Byte() {
    return pos_ < size_ ? static_cast<uint8_t>(data_[pos_++]) : 0;
  }
  bool Bool() { return (Byte() & 1) != 0; }
  // A value in [0, n) (n ≥ 1) from one byte.
  int Below(int n) { return Byte() % n; }
  absl::string_view remaining() const {
    return absl::string_view(data_ + pos_, size_ - pos_);
  }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline absl::string_view AsText(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace fuzzing
}  // namespace chaintag

#endif  // CHAINTAG_FUZZ_FUZZ_UTIL_H_
