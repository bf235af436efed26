// Temporary files for the tests that read what they wrote: a path in the
// test's temporary directory, and a file written with the given bytes.
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_FEATURES_TEMP_FILES_TESTING_H_
#define CHAINTAG_FEATURES_TEMP_FILES_TESTING_H_

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace chaintag {
namespace temp_files_testing {

inline std::string TmpPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
}

}  // namespace temp_files_testing
}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_TEMP_FILES_TESTING_H_
