#include "fuzz/fuzz_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace chaintag {
namespace fuzzing {

void CheckFailed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", file, line, condition);
  std::abort();
}

TempFile::TempFile(absl::string_view name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  if (dir == nullptr || *dir == '\0') dir = std::getenv("TMPDIR");
  if (dir == nullptr || *dir == '\0') dir = "/tmp";
  path_ = absl::StrCat(dir, "/chaintag_fuzz_", name, ".",
                       static_cast<long>(getpid()));
}

TempFile::~TempFile() { unlink(path_.c_str()); }

const std::string& TempFile::Write(absl::string_view bytes) {
  std::FILE* file = std::fopen(path_.c_str(), "wb");
  if (file == nullptr) {
    std::perror(path_.c_str());
    std::abort();
  }
  const bool written =
      bytes.empty() ||
      std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  if (std::fclose(file) != 0 || !written) {
    std::perror(path_.c_str());
    std::abort();
  }
  return path_;
}

}  // namespace fuzzing
}  // namespace chaintag
