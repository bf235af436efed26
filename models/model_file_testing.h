// Files for the tests that write and read model files back: a path in the
// test's temporary directory, and a whole file's bytes written or read
// (e.g. to damage a file that still parses).
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_MODELS_MODEL_FILE_TESTING_H_
#define CHAINTAG_MODELS_MODEL_FILE_TESTING_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace chaintag {
namespace chain_testing {

inline std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace chain_testing
}  // namespace chaintag

#endif  // CHAINTAG_MODELS_MODEL_FILE_TESTING_H_
