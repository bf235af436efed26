#include "corpora/tag_scheme.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace chaintag {
namespace {

struct SplitTag {
  absl::string_view prefix;
  absl::string_view type;
};

// conlleval: /^([^-]*)-(.*)$/ on the tag, else the whole tag is the prefix.
SplitTag Split(absl::string_view tag, absl::string_view outside) {
  if (tag == outside) return {"O", ""};
  const size_t dash = tag.find('-');
  if (dash == absl::string_view::npos) return {tag, ""};
  SplitTag split{tag.substr(0, dash), tag.substr(dash + 1)};
  // Perl truthiness: the script treats a type "0" as no type.
  if (split.type == "0") split.type = "";
  return split;
}

// The script's endOfChunk plus the IOBES rules it lacks (marked "S/E-B").
bool EndOfChunk(const SplitTag& prev, const SplitTag& cur) {
  const absl::string_view p = prev.prefix;
  const absl::string_view t = cur.prefix;
  if ((p == "B" || p == "I") && (t == "B" || t == "O")) return true;
  if (p == "E" && (t == "E" || t == "I" || t == "O")) return true;
  if (p == "S") return true;                                        // S/E-B
  if (t == "S" && (p == "B" || p == "I" || p == "E")) return true;  // S/E-B
  if (p == "E" && t == "B") return true;                            // S/E-B
  if (p != "O" && p != "." && prev.type != cur.type) return true;
  return p == "[" || p == "]";
}

// The script's startOfChunk plus the IOBES rules it lacks (marked "S/E-B").
bool StartOfChunk(const SplitTag& prev, const SplitTag& cur) {
  const absl::string_view p = prev.prefix;
  const absl::string_view t = cur.prefix;
  if (t == "B" && (p == "B" || p == "I" || p == "O")) return true;
  if ((p == "O" || p == "E") && (t == "I" || t == "E")) return true;
  if (t == "S") return true;                                        // S/E-B
  if (p == "S" && (t == "B" || t == "I" || t == "E")) return true;  // S/E-B
  if (p == "E" && t == "B") return true;                            // S/E-B
  if (t != "O" && t != "." && prev.type != cur.type) return true;
  return t == "[" || t == "]";
}

std::string Tag(absl::string_view prefix, absl::string_view type) {
  // Keep type-less chunks type-less ("B", not "B-"); both read the same.
  return type.empty() ? std::string(prefix) : absl::StrCat(prefix, "-", type);
}

}  // namespace

absl::StatusOr<TagScheme> ParseTagScheme(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "iob1") return IOB1;
  if (lower == "iob2") return IOB2;
  if (lower == "iobes") return IOBES;
  if (lower == "none") return NONE;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tag scheme \"", name,
                   "\" (expected iob1, iob2, iobes or none)"));
}

absl::string_view TagSchemeName(TagScheme scheme) {
  switch (scheme) {
    case IOB1:
      return "iob1";
    case IOB2:
      return "iob2";
    case IOBES:
      return "iobes";
    case NONE:
      return "none";
    case TAG_SCHEME_UNSPECIFIED:
      break;
  }
  return "unspecified";
}

std::vector<Chunk> ExtractChunks(const std::vector<std::string>& tags,
                                 absl::string_view outside) {
  std::vector<Chunk> chunks;
  const int n = static_cast<int>(tags.size());
  SplitTag prev{"O", ""};
  bool open = false;
  int begin = 0;
  absl::string_view type;
  for (int i = 0; i < n; ++i) {
    const SplitTag cur = Split(tags[i], outside);
    const bool start = StartOfChunk(prev, cur);
    // A start without an end (e.g. "B" after an untyped "NN") still closes
    // the open chunk: conlleval counts one chunk per start.
    if (open && (start || EndOfChunk(prev, cur))) {
      chunks.push_back({begin, i, std::string(type)});
      open = false;
    }
    if (start) {
      open = true;
      begin = i;
      type = cur.type;
    }
    prev = cur;
  }
  if (open) chunks.push_back({begin, n, std::string(type)});
  return chunks;
}

std::vector<std::string> ConvertTags(const std::vector<std::string>& tags,
                                     TagScheme from, TagScheme to,
                                     absl::string_view outside) {
  auto chunked = [](TagScheme s) {
    return s == IOB1 || s == IOB2 || s == IOBES;
  };
  if (!chunked(from) || !chunked(to)) return tags;

  const std::vector<Chunk> chunks = ExtractChunks(tags, outside);
  std::vector<std::string> out(tags.size(), std::string(outside));
  for (size_t c = 0; c < chunks.size(); ++c) {
    const Chunk& chunk = chunks[c];
    const int len = chunk.end - chunk.begin;
    for (int i = chunk.begin; i < chunk.end; ++i) {
      absl::string_view prefix = "I";
      switch (to) {
        case IOB1:
          // B- only where the chunk directly follows one of the same type.
          if (i == chunk.begin && c > 0 && chunks[c - 1].end == chunk.begin &&
              chunks[c - 1].type == chunk.type) {
            prefix = "B";
          }
          break;
        case IOB2:
          if (i == chunk.begin) prefix = "B";
          break;
        case IOBES:
          if (len == 1) {
            prefix = "S";
          } else if (i == chunk.begin) {
            prefix = "B";
          } else if (i == chunk.end - 1) {
            prefix = "E";
          }
          break;
        default:
          break;
      }
      out[i] = Tag(prefix, chunk.type);
    }
  }
  return out;
}

void TagSchemeInference::Add(const std::vector<std::string>& tags) {
  SplitTag prev{"O", ""};
  for (const std::string& tag : tags) {
    if (tag == "O") {
      prev = {"O", ""};
      continue;
    }
    const bool chunk_prefix = !tag.empty() && (tag[0] == 'B' || tag[0] == 'I' ||
                                               tag[0] == 'E' || tag[0] == 'S');
    if (!chunk_prefix || (tag.size() > 1 && tag[1] != '-')) {
      if (plain_label_.empty()) plain_label_ = tag.empty() ? "''" : tag;
      prev = Split(tag, "O");
      continue;
    }
    chunk_tags_ = true;
    if (tag.size() > 2) typed_ = true;
    if (tag[0] == 'E' || tag[0] == 'S') iobes_ = true;
    const SplitTag cur = Split(tag, "O");
    if (StartOfChunk(prev, cur)) {
      if (tag[0] == 'B') ++begins_with_b_;
      if (tag[0] == 'I') ++begins_with_i_;
    }
    prev = cur;
  }
}

TagScheme TagSchemeInference::scheme() const {
  if (!chunk_tags_ || !plain_label_.empty()) return NONE;
  if (iobes_) return IOBES;
  return begins_with_i_ > begins_with_b_ ? IOB1 : IOB2;
}

}  // namespace chaintag
