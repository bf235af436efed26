// Where the tools look for corpora and put their outputs.
//
// Under `bazel run` a program runs in its runfiles directory; Bazel passes
// the caller's directory as BUILD_WORKING_DIRECTORY and the workspace as
// BUILD_WORKSPACE_DIRECTORY. Paths a user types are resolved against the
// caller's directory, as they would be for any command.
//
// Thread-safety: reads the environment only.

#ifndef CHAINTAG_BASE_PATHS_H_
#define CHAINTAG_BASE_PATHS_H_

#include <string>

namespace chaintag {

// `path` itself when it is empty (an unset path stays unset) or absolute, or
// when `base` is empty; else `base`/`path`.
std::string ResolvePath(const std::string& base, const std::string& path);

// The caller's working directory ("." outside `bazel run`).
std::string CallerDirectory();

// A path the user typed, resolved against the caller's directory.
std::string ResolveUserPath(const std::string& path);

// $CHAINTAG_CORPORA, else ../shared/corpora beside the workspace (under
// `bazel run`), else ../shared/corpora relative to the caller.
std::string DefaultCorporaRoot();

}  // namespace chaintag

#endif  // CHAINTAG_BASE_PATHS_H_
