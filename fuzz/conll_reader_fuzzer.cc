// Fuzz target for the CoNLL column reader (corpora/conll_reader.h), which
// reads every training, test and tagging input, and the tag-scheme code
// that runs on what it reads (corpora/tag_scheme.h). Beyond crashes it
// checks the sentences' shape against the resolved layout, that an error
// sticks, and that re-encoding a sentence's tags in another chunk scheme
// keeps its chunks, as tag_scheme.h promises.
//
// Input: two option bytes (label column, allow_missing_label, how many
// explicit attribute columns, the tag scheme), one byte per explicit
// attribute column, then the file's text, read through the stream API.
// The text is read again as a CRFsuite attribute file (ConllFormat::
// CRFSUITE), whose sentences' attribute lists are checked for shape: every
// token's range, non-empty names without TABs, finite values.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "corpora/conll_reader.h"
#include "corpora/corpus.pb.h"
#include "corpora/tag_scheme.h"
#include "fuzz/fuzz_util.h"

namespace chaintag {
namespace {

constexpr int kLabelColumns[] = {-1, -2, -3, 0, 1, 2, 3, 7};
constexpr TagScheme kSchemes[] = {IOB1, IOB2, IOBES, NONE};

void CheckSentence(const ConllReader& reader, const Sentence& s) {
  const int n = s.size();
  FUZZ_CHECK(n > 0);
  FUZZ_CHECK(s.num_attributes ==
             reader.resolved_format().attribute_columns_size());
  FUZZ_CHECK(s.attributes.size() == static_cast<size_t>(n) * s.num_attributes);
  FUZZ_CHECK(s.lines.size() == static_cast<size_t>(n));
  FUZZ_CHECK(s.tags.size() ==
             (reader.has_labels() ? static_cast<size_t>(n) : size_t{0}));
  for (const std::string& a : s.attributes) FUZZ_CHECK(!a.empty());
}

void CheckItemSentence(const Sentence& s) {
  const int n = s.size();
  FUZZ_CHECK(n > 0);
  FUZZ_CHECK(s.num_attributes == 0 && s.attributes.empty() && s.lines.empty());
  FUZZ_CHECK(s.tags.size() == static_cast<size_t>(n));
  FUZZ_CHECK(s.item_begin.size() == static_cast<size_t>(n) + 1);
  FUZZ_CHECK(s.item_begin[0] == 0 && s.item_begin[n] == s.num_items());
  for (int t = 0; t < n; ++t)
    FUZZ_CHECK(s.item_begin[t] <= s.item_begin[t + 1]);
  FUZZ_CHECK(s.item_values.empty() ||
             s.item_values.size() == static_cast<size_t>(s.num_items()));
  int32_t previous = 0;
  for (int k = 0; k < s.num_items(); ++k) {
    FUZZ_CHECK(s.item_name_ends[k] > previous);  // no empty name
    previous = s.item_name_ends[k];
    FUZZ_CHECK(s.item_name(k).find('\t') == absl::string_view::npos);
    FUZZ_CHECK(std::isfinite(s.item_value(k)));
  }
  FUZZ_CHECK(static_cast<size_t>(previous) == s.item_names.size());
}

void ReadCrfsuite(const std::string& text) {
  ConllFormat format;
  format.set_layout(ConllFormat::CRFSUITE);
  std::istringstream input(text);
  ConllReader reader(&input, "fuzz", format);
  ConllReader::Item item;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&item);
    if (!more.ok()) {
      absl::StatusOr<bool> again = reader.Next(&item);
      FUZZ_CHECK(!again.ok() && again.status() == more.status());
      FUZZ_CHECK(more.status().message().substr(0, 5) == "fuzz:");
      return;
    }
    if (!*more) return;
    FUZZ_CHECK(item.kind == ConllReader::Item::kSentence);
    CheckItemSentence(item.sentence);
  }
}

void CheckSchemes(const std::vector<std::string>& tags, TagScheme from) {
  const std::vector<Chunk> chunks = ExtractChunks(tags);
  for (TagScheme to : {IOB1, IOB2, IOBES}) {
    const std::vector<std::string> converted = ConvertTags(tags, from, to);
    FUZZ_CHECK(converted.size() == tags.size());
    if (from == NONE) {
      FUZZ_CHECK(converted == tags);
    } else {
      FUZZ_CHECK(ExtractChunks(converted) == chunks);
      // Canonical: converting again changes nothing.
      FUZZ_CHECK(ConvertTags(converted, to, to) == converted);
    }
  }
}

}  // namespace
}  // namespace chaintag

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  fuzzing::FuzzBytes bytes(data, size);
  const uint8_t option = bytes.Byte();
  ConllFormat format;
  format.set_label_column(kLabelColumns[option & 7]);
  format.set_allow_missing_label((option & 8) != 0);
  const int explicit_columns = (option >> 4) & 3;
  format.set_tag_scheme(kSchemes[option >> 6]);
  for (int k = 0; k < explicit_columns; ++k) {
    format.add_attribute_columns(bytes.Below(6) - 1);  // -1 .. 4
  }
  const std::string text(bytes.remaining());
  ReadCrfsuite(text);
  std::istringstream input{text};

  ConllReader reader(&input, "fuzz", format);
  ConllReader::Item item;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&item);
    if (!more.ok()) {
      absl::StatusOr<bool> again = reader.Next(&item);
      FUZZ_CHECK(!again.ok() && again.status() == more.status());
      break;
    }
    if (!*more) break;
    if (item.kind == ConllReader::Item::kDocStart) {
      FUZZ_CHECK(item.line.find("-DOCSTART-") != std::string::npos);
      continue;
    }
    CheckSentence(reader, item.sentence);
    CheckSchemes(item.sentence.tags, format.tag_scheme());
  }
  return 0;
}
