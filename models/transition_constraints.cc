#include "models/transition_constraints.h"

#include <cstddef>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace chaintag {
namespace {

using Kind = SchemeLabel::Kind;

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

bool IsChunkScheme(TagScheme scheme) {
  return scheme == IOB1 || scheme == IOB2 || scheme == IOBES;
}

// B-X or I-X: a chunk is open and continues into the next token.
bool OpensInto(const SchemeLabel& label) {
  return label.kind == Kind::kBegin || label.kind == Kind::kInside;
}

bool StartAllowed(TagScheme scheme, const SchemeLabel& y) {
  switch (scheme) {
    case IOB1:
      return y.kind != Kind::kBegin;
    case IOB2:
      return y.kind != Kind::kInside;
    case IOBES:
      return y.kind == Kind::kBegin || y.kind == Kind::kSingle ||
             y.kind == Kind::kOutside;
    default:
      return true;
  }
}

bool TransitionAllowed(TagScheme scheme, const SchemeLabel& prev,
                       const SchemeLabel& next) {
  const bool continues = OpensInto(prev) && prev.type == next.type;
  switch (scheme) {
    case IOB1:
      return next.kind != Kind::kBegin || continues;
    case IOB2:
      return next.kind != Kind::kInside || continues;
    case IOBES:
      if (OpensInto(prev)) {
        return continues &&
               (next.kind == Kind::kInside || next.kind == Kind::kEnd);
      }
      return next.kind == Kind::kBegin || next.kind == Kind::kSingle ||
             next.kind == Kind::kOutside;
    default:
      return true;
  }
}

bool EndAllowed(TagScheme scheme, const SchemeLabel& y) {
  if (scheme != IOBES) return true;
  return y.kind == Kind::kEnd || y.kind == Kind::kSingle ||
         y.kind == Kind::kOutside;
}

}  // namespace

SchemeLabel ParseSchemeLabel(absl::string_view label, TagScheme scheme,
                             absl::string_view outside) {
  SchemeLabel parsed;
  if (!IsChunkScheme(scheme) || label == outside) return parsed;
  const size_t dash = label.find('-');
  const absl::string_view prefix = label.substr(0, dash);
  absl::string_view type = dash == absl::string_view::npos
                               ? absl::string_view()
                               : label.substr(dash + 1);
  // conlleval (Perl truthiness) reads a type "0" as no type.
  if (type == "0") type = absl::string_view();
  Kind kind;
  if (prefix == "B") {
    kind = Kind::kBegin;
  } else if (prefix == "I") {
    kind = Kind::kInside;
  } else if (scheme == IOBES && prefix == "E") {
    kind = Kind::kEnd;
  } else if (scheme == IOBES && prefix == "S") {
    kind = Kind::kSingle;
  } else {
    return parsed;  // an unknown prefix reads as outside
  }
  parsed.kind = kind;
  parsed.type = std::string(type);
  return parsed;
}

TransitionConstraints::TransitionConstraints(
    const std::vector<std::string>& labels, TagScheme scheme,
    absl::string_view outside)
    : num_labels_(static_cast<int>(labels.size())), scheme_(scheme) {
  const int L = num_labels_;
  std::vector<SchemeLabel> parsed;
  parsed.reserve(L);
  for (const std::string& label : labels) {
    parsed.push_back(ParseSchemeLabel(label, scheme, outside));
  }
  start_.resize(L);
  end_.resize(L);
  transition_.resize(static_cast<size_t>(L) * L);
  trivial_ = true;
  for (int y = 0; y < L; ++y) {
    start_[y] = StartAllowed(scheme, parsed[y]) ? 1 : 0;
    end_[y] = EndAllowed(scheme, parsed[y]) ? 1 : 0;
    trivial_ = trivial_ && start_[y] != 0 && end_[y] != 0;
    for (int next = 0; next < L; ++next) {
      const uint8_t allowed =
          TransitionAllowed(scheme, parsed[y], parsed[next]) ? 1 : 0;
      transition_[static_cast<size_t>(y) * L + next] = allowed;
      trivial_ = trivial_ && allowed != 0;
    }
  }
}

bool TransitionConstraints::IsValid(const int32_t* labels, int length) const {
  if (length == 0) return true;
  if (!start_allowed(labels[0]) || !end_allowed(labels[length - 1])) {
    return false;
  }
  for (int t = 1; t < length; ++t) {
    if (!transition_allowed(labels[t - 1], labels[t])) return false;
  }
  return true;
}

absl::StatusOr<ChainScores> TransitionConstraints::Apply(
    const ChainScores& scores, ConstrainedScoresBuffer* buffer) const {
  if (scores.num_labels != num_labels_) {
    return absl::InvalidArgumentError(
        absl::StrCat("the chain has ", scores.num_labels,
                     " labels, the transition constraints ", num_labels_));
  }
  if (trivial_) return scores;
  const int L = num_labels_;
  const size_t squared = static_cast<size_t>(L) * L;
  buffer->transition.resize(squared);
  buffer->start.resize(L);
  buffer->end.resize(L);
  for (size_t k = 0; k < squared; ++k) {
    buffer->transition[k] =
        transition_[k] != 0 ? scores.transition[k] : kMinusInfinity;
  }
  for (int y = 0; y < L; ++y) {
    buffer->start[y] = start_[y] != 0 ? scores.start[y] : kMinusInfinity;
    buffer->end[y] = end_[y] != 0 ? scores.end[y] : kMinusInfinity;
  }
  ChainScores constrained = scores;
  constrained.transition = buffer->transition.data();
  constrained.start = buffer->start.data();
  constrained.end = buffer->end.data();
  return constrained;
}

}  // namespace chaintag
