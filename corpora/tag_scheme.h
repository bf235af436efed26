// Chunk tag schemes (IOB1, IOB2, IOBES): parsing their names, reading chunks
// out of a tag sequence the way the conlleval script does, and re-encoding a
// sequence from one scheme into another without changing its chunks.
//
// Thread-safety: stateless free functions; safe from any thread.

#ifndef CHAINTAG_CORPORA_TAG_SCHEME_H_
#define CHAINTAG_CORPORA_TAG_SCHEME_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "corpora/corpus.pb.h"

namespace chaintag {

// "iob1", "iob2", "iobes", "none", case-insensitive.
absl::StatusOr<TagScheme> ParseTagScheme(absl::string_view name);

// The lower-case name ParseTagScheme accepts ("unspecified" for
// TAG_SCHEME_UNSPECIFIED).
absl::string_view TagSchemeName(TagScheme scheme);

// A chunk covering tokens [begin, end).
struct Chunk {
  int begin = 0;
  int end = 0;
  std::string type;

  bool operator==(const Chunk& other) const {
    return begin == other.begin && end == other.end && type == other.type;
  }
  bool operator!=(const Chunk& other) const { return !(*this == other); }
};

// The chunks conlleval finds in `tags` (one sentence), in order. A tag is
// split at its first '-' into prefix and type ("B-NP" -> "B", "NP"; a tag
// without '-' has an empty type, as has type "0"); a tag equal to `outside`
// counts as "O". Chunk starts and ends follow the script's (2004-01-26)
// startOfChunk/endOfChunk rules for B, I, E, O, '.', '[' and ']', extended
// only where the script cannot read IOBES: S-X always starts and ends a
// chunk, and E-X followed by B-X splits (the script merges "S-X S-X" and
// "E-X B-X" of one type). So on sequences of B, I, E and O tags without S
// and without E-X B-X, and in particular on any IOB1/IOB2 sequence, valid or
// not, the chunks are exactly the script's (ConllevalScorer's); score IOBES
// output after converting it to IOB2. Any sequence is accepted. A chunk
// still open at the end of the sentence ends there (the script can carry a
// chunk opened by an odd prefix such as "NN" or "." across the boundary); a
// start inside an open chunk ends it (one chunk per start, as the script
// counts them).
std::vector<Chunk> ExtractChunks(const std::vector<std::string>& tags,
                                 absl::string_view outside = "O");

// Re-encodes `tags` in scheme `to`, chunk for chunk: ExtractChunks gives the
// same result before and after. The result is always valid in `to`, also
// when `from == to` (the sequence is then canonicalised) or when `tags` is
// invalid. Tokens outside every chunk become `outside`. When either scheme is
// NONE or TAG_SCHEME_UNSPECIFIED, `tags` is returned unchanged. `from` only
// matters for that check: conlleval reads all schemes alike.
std::vector<std::string> ConvertTags(const std::vector<std::string>& tags,
                                     TagScheme from, TagScheme to,
                                     absl::string_view outside = "O");

// How a corpus's labels are encoded, read from the labels themselves (for a
// config that names no tag scheme). The labels are chunk tags when every one
// is "O" or B, I, E or S, alone (an untyped chunk tag, "B") or followed by
// '-' and a type ("B-NP"), and some are not "O". Chunk tags are IOBES when
// some begin with E or S; otherwise IOB1 when more chunks begin with I than
// with B (IOB1 writes B only where a chunk follows one of its type), else
// IOB2. Other labels (POS tags, characters, letters) are NONE: plain labels,
// scored by token accuracy. The scheme never changes the chunks conlleval
// reads, only how predictions are written back and which transitions are
// valid.
//
//   TagSchemeInference inference;
//   for (const Sentence& s : train) inference.Add(s.tags);
//   format.set_tag_scheme(inference.scheme());
class TagSchemeInference {
 public:
  // The tags of one sentence, in order.
  void Add(const std::vector<std::string>& tags);

  TagScheme scheme() const;
  // Some chunk tag has a type ("B-NP"); false for B/I/O alone, whose chunks
  // are all of one (empty) type.
  bool typed() const { return typed_; }
  // The first label that is not a chunk tag ("" when there is none).
  const std::string& plain_label() const { return plain_label_; }
  // Chunks (conlleval's starts) whose first tag is B, and I.
  int64_t begins_with_b() const { return begins_with_b_; }
  int64_t begins_with_i() const { return begins_with_i_; }

 private:
  bool typed_ = false;
  bool chunk_tags_ = false;  // some label is a chunk tag other than "O"
  bool iobes_ = false;
  int64_t begins_with_b_ = 0;
  int64_t begins_with_i_ = 0;
  std::string plain_label_;
};

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_TAG_SCHEME_H_
