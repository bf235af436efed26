// For tests that read the staged corpora (../shared/corpora, passed to tests
// as $CHAINTAG_CORPORA by ./bazelw): the path of a corpus file, and the
// message a test fails with when it is absent. Such tests are tagged
// "requires-corpora"; they fail rather than skip, so that a run without the
// corpora says so, and `--test_tag_filters=-requires-corpora` leaves them
// out.
//
// Thread-safety: reads the environment and the file system.

#ifndef CHAINTAG_BASE_CORPORA_TESTING_H_
#define CHAINTAG_BASE_CORPORA_TESTING_H_

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace chaintag {

// $CHAINTAG_CORPORA, or "" when unset.
inline std::string CorporaRootForTests() {
  const char* root = std::getenv("CHAINTAG_CORPORA");
  return root == nullptr ? "" : root;
}

// The path of `relative` under $CHAINTAG_CORPORA, or "" when it is not a
// readable file there.
inline std::string CorpusFile(absl::string_view relative) {
  const std::string root = CorporaRootForTests();
  if (root.empty()) return "";
  const std::string path = absl::StrCat(root, "/", relative);
  return std::ifstream(path).good() ? path : "";
}

// Why a test that needs `relative` cannot run, and what to do.
inline std::string MissingCorpus(absl::string_view relative) {
  const std::string root = CorporaRootForTests();
  return absl::StrCat(
      relative, " not found under $CHAINTAG_CORPORA (",
      root.empty() ? "unset" : root,
      "): this test needs the staged corpora (../shared/corpora beside the "
      "workspace, which ./bazelw passes to tests); leave such tests out "
      "with --test_tag_filters=-requires-corpora");
}

}  // namespace chaintag

#endif  // CHAINTAG_BASE_CORPORA_TESTING_H_
