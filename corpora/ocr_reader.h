// Reader for Taskar's OCR data set (letter.data): one handwritten letter per
// line, 16x8 binary pixels, letters chained into words by next_id. Reads the
// plain file or its gzip transparently.
//
// Thread-safety: stateless free function; safe from any thread.

#ifndef CHAINTAG_CORPORA_OCR_READER_H_
#define CHAINTAG_CORPORA_OCR_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace chaintag {

inline constexpr int kOcrPixelsPerLetter = 16 * 8;

struct OcrWord {
  std::vector<int> letters;     // 0..25 = 'a'..'z'
  std::vector<uint8_t> pixels;  // letters.size() * 128 values 0/1, in the
                                // file's order (p_0_0 ... p_15_7, row-major)
  int fold = 0;
  int64_t first_line = 0;  // 1-based line of the word's first letter
};

// Reads every word of `path` (letter.data or letter.data.gz). Lines are
// `id letter next_id word_id position fold p_0_0 ... p_15_7`, separated by
// whitespace. Errors (naming path:line) on a wrong field count, a letter
// outside a-z, a pixel other than 0/1, a non-numeric id, a next_id that is
// not the following line's id (or -1 at a word's end), a fold that changes
// within a word, or a file that cannot be opened.
absl::StatusOr<std::vector<OcrWord>> ReadOcrFile(const std::string& path);

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_OCR_READER_H_
