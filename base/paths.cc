#include "base/paths.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace chaintag {
namespace {

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::string ResolvePath(const std::string& base, const std::string& path) {
  if (path.empty() || path[0] == '/' || base.empty()) return path;
  return absl::StrCat(base, "/", path);
}

std::string CallerDirectory() {
  const char* directory = NonEmptyEnv("BUILD_WORKING_DIRECTORY");
  return directory != nullptr ? directory : ".";
}

std::string ResolveUserPath(const std::string& path) {
  return ResolvePath(CallerDirectory(), path);
}

std::string DefaultCorporaRoot() {
  if (const char* corpora = NonEmptyEnv("CHAINTAG_CORPORA")) return corpora;
  if (const char* workspace = NonEmptyEnv("BUILD_WORKSPACE_DIRECTORY")) {
    return absl::StrCat(workspace, "/../shared/corpora");
  }
  return ResolveUserPath("../shared/corpora");
}

}  // namespace chaintag
