// Chunk tag schemes (IOB1, IOB2, IOBES): parsing their names, reading chunks
// out of a tag sequence the way the conlleval script does, and re-encoding a
// sequence from one scheme into another without changing its chunks.
//
// Thread-safety: stateless free functions; safe from any thread.

#ifndef CHAINTAG_CORPORA_TAG_SCHEME_H_
#define CHAINTAG_CORPORA_TAG_SCHEME_H_

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

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_TAG_SCHEME_H_
