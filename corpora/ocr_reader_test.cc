#include "corpora/ocr_reader.h"

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

// One letter.data line; pixel k is (k % period == 0), with a trailing TAB
// as in the original file.
std::string Line(int id, char letter, int next_id, int word_id, int position,
                 int fold, int period) {
  std::string line =
      absl::StrCat(id, "\t", std::string(1, letter), "\t", next_id, "\t",
                   word_id, "\t", position, "\t", fold, "\t");
  for (int k = 0; k < kOcrPixelsPerLetter; ++k) {
    absl::StrAppend(&line, k % period == 0 ? "1" : "0", "\t");
  }
  return line + "\n";
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Words "ab" (fold 3) and "z" (fold 0).
std::string SmallFile() {
  return Line(1, 'a', 2, 1, 1, 3, 2) + Line(2, 'b', -1, 1, 2, 3, 3) +
         Line(3, 'z', -1, 2, 1, 0, 5);
}

void ExpectSmallWords(const std::vector<OcrWord>& words) {
  ASSERT_EQ(words.size(), 2u);
  EXPECT_THAT(words[0].letters, ElementsAre(0, 1));
  EXPECT_EQ(words[0].fold, 3);
  EXPECT_EQ(words[0].first_line, 1);
  ASSERT_EQ(words[0].pixels.size(), 2u * kOcrPixelsPerLetter);
  EXPECT_EQ(words[0].pixels[0], 1);
  EXPECT_EQ(words[0].pixels[1], 0);
  EXPECT_EQ(words[0].pixels[2], 1);
  EXPECT_EQ(words[0].pixels[128], 1);  // letter b, period 3
  EXPECT_EQ(words[0].pixels[130], 0);
  EXPECT_EQ(words[0].pixels[131], 1);
  int ones = 0;
  for (uint8_t p : words[0].pixels) ones += p;
  EXPECT_EQ(ones, 64 + 43);
  EXPECT_THAT(words[1].letters, ElementsAre(25));
  EXPECT_EQ(words[1].fold, 0);
  EXPECT_EQ(words[1].first_line, 3);
}

TEST(OcrReaderTest, ReadsPlainFile) {
  const auto words = ReadOcrFile(WriteFile("plain.data", SmallFile()));
  ASSERT_TRUE(words.ok()) << words.status();
  ExpectSmallWords(*words);
}

TEST(OcrReaderTest, ReadsGzippedFileAndCrlf) {
  std::string text = SmallFile();
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const std::string path = TempPath("small.data.gz");
  gzFile out = gzopen(path.c_str(), "wb9");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, crlf.data(), crlf.size()),
            static_cast<int>(crlf.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
  const auto words = ReadOcrFile(path);
  ASSERT_TRUE(words.ok()) << words.status();
  ExpectSmallWords(*words);
}

absl::Status ErrorOf(const std::string& name, const std::string& text) {
  return ReadOcrFile(WriteFile(name, text)).status();
}

TEST(OcrReaderTest, Errors) {
  const std::string good = Line(1, 'a', -1, 1, 1, 0, 2);
  std::string short_line = good.substr(0, good.size() - 3) + "\n";
  absl::Status s = ErrorOf("e1", good + short_line);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            absl::StrCat(TempPath("e1"), ":2: expected 134 fields, got 133"));

  s = ErrorOf("e2", Line(1, 'A', -1, 1, 1, 0, 2));
  EXPECT_EQ(s.message(),
            absl::StrCat(TempPath("e2"), ":1: letter \"A\" is not one of a-z"));

  std::string bad_pixel = good;
  bad_pixel[bad_pixel.size() - 3] = '2';  // the last pixel
  s = ErrorOf("e3", bad_pixel);
  EXPECT_EQ(s.message(),
            absl::StrCat(TempPath("e3"), ":1: pixel 127 is \"2\", not 0 or 1"));

  s = ErrorOf("e4", Line(1, 'a', 5, 1, 1, 0, 2) + Line(2, 'b', -1, 1, 2, 0, 2));
  EXPECT_EQ(s.message(),
            absl::StrCat(TempPath("e4"),
                         ":1: next_id 5 but the following line has id 2"));

  s = ErrorOf("e5", Line(1, 'a', 2, 1, 1, 0, 2));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(absl::StrCat(TempPath("e5"), ":1: next_id 2")));

  s = ErrorOf("e6", Line(1, 'a', 2, 1, 1, 0, 2) + Line(2, 'b', -1, 1, 2, 1, 2));
  EXPECT_EQ(s.message(),
            absl::StrCat(TempPath("e6"),
                         ":2: fold 1 differs from the word's fold 0"));

  s = ReadOcrFile(TempPath("missing.data")).status();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr(TempPath("missing.data")));
}

TEST(OcrReaderTest, EmptyFileHasNoWords) {
  const auto words = ReadOcrFile(WriteFile("empty.data", ""));
  ASSERT_TRUE(words.ok());
  EXPECT_TRUE(words->empty());
}

}  // namespace
}  // namespace chaintag
