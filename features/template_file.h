// CRF++ template files and Wapiti pattern files as chaintag feature
// templates.
//
// A line is a template: its first character says which kind, the rest is
// literal text with macros, expanded at each position as CRF++ and Wapiti
// expand it ("U05:%x[-1,0]/%x[0,0]" -> "U05:He/reckons").
//   U, u   a unigram template -> FeatureConfig.templates
//   B, b   with macros: an observation-conditioned transition
//          -> FeatureConfig.pair_templates; without macros (a bare "B"):
//          the label-transition matrix every chaintag model has, recorded
//          as plain_transitions and adding nothing
//   *      (Wapiti) both: a unigram and a bigram template
// Macros (row = offset from the position, col = attribute index; the CoNLL
// format's attribute_columns should list the file's columns in order, so
// that CRF++'s column c is attribute c):
//   %x[row,col]        the value                           (IDENTITY)
//   %X[row,col]        (Wapiti) the value, ASCII-lowercased (lowercase)
//   %t[row,col,"re"]   "true" / "false": does re match      (REGEX_TEST)
//   %m[row,col,"re"]   the leftmost match of re, "" if none (REGEX_MATCH)
// %T is %t (its values are lower case already). Blanks may come before the
// row and before the column ("%x[ 0, 0]", as Wapiti's shipped pattern files
// write them; Wapiti reads "[%i,%u"), nowhere else inside the brackets.
// Wapiti's %M (the match lowercased), `@` (absolute) and `*` (indirect) rows
// are refused, naming the file, line and column. Text
// before the first macro (the identifier, "U01:") and between macros
// becomes the template's literals; the template's name is the whole line.
// Blank lines are skipped; `#` at the start of a line, or after a blank,
// begins a comment (CRF++ allows them only at the start, Wapiti anywhere;
// a `#` inside text, "U:a#b", or inside a quoted regex is text). Trailing
// blanks and a CR are dropped. Positions outside the sentence read the
// config's boundary markers: NUMBERED spells them as CRF++ ("_B-1", "_B+1"),
// WAPITI as Wapiti ("_x-1" ... "_x-4", "_x-#"); Wapiti applies %t and %m to
// the marker, and so does chaintag.
//
// Regular expressions are RE2, partial (unanchored) match. Wapiti's own
// dialect is a small subset; in RE2 its pieces are written:
//   .  ^  $  x*  x?  \. (escapes)     the same in RE2
//   \d \D \s \S                        the same (RE2's \s lacks \v)
//   \a \A  (alpha)                     [[:alpha:]] [^[:alpha:]]
//   \w \W  (alnum, no '_')             [[:alnum:]] [^[:alnum:]]  (RE2's \w
//                                      also matches '_')
//   \l \L  \u \U  (lower, upper)       [[:lower:]] [^[:lower:]]
//                                      [[:upper:]] [^[:upper:]]
//   \p \P  (punctuation)               [[:punct:]] [^[:punct:]]
// Differences: Wapiti's `*` is lazy (the shortest repetition, which %m
// returns), RE2's greedy: write `*?` for Wapiti's %m results. Wapiti's
// classes read bytes in the C locale, RE2 reads UTF-8 (`.` is a code
// point). RE2 has alternation, groups and counted repetition, which
// Wapiti lacks. Wapiti's \a \l \u \p and their capitals must be rewritten:
// in RE2 they are refused as bad regexes (naming the line) or mean
// something else (\a the bell character, \A the start of the text).
//
// Differences from CRF++: CRF++ reads only %x, with no blanks in macros,
// and skips a line that starts with anything but U or B without a word;
// chaintag reads u, b and * lines as Wapiti does and refuses other kinds.
// CRF++ keys a feature by its expanded string, so two lines that expand
// alike share a weight; chaintag keys it by the line's index and the macro
// values (the literals name, never hash). CRF++ refuses rows beyond ±8 (±4
// in old versions); NUMBERED reaches ±1024.
//
// Thread-safety: functions of their arguments (and the file they read).

#ifndef CHAINTAG_FEATURES_TEMPLATE_FILE_H_
#define CHAINTAG_FEATURES_TEMPLATE_FILE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "features/feature_config.pb.h"

namespace chaintag {

struct TemplateFile {
  std::vector<FeatureTemplate> templates;       // U and * lines
  std::vector<FeatureTemplate> pair_templates;  // B and * lines with macros
  // A B or * line without macros: the plain label transitions.
  bool plain_transitions = false;
};

// The templates of the text of a template file. Errors are
// InvalidArgument, "filename:line: ..." with the line.
absl::StatusOr<TemplateFile> ParseTemplateFile(absl::string_view text,
                                               absl::string_view filename);

// ParseTemplateFile of the file at `path` (NotFound when it cannot be read).
absl::StatusOr<TemplateFile> ReadTemplateFile(const std::string& path);

// When config->template_file() is set: reads it (a relative path against
// `base_dir`; against the working directory when `base_dir` is empty),
// appends its templates and pair templates to the config's, and clears
// template_file, so that the config needs nothing else.
absl::Status ExpandTemplateFile(const std::string& base_dir,
                                FeatureConfig* config);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_TEMPLATE_FILE_H_
