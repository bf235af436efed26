#include "features/template_file.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "re2/re2.h"

namespace chaintag {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The line without its comment and trailing blanks. A `#` begins a comment
// at the start of the line or after a blank, never inside a quoted regex.
absl::string_view StripComment(absl::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\\' && i + 1 < line.size()) {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '#' && (i == 0 || IsBlank(line[i - 1]))) {
      line = line.substr(0, i);
      break;
    }
  }
  while (!line.empty() && IsBlank(line.back())) line.remove_suffix(1);
  return line;
}

// Advances *i past blanks (spaces, tabs).
void SkipBlanks(absl::string_view text, size_t* i) {
  while (*i < text.size() && IsBlank(text[*i])) ++*i;
}

// Reads an optionally signed decimal integer at text[*i].
bool ReadInt(absl::string_view text, size_t* i, int64_t* value) {
  bool negative = false;
  if (*i < text.size() && (text[*i] == '-' || text[*i] == '+')) {
    negative = text[*i] == '-';
    ++*i;
  }
  const size_t start = *i;
  int64_t v = 0;
  while (*i < text.size() && absl::ascii_isdigit(text[*i])) {
    v = v * 10 + (text[*i] - '0');
    if (v > (int64_t{1} << 31)) return false;
    ++*i;
  }
  if (*i == start) return false;
  *value = negative ? -v : v;
  return true;
}

// One line's template: its parts and literals, parsed from `line` (its
// kind character already checked). `error` gets what is wrong.
bool ParseMacros(absl::string_view line, FeatureTemplate* tmpl,
                 std::string* error) {
  std::string literal;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '%') {
      literal.push_back(line[i++]);
      continue;
    }
    const size_t macro_start = i;
    auto fail = [&](absl::string_view what) {
      *error = absl::StrCat(what, " in the macro at column ", macro_start + 1);
      return false;
    };
    if (i + 1 >= line.size()) return fail("a '%' without a command");
    const char command = line[i + 1];
    TemplatePart part;
    switch (command) {
      case 'x':
        part.set_transform(TemplatePart::IDENTITY);
        break;
      case 'X':
        part.set_transform(TemplatePart::IDENTITY);
        part.set_lowercase(true);
        break;
      case 't':
      case 'T':
        part.set_transform(TemplatePart::REGEX_TEST);
        break;
      case 'm':
        part.set_transform(TemplatePart::REGEX_MATCH);
        break;
      case 'M':
        return fail(
            "%M (Wapiti's lowercased match) is not supported; use %m, with a "
            "regex that allows both cases");
      default:
        return fail(absl::StrCat("unknown command '%", line.substr(i + 1, 1),
                                 "' (expected %x, %X, %t, %T or %m)"));
    }
    i += 2;
    if (i >= line.size() || line[i] != '[') return fail("expected '['");
    ++i;
    if (i < line.size() && (line[i] == '@' || line[i] == '*')) {
      return fail(
          absl::StrCat("Wapiti's '", line.substr(i, 1),
                       "' rows (absolute, indirect) are not supported"));
    }
    // Wapiti reads the numbers with sscanf's "[%i,%u", which skips blanks
    // before each of them ("%x[ 0,0]" in its shipped pattern files) but not
    // after; so does chaintag.
    int64_t row = 0, col = 0;
    SkipBlanks(line, &i);
    if (!ReadInt(line, &i, &row)) return fail("expected a row number");
    if (i >= line.size() || line[i] != ',') {
      return fail(
          i < line.size() && IsBlank(line[i])
              ? "expected ',' (a blank may come before a number, not after it)"
              : "expected ','");
    }
    ++i;
    SkipBlanks(line, &i);
    const size_t col_start = i;
    if (!ReadInt(line, &i, &col) || line[col_start] == '-') {
      return fail("expected a column number (>= 0)");
    }
    if (part.transform() != TemplatePart::IDENTITY) {
      if (line.substr(i, 2) != ",\"") {
        return fail("expected ,\"regex\" after the column");
      }
      i += 2;
      std::string regex;
      while (i < line.size() && line[i] != '"') {
        // An escaped quote stays escaped: RE2 reads \" as a quote.
        if (line[i] == '\\' && i + 1 < line.size()) regex.push_back(line[i++]);
        regex.push_back(line[i++]);
      }
      if (i >= line.size()) return fail("an unterminated quote");
      ++i;
      RE2::Options options;
      options.set_log_errors(false);
      RE2 re2(regex, options);
      if (!re2.ok()) {
        return fail(
            absl::StrCat("a bad regex \"", regex, "\" (", re2.error(), ")"));
      }
      part.set_pattern(regex);
    }
    if (i >= line.size() || line[i] != ']') {
      return fail(
          i < line.size() && IsBlank(line[i])
              ? "expected ']' (a blank may come before a number, not after it)"
              : "expected ']'");
    }
    ++i;
    part.set_offset(static_cast<int32_t>(row));
    part.set_attribute(static_cast<int32_t>(col));
    *tmpl->add_parts() = std::move(part);
    tmpl->add_literals(std::move(literal));
    literal.clear();
  }
  tmpl->add_literals(std::move(literal));
  return true;
}

}  // namespace

absl::StatusOr<TemplateFile> ParseTemplateFile(absl::string_view text,
                                               absl::string_view filename) {
  TemplateFile file;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const absl::string_view line =
        absl::StripLeadingAsciiWhitespace(StripComment(raw));
    if (line.empty()) continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat(filename, ":", line_number, ": ", what, ": '",
                       absl::StripTrailingAsciiWhitespace(raw), "'"));
    };
    const char kind = line[0];
    if (kind != 'U' && kind != 'u' && kind != 'B' && kind != 'b' &&
        kind != '*') {
      return error(
          "a template starts with U (unigram), B (bigram) or * (both)");
    }
    FeatureTemplate tmpl;
    tmpl.set_name(std::string(line));
    std::string what;
    if (!ParseMacros(line, &tmpl, &what)) return error(what);
    const bool unigram = kind != 'B' && kind != 'b';
    const bool bigram = kind != 'U' && kind != 'u';
    if (unigram) file.templates.push_back(tmpl);
    if (bigram && tmpl.parts_size() == 0) {
      file.plain_transitions = true;
    } else if (bigram) {
      file.pair_templates.push_back(std::move(tmpl));
    }
  }
  return file;
}

absl::StatusOr<TemplateFile> ReadTemplateFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the template file ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseTemplateFile(text.str(), path);
}

absl::Status ExpandTemplateFile(const std::string& base_dir,
                                FeatureConfig* config) {
  if (config->template_file().empty()) {
    config->clear_template_file();
    return absl::OkStatus();
  }
  const std::string& name = config->template_file();
  const std::string path = base_dir.empty() || name[0] == '/'
                               ? name
                               : absl::StrCat(base_dir, "/", name);
  absl::StatusOr<TemplateFile> file = ReadTemplateFile(path);
  if (!file.ok()) return file.status();
  for (FeatureTemplate& tmpl : file->templates) {
    *config->add_templates() = std::move(tmpl);
  }
  for (FeatureTemplate& tmpl : file->pair_templates) {
    *config->add_pair_templates() = std::move(tmpl);
  }
  config->clear_template_file();
  return absl::OkStatus();
}

}  // namespace chaintag
