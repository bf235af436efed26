// Document-level attributes for two-stage stacking (Krishnan & Manning
// 2006): a first-stage model labels every sentence of a document, and each
// token then gets four attributes that say what the rest of its document
// says about it, for the second stage's templates to read:
//
//   +0  the majority label of the other occurrences of the same word
//   +1  the same for the lowercased word
//   +2  the majority entity type of the other mentions with the surface
//       string of the entity the token is in
//   +3  the label ("B-TYPE" or "I-TYPE") the token has in the longest
//       entity elsewhere in the document that contains its word
//
// "Other" and "elsewhere" exclude the token's own position (and, for +2
// and +3, its own entity), so an attribute never restates the token's own
// first-stage label. Labels are IOB2; "-" stands for "no evidence". Ties
// go to the label that sorts first, so the result does not depend on
// hashing or order of sentences beyond their content.
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_FEATURES_DOCUMENT_FEATURES_H_
#define CHAINTAG_FEATURES_DOCUMENT_FEATURES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "corpora/sentence.h"

namespace chaintag {

constexpr int kNumDocumentAttributes = 4;
constexpr char kNoDocumentEvidence[] = "-";

// Appends the four attributes to every token of `document` (the sentences
// of one document, in order), computed from `labels`: per sentence, the
// first stage's labels in IOB2 (one per token). `word_attribute` is the
// attribute that holds the word. Fails, changing nothing, when the labels
// do not match the sentences or the word attribute is out of range.
absl::Status AppendDocumentAttributes(
    int word_attribute, const std::vector<std::vector<std::string>>& labels,
    absl::Span<Sentence> document);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_DOCUMENT_FEATURES_H_
