// Setting any field of a config proto from text, by its dotted path
// ("solver.lambda=1e-4", "features.num_buckets=2097152", enums by value
// name in any case, repeated fields by a list: "corpus.format.
// attribute_columns=[0,2]"), through protobuf reflection: one mechanism for
// every tool's overrides.
//
// Thread-safety: stateless functions; each call mutates only its message.

#ifndef CHAINTAG_BASE_CONFIG_OVERRIDE_H_
#define CHAINTAG_BASE_CONFIG_OVERRIDE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace chaintag {

// Sets the scalar field at `path` (field names joined by '.', through
// singular message fields) of `root` from `value`: numbers, bools
// (true/false/1/0), strings, enums by value name (case-insensitive). A
// repeated scalar field takes a list in brackets, "[0,2]" (blanks around
// the elements ignored; an element cannot hold ',' or ']'), which replaces
// its values; "[]" clears it. Errors name the path and list the fields or
// values that exist; a failed call changes nothing.
absl::Status SetFieldByPath(absl::string_view path, absl::string_view value,
                            google::protobuf::Message* root);

// SetFieldByPath from "path=value".
absl::Status ApplyAssignment(absl::string_view assignment,
                             google::protobuf::Message* root);

// The declared default of the singular scalar field at `path` in messages of
// type `root`, as text SetFieldByPath reads back: numbers to full precision,
// bools as true/false, enums by value name in lower case. The named flags of
// the tools take their defaults from here.
absl::StatusOr<std::string> FieldDefaultByPath(
    const google::protobuf::Descriptor& root, absl::string_view path);

// The assignments of `pieces` split at every comma (as Abseil parses a
// std::vector<std::string> flag, "--set=a=1,b=[0,2]" gives "a=1", "b=[0",
// "2]"): the pieces of a list, from the one whose value opens it with '['
// to the one that ends with ']', joined again with commas. Errors on a
// list that is never closed.
absl::StatusOr<std::vector<std::string>> JoinListPieces(
    absl::Span<const std::string> pieces);

// ApplyAssignment for each assignment of JoinListPieces(assignments), in
// order; stops at the first error.
absl::Status ApplyAssignments(absl::Span<const std::string> assignments,
                              google::protobuf::Message* root);

}  // namespace chaintag

#endif  // CHAINTAG_BASE_CONFIG_OVERRIDE_H_
