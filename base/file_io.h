// Reading and writing the project's files: text-format protos (configs,
// bundle manifests) with the first parse error named by line and column, and
// whole files written atomically (a temporary beside the target, fsync,
// rename), so that an interrupted write never leaves a broken file behind.
//
// Thread-safety: stateless functions; concurrent writes to one path, from
// any processes and threads, each use their own temporary (named by process
// and thread id) and the last rename wins.

#ifndef CHAINTAG_BASE_FILE_IO_H_
#define CHAINTAG_BASE_FILE_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace chaintag {

// Parses the text-format proto at `path` into `message`. NotFound
// ("<path>: cannot open<what>") when the file cannot be opened,
// InvalidArgument ("<path>: cannot read<what>: <reason>") when it cannot be
// read (a directory), or ("<path>:<line>:<column>: <error>") when it does
// not parse.
absl::Status ReadTextProto(const std::string& path, absl::string_view what,
                           google::protobuf::Message* message);

// Parses text-format `text` into `message`; InvalidArgument
// ("<source>:<line>:<column>: <error>") when it does not parse.
absl::Status ParseTextProto(const std::string& text, absl::string_view source,
                            google::protobuf::Message* message);

// Replaces `path` with `bytes`; on failure the old file (if any) is intact.
// `what` names the file in errors ("the model file"). A writer killed
// mid-write leaves its temporary (`<path>.tmp.<pid>.<tid>`); the next
// successful write of `path` removes those whose process is gone.
absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& bytes,
                                 absl::string_view what);

// Whether WriteFileAtomically(path, ...) can succeed as far as can be told
// before there is anything to write: `path` is not a directory, and its
// directory exists and lets this process create files. InvalidArgument
// "<path>: cannot write <what>: <why>" otherwise, so that a run can refuse
// a bad output path before it trains rather than after.
absl::Status CheckWritablePath(const std::string& path, absl::string_view what);

}  // namespace chaintag

#endif  // CHAINTAG_BASE_FILE_IO_H_
