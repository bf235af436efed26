// A file's own checksum as its last protobuf field: a fixed64 holding the
// XXH3-64 of every byte before it. A reader that finds the field checks
// that it ends the file and that the bytes before it hash to it, so that a
// damaged byte anywhere (a label, a setting, a counter) fails the read,
// not only in the parts a message-level checksum covers. Builds that do not
// know the field skip it as an unknown one.
//
// Thread-safety: stateless functions.
//
//   std::string bytes = message.SerializeAsString();  // without the field
//   AppendFileChecksum(kMyChecksumField, &bytes);
//   ...
//   if (parsed.has_file_checksum()) {
//     absl::Status ok = CheckFileChecksum(bytes, kMyChecksumField,
//                                         parsed.file_checksum());
//   }

#ifndef CHAINTAG_BASE_FILE_CHECKSUM_H_
#define CHAINTAG_BASE_FILE_CHECKSUM_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace chaintag {

// Appends field `field_number` (fixed64) holding XXH3-64 of `bytes` as
// they are.
void AppendFileChecksum(int field_number, std::string* bytes);

// Whether `bytes`, a serialised message whose field `field_number` parsed
// as `parsed`, end with that field as AppendFileChecksum writes it and the
// bytes before it hash to it; DataLoss saying which not.
absl::Status CheckFileChecksum(absl::string_view bytes, int field_number,
                               uint64_t parsed);

}  // namespace chaintag

#endif  // CHAINTAG_BASE_FILE_CHECKSUM_H_
