// The replay driver: runs a fuzz target's LLVMFuzzerTestOneInput without
// libFuzzer (any compiler, no sanitizer needed), so that the normal test
// suite exercises every target. It calls the target on every seed file,
// then on --mutations seeded random mutations of them (bit flips, byte
// insertions and deletions, chunk duplication, truncation, splices of two
// seeds, boundary values and numbers); the same --seed gives the same
// inputs on every machine. A crash dumps the input that caused it.
//
//   <target>_replay_test [--mutations=N] [--seed=S] [--max_len=L]
//                        [--max_seconds=T] [--only=K] FILE_OR_DIR...
//
// --only=K runs mutation K alone (K = 0: the seeds only), to reproduce a
// failure the log names. --max_seconds stops the mutations early (the run
// still passes) so that a slow machine cannot time the test out.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv)
    __attribute__((weak));

namespace chaintag {
namespace {

// splitmix64: tiny, and the same sequence under every standard library
// (std::uniform_int_distribution is not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // In [0, n); 0 when n == 0.
  size_t Below(size_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  uint64_t state_;
};

// What a crash reports: the input being run, described and dumped.
std::string* current_input = nullptr;
char current_what[256] = "";
char dump_path[4096] = "crash-input";

void WriteString(int fd, const char* s) {
  ssize_t ignored = write(fd, s, std::strlen(s));
  (void)ignored;
}

// Async-signal-safe: only write(2), open(2) and close(2).
void OnCrash(int signal_number) {
  WriteString(2, "\nreplay: crash while running ");
  WriteString(2, current_what);
  if (current_input != nullptr) {
    const int fd = open(dump_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = write(fd, current_input->data(), current_input->size());
      (void)ignored;
      close(fd);
      WriteString(2, "; input written to ");
      WriteString(2, dump_path);
    }
  }
  WriteString(2, "\n");
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

void InstallCrashHandlers() {
  const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (outputs != nullptr) {
    std::snprintf(dump_path, sizeof(dump_path), "%s/crash-input", outputs);
  }
  // Under ASan its own SIGSEGV report is better; keep its handlers.
#if defined(__SANITIZE_ADDRESS__)
  signal(SIGABRT, OnCrash);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  signal(SIGABRT, OnCrash);
#else
  for (int s : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) signal(s, OnCrash);
#endif
#else
  for (int s : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) signal(s, OnCrash);
#endif
}

// Byte values and numbers that parsers mishandle most often.
constexpr uint8_t kInterestingBytes[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, '\n',
                                         '\r', '\t', ' ',  '-',  '0',  '9',
                                         '"',  '\\', 0xEF, 0xC3};
const char* const kInterestingText[] = {"0",
                                        "-1",
                                        "4294967295",
                                        "4294967296",
                                        "2147483647",
                                        "-2147483648",
                                        "9223372036854775807",
                                        "1e308",
                                        "nan",
                                        "inf",
                                        "-0",
                                        "\n\n",
                                        "\xEF\xBB\xBF",
                                        "\xF0\x9F\x98\x80",
                                        "\xC3",
                                        "-DOCSTART-"};

void Run(const std::string& input, const std::string& what) {
  std::snprintf(current_what, sizeof(current_what), "%s", what.c_str());
  *current_input = input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()),
                         input.size());
}

// One to four stacked edits of `input`; `seeds` gives splice partners.
std::string Mutate(std::string input, const std::vector<std::string>& seeds,
                   size_t max_len, Rng* rng) {
  const int edits = 1 + static_cast<int>(rng->Below(4));
  for (int e = 0; e < edits; ++e) {
    const size_t size = input.size();
    switch (rng->Below(11)) {
      case 0:  // flip a bit
        if (size > 0)
          input[rng->Below(size)] ^= static_cast<char>(1 << rng->Below(8));
        break;
      case 1:  // set a byte
        if (size > 0) input[rng->Below(size)] = static_cast<char>(rng->Next());
        break;
      case 2:  // insert 1-4 random bytes
        for (size_t k = 1 + rng->Below(4), at = rng->Below(size + 1); k > 0;
             --k) {
          input.insert(input.begin() + at, static_cast<char>(rng->Next()));
        }
        break;
      case 3:  // delete 1-16 bytes
        if (size > 0) {
          const size_t at = rng->Below(size);
          input.erase(at, 1 + rng->Below(std::min<size_t>(16, size - at)));
        }
        break;
      case 4: {  // duplicate a chunk somewhere
        if (size == 0) break;
        const size_t from = rng->Below(size);
        const size_t length = 1 + rng->Below(std::min<size_t>(64, size - from));
        const std::string chunk = input.substr(from, length);
        input.insert(rng->Below(size + 1), chunk);
        break;
      }
      case 5:  // truncate
        input.resize(rng->Below(size + 1));
        break;
      case 6: {  // splice: a prefix of this input, a suffix of a seed
        const std::string& other = seeds[rng->Below(seeds.size())];
        input = input.substr(0, rng->Below(size + 1)) +
                other.substr(rng->Below(other.size() + 1));
        break;
      }
      case 7: {  // a boundary byte value
        const uint8_t b =
            kInterestingBytes[rng->Below(sizeof(kInterestingBytes))];
        if (size > 0 && rng->Below(2) == 0) {
          input[rng->Below(size)] = static_cast<char>(b);
        } else {
          input.insert(input.begin() + rng->Below(size + 1),
                       static_cast<char>(b));
        }
        break;
      }
      case 8: {  // a boundary number or text, replacing a run of digits
        const std::string text = kInterestingText[rng->Below(
            sizeof(kInterestingText) / sizeof(kInterestingText[0]))];
        size_t at = rng->Below(size + 1);
        size_t end = at;
        while (end < size && ((input[end] >= '0' && input[end] <= '9') ||
                              input[end] == '-' || input[end] == '.')) {
          ++end;
        }
        input.replace(at, end - at, text);
        break;
      }
      case 9: {  // overwrite 1, 2, 4 or 8 bytes with 0x00.. or 0xFF..
        if (size == 0) break;
        const size_t width = size_t{1} << rng->Below(4);
        const size_t at = rng->Below(size);
        const char fill = rng->Below(2) == 0 ? '\0' : '\xFF';
        for (size_t k = at; k < std::min(size, at + width); ++k)
          input[k] = fill;
        break;
      }
      default: {  // copy a chunk of another seed into this one
        const std::string& other = seeds[rng->Below(seeds.size())];
        if (other.empty()) break;
        const size_t from = rng->Below(other.size());
        const size_t length =
            1 + rng->Below(std::min<size_t>(64, other.size() - from));
        input.insert(rng->Below(size + 1), other.substr(from, length));
        break;
      }
    }
  }
  if (input.size() > max_len) input.resize(max_len);
  return input;
}

bool ReadFile(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *bytes = buffer.str();
  return true;
}

int Main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  int64_t mutations = 0;
  uint64_t seed = 1;
  size_t max_len = 4096;
  double max_seconds = 0;
  int64_t only = -1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&arg](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? arg.c_str() + n : nullptr;
    };
    if (const char* v = value("--mutations=")) {
      mutations = std::atoll(v);
    } else if (const char* v = value("--seed=")) {
      seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--max_len=")) {
      max_len = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--max_seconds=")) {
      max_seconds = std::atof(v);
    } else if (const char* v = value("--only=")) {
      only = std::atoll(v);
    } else if (arg.rfind("-", 0) == 0) {
      // libFuzzer flags (-runs=, -max_len=, ...) when a crash file is
      // replayed with the command line a fuzzer was run with.
      std::fprintf(stderr, "replay: ignoring flag %s\n", arg.c_str());
    } else {
      paths.push_back(arg);
    }
  }

  // The seeds, sorted by path so that the order is the same everywhere.
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      for (const auto& entry :
           std::filesystem::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
    } else {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> seeds;
  for (const std::string& file : files) {
    seeds.emplace_back();
    if (!ReadFile(file, &seeds.back())) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 1;
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "replay: no seed files in the arguments\n");
    return 1;
  }

  std::string input;
  current_input = &input;
  InstallCrashHandlers();
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&start]() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  if (only <= 0) {
    for (size_t k = 0; k < seeds.size(); ++k) Run(seeds[k], files[k]);
  }
  if (only == 0) mutations = 0;

  // Mutation k starts from seed k % n or, half the time, from the previous
  // mutant, so that edits accumulate.
  Rng rng(seed);
  std::string previous = seeds[0];
  int64_t done = 0;
  bool stopped = false;
  const int64_t last = only > 0 ? only : mutations;
  for (int64_t k = 1; k <= last; ++k) {
    const bool chain = rng.Below(2) == 0;
    const std::string& base = chain ? previous : seeds[(k - 1) % seeds.size()];
    std::string mutant = Mutate(base, seeds, max_len, &rng);
    previous = mutant;
    if (only > 0 && k != only) continue;
    Run(mutant, "mutation " + std::to_string(k) +
                    " (rerun with --only=" + std::to_string(k) + ")");
    ++done;
    if (max_seconds > 0 && (k & 63) == 0 && seconds() > max_seconds) {
      stopped = true;
      break;
    }
  }
  const double elapsed = seconds();
  std::printf(
      "replay: %zu seed files, %lld mutations (seed %llu, max_len %zu) in "
      "%.2f s, %.0f execs/s%s\n",
      seeds.size(), static_cast<long long>(done),
      static_cast<unsigned long long>(seed), max_len, elapsed,
      (static_cast<double>(seeds.size()) + done) / std::max(elapsed, 1e-9),
      stopped ? " (stopped at --max_seconds)" : "");
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) { return chaintag::Main(argc, argv); }
