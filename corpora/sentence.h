// Sentence: one sequence of tokens as read from a corpus, with its attribute
// columns, its gold tags (when the input has them) and where it came from.
//
// Thread-safety: a plain value type; const access is safe from any thread.

#ifndef CHAINTAG_CORPORA_SENTENCE_H_
#define CHAINTAG_CORPORA_SENTENCE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace chaintag {

struct Sentence {
  // Attribute columns per token, row-major: attributes[t * num_attributes + a]
  // is attribute a (in the order the ConllFormat lists them) of token t.
  int num_attributes = 0;
  std::vector<std::string> attributes;

  // Gold tags, one per token; empty when the input has no label column.
  std::vector<std::string> tags;

  // The token lines exactly as read (line terminator and CR removed), so
  // that a tagger can echo them with its prediction appended.
  std::vector<std::string> lines;

  // Where the sentence came from, for error messages.
  std::string source;
  int64_t first_line = 0;

  // Its document's index in the input (ConllFormat says what starts one):
  // the document-level features compare a sentence with the others of its
  // document. 0 when the input marks no documents.
  int64_t document = 0;

  int size() const {
    return num_attributes == 0
               ? 0
               : static_cast<int>(attributes.size()) / num_attributes;
  }
  bool has_tags() const { return !tags.empty(); }
  const std::string& attribute(int t, int a) const {
    return attributes[static_cast<size_t>(t) * num_attributes + a];
  }
};

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_SENTENCE_H_
