// evaluate: the conlleval chunk scorer as a command-line tool, a drop-in for
// the CoNLL-2000 `conlleval` script.
//
//   bazel run //tools:evaluate -- [-l] [-r] [-d DELIM] [-o OUTSIDE] [FILE]
//
// Reads FILE (default: stdin) line by line, each line "... gold guess", and
// prints the script's report to stdout. Options are parsed by hand because
// the script's single-dash, space-separated options (`-d " "`) do not fit
// absl flags; --delimiter=, --outside=, --raw and --latex also work.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/paths.h"
#include "corpora/conlleval.h"

namespace chaintag {
namespace {

constexpr char kUsage[] =
    "usage: evaluate [-l] [-r] [-d delimiter] [-o outsideTag] [file]\n"
    "  -l  LaTeX table output\n"
    "  -r  raw tags (no B-/I- prefixes; every tag is a one-token chunk)\n"
    "  -d  field delimiter, a regular expression (default: runs of blanks)\n"
    "  -o  outside tag for -r (default O)\n";

int Usage(const std::string& error) {
  std::cerr << "evaluate: " << error << "\n" << kUsage;
  return 1;
}

int Run(int argc, char** argv) {
  ConllevalOptions options;
  bool latex = false;
  std::string path;
  int i = 1;
  // Like the script: options first, while arguments start with '-'.
  for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    } else if (arg == "-l" || arg == "--latex") {
      latex = true;
    } else if (arg == "-r" || arg == "--raw") {
      options.raw = true;
    } else if (arg == "-d" || arg == "-o") {
      if (i + 1 >= argc) return Usage(std::string(arg) + " requires a value");
      (arg == "-d" ? options.delimiter : options.outside) = argv[++i];
    } else if (absl::ConsumePrefix(&arg, "--delimiter=")) {
      options.delimiter = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--outside=")) {
      options.outside = std::string(arg);
    } else if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else {
      return Usage("unknown argument " + std::string(arg));
    }
  }
  if (i < argc) path = argv[i++];
  if (i < argc) return Usage("unexpected argument " + std::string(argv[i]));

  std::ifstream file;
  std::istream* in = &std::cin;
  ConllevalScorer scorer(std::move(options));
  if (absl::Status valid = scorer.CheckOptions(); !valid.ok()) {
    std::cerr << "evaluate: " << valid.message() << "\n";
    return 2;
  }
  if (!path.empty() && path != "-") {
    // `bazel run` starts us in the runfiles tree; resolve relative paths
    // against the directory the user ran it from.
    path = ResolveUserPath(path);
    file.open(path);
    if (!file) {
      std::cerr << "evaluate: cannot open " << path << "\n";
      return 1;
    }
    in = &file;
    scorer.set_source(path);
  }

  std::string line;
  while (std::getline(*in, line)) {
    if (absl::Status status = scorer.AddLine(line); !status.ok()) {
      std::cerr << status.message() << "\n";
      return 1;
    }
  }
  if (in->bad()) {
    std::cerr << "evaluate: read error on " << (path.empty() ? "stdin" : path)
              << "\n";
    return 1;
  }
  scorer.Finish();
  std::cout << (latex ? scorer.LatexReport() : scorer.Report());
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return chaintag::Run(argc, argv);
}
