// Fuzz target for the OCR letter.data(.gz) reader (corpora/ocr_reader.h).
// The reader takes a path only (zlib reads the plain file or its gzip), so
// the input is written to a per-process temporary file; gzip inputs are
// fuzzed too. Beyond crashes it checks the words' shape: letters in a-z,
// 128 pixels of 0/1 per letter, lines in order.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "corpora/ocr_reader.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  static fuzzing::TempFile file("ocr_reader");
  absl::StatusOr<std::vector<OcrWord>> words =
      ReadOcrFile(file.Write(fuzzing::AsText(data, size)));
  if (!words.ok()) return 0;
  int64_t previous_line = 0;
  for (const OcrWord& word : *words) {
    FUZZ_CHECK(!word.letters.empty());
    FUZZ_CHECK(word.pixels.size() == word.letters.size() * kOcrPixelsPerLetter);
    for (int letter : word.letters) FUZZ_CHECK(letter >= 0 && letter < 26);
    for (uint8_t pixel : word.pixels) FUZZ_CHECK(pixel <= 1);
    FUZZ_CHECK(word.first_line > previous_line);
    previous_line = word.first_line;
  }
  return 0;
}
