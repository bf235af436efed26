// Sentences for tests, built from strings: one attribute a token (the
// word), or a row of attributes per token.
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_CORPORA_SENTENCE_TESTING_H_
#define CHAINTAG_CORPORA_SENTENCE_TESTING_H_

#include <string>
#include <vector>

#include "corpora/sentence.h"

namespace chaintag {
namespace sentence_testing {

// A sentence whose tokens have the one attribute `words[t]`.
inline Sentence WordSentence(const std::vector<std::string>& words) {
  Sentence sentence;
  sentence.num_attributes = 1;
  sentence.attributes = words;
  return sentence;
}

// A sentence whose token t has the attributes rows[t] (all rows alike long).
inline Sentence RowSentence(const std::vector<std::vector<std::string>>& rows) {
  Sentence sentence;
  sentence.num_attributes = rows.empty() ? 0 : static_cast<int>(rows[0].size());
  for (const auto& row : rows) {
    for (const auto& attribute : row) sentence.attributes.push_back(attribute);
  }
  return sentence;
}

}  // namespace sentence_testing
}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_SENTENCE_TESTING_H_
