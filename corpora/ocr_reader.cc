#include "corpora/ocr_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace chaintag {
namespace {

constexpr int kHeaderFields = 6;
constexpr int kFields = kHeaderFields + kOcrPixelsPerLetter;

// Owns a gzFile (gzopen reads plain files as they are).
class GzFile {
 public:
  explicit GzFile(const std::string& path) : file_(gzopen(path.c_str(), "rb")) {
    if (file_ != nullptr) gzbuffer(file_, 1 << 17);
  }
  ~GzFile() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  bool is_open() const { return file_ != nullptr; }

  // Reads one line (without '\n') into *line; false at end of file or on a
  // read error (see error()).
  bool ReadLine(std::string* line) {
    line->clear();
    char buffer[4096];
    while (gzgets(file_, buffer, sizeof(buffer)) != nullptr) {
      const size_t n = std::strlen(buffer);
      if (n > 0 && buffer[n - 1] == '\n') {
        line->append(buffer, n - 1);
        return true;
      }
      line->append(buffer, n);
    }
    return !line->empty();
  }

  // The zlib error message, or empty when there is none.
  std::string error() const {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    if (code == Z_OK) return "";  // Z_BUF_ERROR: truncated gzip
    return code == Z_ERRNO ? std::strerror(errno) : message;
  }

 private:
  gzFile file_;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

void SplitFields(absl::string_view line,
                 std::vector<absl::string_view>* fields) {
  fields->clear();
  const char* p = line.data();
  const char* const end = p + line.size();
  while (p < end) {
    while (p < end && IsSpace(*p)) ++p;
    const char* const begin = p;
    while (p < end && !IsSpace(*p)) ++p;
    if (p > begin) fields->emplace_back(begin, p - begin);
  }
}

}  // namespace

absl::StatusOr<std::vector<OcrWord>> ReadOcrFile(const std::string& path) {
  GzFile file(path);
  if (!file.is_open()) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }

  std::vector<OcrWord> words;
  std::string line;
  std::vector<absl::string_view> fields;
  fields.reserve(kFields + 1);
  int64_t line_number = 0;
  // next_id of the previous letter line; -1 when a new word starts.
  int64_t expected_id = -1;
  int64_t expected_line = 0;  // the line that promised expected_id
  auto error = [&](int64_t at, absl::string_view message) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", at, ": ", message));
  };

  while (file.ReadLine(&line)) {
    ++line_number;
    SplitFields(line, &fields);
    if (fields.empty()) continue;
    if (fields.size() != kFields) {
      return error(line_number, absl::StrCat("expected ", kFields,
                                             " fields, got ", fields.size()));
    }
    int64_t id, next_id, word_id, position;
    int fold;
    if (!absl::SimpleAtoi(fields[0], &id) ||
        !absl::SimpleAtoi(fields[2], &next_id) ||
        !absl::SimpleAtoi(fields[3], &word_id) ||
        !absl::SimpleAtoi(fields[4], &position) ||
        !absl::SimpleAtoi(fields[5], &fold)) {
      return error(line_number,
                   "id, next_id, word_id, position and fold "
                   "must be integers");
    }
    const absl::string_view letter = fields[1];
    if (letter.size() != 1 || letter[0] < 'a' || letter[0] > 'z') {
      return error(line_number,
                   absl::StrCat("letter \"", letter, "\" is not one of a-z"));
    }
    if (expected_id != -1 && id != expected_id) {
      return error(expected_line,
                   absl::StrCat("next_id ", expected_id,
                                " but the following line has id ", id));
    }
    if (expected_id == -1) {
      words.emplace_back();
      words.back().fold = fold;
      words.back().first_line = line_number;
    } else if (fold != words.back().fold) {
      return error(line_number,
                   absl::StrCat("fold ", fold, " differs from the word's fold ",
                                words.back().fold));
    }
    OcrWord& word = words.back();
    word.letters.push_back(letter[0] - 'a');
    for (int k = kHeaderFields; k < kFields; ++k) {
      const absl::string_view pixel = fields[k];
      if (pixel.size() != 1 || (pixel[0] != '0' && pixel[0] != '1')) {
        return error(line_number,
                     absl::StrCat("pixel ", k - kHeaderFields, " is \"", pixel,
                                  "\", not 0 or 1"));
      }
      word.pixels.push_back(static_cast<uint8_t>(pixel[0] - '0'));
    }
    if (next_id != -1 && next_id <= 0) {
      return error(line_number, absl::StrCat("next_id ", next_id,
                                             " is neither -1 nor an id"));
    }
    expected_id = next_id;
    expected_line = line_number;
  }
  const std::string read_error = file.error();
  if (!read_error.empty()) {
    return absl::DataLossError(
        absl::StrCat(path, ":", line_number, ": read error: ", read_error));
  }
  if (expected_id != -1) {
    return error(expected_line,
                 absl::StrCat("next_id ", expected_id,
                              " but the file ends (last word unterminated)"));
  }
  return words;
}

}  // namespace chaintag
