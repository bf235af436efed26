#include "base/file_checksum.h"

#include <string>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// The field is the tag of a fixed64 (one byte below field 16, two up to
// 2047), then 8 bytes of value; any byte changed before or in it fails the
// check, and so does anything after it.
TEST(FileChecksumTest, CoversEveryByteAndEndsTheFile) {
  for (int field : {15, 41}) {
    const std::string body = "some serialised message \x01\x02\xff";
    std::string bytes = body;
    AppendFileChecksum(field, &bytes);
    const size_t tag_bytes = field < 16 ? 1 : 2;
    ASSERT_EQ(bytes.size(), body.size() + tag_bytes + 8);
    uint64_t value = 0;
    for (int b = 7; b >= 0; --b) {
      value = value << 8 | static_cast<uint8_t>(bytes[bytes.size() - 8 + b]);
    }
    EXPECT_TRUE(CheckFileChecksum(bytes, field, value).ok());
    EXPECT_FALSE(CheckFileChecksum(bytes, field + 1, value).ok());
    EXPECT_FALSE(CheckFileChecksum(bytes, field, value + 1).ok());
    for (size_t at = 0; at < body.size(); ++at) {
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ 0x40);
      EXPECT_EQ(CheckFileChecksum(flipped, field, value).message(),
                "file checksum mismatch (damaged file)")
          << at;
    }
    EXPECT_EQ(CheckFileChecksum(bytes + "x", field, value).message(),
              "the file checksum is not the file's last field (damaged file)");
    EXPECT_FALSE(CheckFileChecksum("", field, value).ok());
  }
}

}  // namespace
}  // namespace chaintag
