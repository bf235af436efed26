// Tag-scheme-constrained decoding: which labels may start a sentence, follow
// one another and end a sentence in a chunk tag scheme, and a copy of a
// chain's start/transition/end scores with −∞ wherever that is forbidden, so
// that the unchanged ViterbiDecoder and TopKViterbi (models/viterbi.h,
// models/top_k_viterbi.h) decode only valid labelings. The unary scores are
// not copied; a valid labeling scores exactly what it scores unconstrained.
//
// Labels are read as conlleval reads tags (corpora/tag_scheme.h): a label
// equal to the outside tag ("O") is outside; any other label is split at its
// first '-' into prefix and type ("B-NP" -> B, "NP"; "B" or "B-" -> B with an
// empty type, as is type "0"), and types are compared as strings. The
// prefixes a scheme knows are B and I (IOB1, IOB2) or B, I, E and S (IOBES).
// A label whose prefix the scheme does not know ("NN", "E-X" under IOB2, a
// literal "O" when the outside tag is something else) is treated exactly
// like the outside tag. The rules, for X a type and * any type:
//
//   IOB2   I-X only right after B-X or I-X: never at the start of a sentence,
//          after O, or after a label of another type. Anything may end.
//   IOB1   as conlleval reads IOB1 (and ConvertTags writes it): I-X may
//          start a chunk anywhere (at the start of a sentence, after O or
//          after another type); B-X only right after B-X or I-X of the same
//          type X (it separates two adjacent chunks of one type), so never
//          at the start of a sentence or after O. Anything may end.
//   IOBES  B-X, S-X and O may start. After B-X or I-X only I-X or E-X of the
//          same type X; after E-X, S-X or O only B-*, S-* or O. A sentence
//          must end on E-X, S-X or O.
//   NONE, TAG_SCHEME_UNSPECIFIED: everything is valid (no constraint).
//
// These are exactly the labelings that ConvertTags(tags, s, s) leaves
// unchanged (its canonical form in scheme s) when every label is the
// outside tag or a known prefix with a type.
//
// Thread-safety: TransitionConstraints is immutable after construction; its
// const methods are safe from any thread. A ConstrainedScoresBuffer belongs
// to one thread.

#ifndef CHAINTAG_MODELS_TRANSITION_CONSTRAINTS_H_
#define CHAINTAG_MODELS_TRANSITION_CONSTRAINTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "corpora/corpus.pb.h"
#include "models/viterbi.h"

namespace chaintag {

// How a label reads in a scheme: outside, or a prefix with a type.
struct SchemeLabel {
  enum class Kind { kOutside, kBegin, kInside, kEnd, kSingle };
  Kind kind = Kind::kOutside;
  std::string type;  // empty for kOutside
};

// Reads `label` in `scheme` by the rules above. Under NONE and
// TAG_SCHEME_UNSPECIFIED every label is kOutside.
SchemeLabel ParseSchemeLabel(absl::string_view label, TagScheme scheme,
                             absl::string_view outside = "O");

// Owned storage for the constrained start/transition/end scores; reused from
// one sentence to the next (it only grows).
struct ConstrainedScoresBuffer {
  std::vector<double> transition;
  std::vector<double> start;
  std::vector<double> end;
};

class TransitionConstraints {
 public:
  // No labels, no constraint.
  TransitionConstraints() = default;
  // The constraints of `scheme` over `labels` (label names in id order, in
  // that scheme).
  TransitionConstraints(const std::vector<std::string>& labels,
                        TagScheme scheme, absl::string_view outside = "O");

  int num_labels() const { return num_labels_; }
  TagScheme scheme() const { return scheme_; }
  // True when every start, transition and end is allowed (NONE, or a label
  // set the scheme does not restrict, such as {"O"}); Apply then returns the
  // scores as given, without copying.
  bool trivial() const { return trivial_; }

  // Require 0 <= y, prev, next < num_labels().
  bool start_allowed(int y) const { return start_[y] != 0; }
  bool transition_allowed(int prev, int next) const {
    return transition_[static_cast<size_t>(prev) * num_labels_ + next] != 0;
  }
  bool end_allowed(int y) const { return end_[y] != 0; }

  // Whether `labels[0..length)` is valid: allowed start, transitions and
  // end. The empty labeling is valid. Requires ids in [0, num_labels()).
  bool IsValid(const int32_t* labels, int length) const;

  // `scores` with start, transition and end copied into `buffer` and set to
  // −∞ where forbidden; unary, length and num_labels are `scores`' own.
  // The result points into `buffer` (and `scores`' unary): it is valid until
  // `buffer` is next used or destroyed. Trivial constraints return `scores`
  // itself. Fails when scores.num_labels != num_labels().
  //
  // Decoding the result: ViterbiDecoder returns the best valid labeling (its
  // score is −∞ only when no labeling of that length is valid, and the
  // labeling is then meaningless); TopKViterbi returns only valid labelings,
  // fewer than k when fewer exist, none when none does.
  absl::StatusOr<ChainScores> Apply(const ChainScores& scores,
                                    ConstrainedScoresBuffer* buffer) const;

 private:
  int num_labels_ = 0;
  TagScheme scheme_ = NONE;
  bool trivial_ = true;
  // 1 where allowed: start_[y], transition_[prev * L + next], end_[y].
  std::vector<uint8_t> start_;
  std::vector<uint8_t> transition_;
  std::vector<uint8_t> end_;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_TRANSITION_CONSTRAINTS_H_
