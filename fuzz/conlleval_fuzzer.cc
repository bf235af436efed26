// Fuzz target for the conlleval-exact scorer (corpora/conlleval.h), which
// reads `evaluate`'s stdin line by line. Beyond crashes it checks the
// counts' invariants (a correct chunk is a found and a gold chunk overall;
// the per-type counts add up) and that AddSentence counts exactly as the
// equivalent "w gold guess" lines do, as the header promises.
//
// Input: an option byte (raw mode; the delimiter: blanks, a literal, a
// fixed pattern, or up to 7 bytes of the input as an RE2 pattern), then
// the lines.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "corpora/conlleval.h"
#include "fuzz/fuzz_util.h"

namespace chaintag {
namespace {

constexpr const char* kDelimiters[] = {"",       " ",  "\t", "\\s+",
                                       "[ \t]+", " *", "x*", "(?i)"};

void CheckCounts(const ConllevalScorer& scorer) {
  const ChunkCounts overall = scorer.overall();
  FUZZ_CHECK(0 <= overall.correct && overall.correct <= overall.found);
  FUZZ_CHECK(overall.correct <= overall.gold);
  FUZZ_CHECK(0 <= scorer.correct_tags() &&
             scorer.correct_tags() <= scorer.tokens());
  ChunkCounts sum;
  // Not per type: as the script, a chunk still open at the end counts as
  // correct under the last gold type, which a tag such as "O-NP" sets
  // without starting a chunk, so a type's correct can exceed its found.
  for (const auto& [type, counts] : scorer.by_type()) {
    sum.correct += counts.correct;
    sum.gold += counts.gold;
    sum.found += counts.found;
  }
  FUZZ_CHECK(sum.correct == overall.correct && sum.gold == overall.gold &&
             sum.found == overall.found);
  for (double v :
       {scorer.precision(), scorer.recall(), scorer.f1(), scorer.accuracy()}) {
    FUZZ_CHECK(std::isfinite(v) && v >= 0 && v <= 100);
  }
}

bool SameCounts(const ConllevalScorer& a, const ConllevalScorer& b) {
  auto same = [](const ChunkCounts& x, const ChunkCounts& y) {
    return x.correct == y.correct && x.gold == y.gold && x.found == y.found;
  };
  if (!same(a.overall(), b.overall()) || a.tokens() != b.tokens() ||
      a.correct_tags() != b.correct_tags()) {
    return false;
  }
  const auto types_a = a.by_type();
  const auto types_b = b.by_type();
  if (types_a.size() != types_b.size()) return false;
  for (auto i = types_a.begin(), j = types_b.begin(); i != types_a.end();
       ++i, ++j) {
    if (i->first != j->first || !same(i->second, j->second)) return false;
  }
  return a.Report() == b.Report();
}

}  // namespace
}  // namespace chaintag

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  fuzzing::FuzzBytes bytes(data, size);
  const uint8_t option = bytes.Byte();
  ConllevalOptions options;
  options.raw = (option & 1) != 0;
  const int delimiter = (option >> 1) & 15;
  if (delimiter < 8) {
    options.delimiter = kDelimiters[delimiter];
  } else {
    for (int k = 0; k < delimiter - 8; ++k) {
      options.delimiter.push_back(static_cast<char>(bytes.Byte()));
    }
  }
  if ((option & 0x80) != 0) options.outside = "NONE";
  const absl::string_view text = bytes.remaining();

  // The input as the script reads it.
  ConllevalScorer scorer(options);
  scorer.set_source("fuzz");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    scorer.AddLine(line).IgnoreError();
  }
  scorer.Finish();
  CheckCounts(scorer);
  (void)scorer.Report();
  (void)scorer.LatexReport();

  // AddSentence against the lines it is documented to equal: the last two
  // blank-separated fields of every line of two or more, sentences ending
  // at blank lines and -X- lines.
  ConllevalOptions blank_options = options;
  blank_options.delimiter.clear();
  ConllevalScorer by_lines(blank_options);
  ConllevalScorer by_sentences(blank_options);
  std::vector<std::string> gold, guessed;
  auto end_sentence = [&]() {
    if (gold.empty()) return;
    for (size_t t = 0; t < gold.size(); ++t) {
      // AddLine drops one trailing '\r': add one, so a tag's own stays.
      FUZZ_CHECK(
          by_lines.AddLine(absl::StrCat("w ", gold[t], " ", guessed[t], "\r"))
              .ok());
    }
    FUZZ_CHECK(by_lines.AddLine("").ok());
    by_sentences.AddSentence(gold, guessed);
    gold.clear();
    guessed.clear();
  };
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.empty() || fields[0] == "-X-") {
      end_sentence();
    } else if (fields.size() >= 2) {
      gold.emplace_back(fields[fields.size() - 2]);
      guessed.emplace_back(fields.back());
    }
  }
  end_sentence();
  by_lines.Finish();
  by_sentences.Finish();
  FUZZ_CHECK(SameCounts(by_lines, by_sentences));
  return 0;
}
