#include "base/file_checksum.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "xxhash.h"

namespace chaintag {
namespace {

// The field as AppendFileChecksum writes it: its tag (field number, wire
// type 1: 64 bits) as a varint, then the value little-endian.
std::string ChecksumField(int field_number, uint64_t checksum) {
  std::string field;
  constexpr uint32_t kFixed64 = 1;
  for (uint32_t tag = (static_cast<uint32_t>(field_number) << 3) | kFixed64;;
       tag >>= 7) {
    if (tag < 0x80) {
      field.push_back(static_cast<char>(tag));
      break;
    }
    field.push_back(static_cast<char>((tag & 0x7f) | 0x80));
  }
  for (int b = 0; b < 8; ++b) {
    field.push_back(static_cast<char>((checksum >> (8 * b)) & 0xff));
  }
  return field;
}

}  // namespace

void AppendFileChecksum(int field_number, std::string* bytes) {
  bytes->append(
      ChecksumField(field_number, XXH3_64bits(bytes->data(), bytes->size())));
}

absl::Status CheckFileChecksum(absl::string_view bytes, int field_number,
                               uint64_t parsed) {
  const std::string field = ChecksumField(field_number, parsed);
  if (bytes.size() < field.size() ||
      bytes.substr(bytes.size() - field.size()) != field) {
    return absl::DataLossError(
        "the file checksum is not the file's last field (damaged file)");
  }
  const absl::string_view body = bytes.substr(0, bytes.size() - field.size());
  if (XXH3_64bits(body.data(), body.size()) != parsed) {
    return absl::DataLossError("file checksum mismatch (damaged file)");
  }
  return absl::OkStatus();
}

}  // namespace chaintag
