#include "base/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>  // NOLINT
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/config_override_test.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A fresh, empty directory of this test's own under $TEST_TMPDIR.
std::string TestDirectory() {
  const testing::TestInfo* test =
      testing::UnitTest::GetInstance()->current_test_info();
  const std::string directory = absl::StrCat(
      testing::TempDir(), test->test_suite_name(), ".", test->name());
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  return directory;
}

// The whole file, byte for byte ("<missing>" when it cannot be opened).
std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing>";
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The names in `directory`, sorted.
std::vector<std::string> Entries(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// Every byte value, NULs and newlines included, `copies` times over.
std::string AllByteValues(int copies) {
  std::string bytes;
  for (int copy = 0; copy < copies; ++copy) {
    for (int value = 0; value < 256; ++value) {
      bytes.push_back(static_cast<char>(value));
    }
  }
  return bytes;
}

// `size` bytes that differ from one position to the next (a prefix of the
// payload is recognisable as that payload's).
std::string Payload(size_t size, char seed) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>(seed + i * 7 + (i >> 12));
  }
  return bytes;
}

TEST(WriteFileAtomicallyTest, CreatesTheFileWithExactlyTheBytes) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/model.bin";
  const std::string bytes = AllByteValues(3);
  ASSERT_EQ(bytes.size(), 768u);

  ASSERT_TRUE(WriteFileAtomically(path, bytes, "the model file").ok());

  EXPECT_EQ(Contents(path), bytes);
  EXPECT_EQ(std::filesystem::file_size(path), 768u);
  // Nothing else is left beside it: the temporary was renamed.
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"model.bin"});
}

TEST(WriteFileAtomicallyTest, WritesAnEmptyFile) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/empty.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "", "the report").ok());
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"empty.txt"});
}

TEST(WriteFileAtomicallyTest, ASecondWriteReplacesTheWholeFile) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/model.bin";
  ASSERT_TRUE(WriteFileAtomically(path, "first version, the longer one",
                                  "the model file")
                  .ok());
  ASSERT_EQ(Contents(path), "first version, the longer one");

  // Shorter: none of the old bytes may survive past the new end.
  ASSERT_TRUE(WriteFileAtomically(path, "second", "the model file").ok());
  EXPECT_EQ(Contents(path), "second");
  EXPECT_EQ(std::filesystem::file_size(path), 6u);

  // Longer again.
  const std::string third = Payload(100000, 'c');
  ASSERT_TRUE(WriteFileAtomically(path, third, "the model file").ok());
  EXPECT_EQ(Contents(path), third);
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"model.bin"});
}

// What WriteFileAtomically would refuse only after the run that produced
// the bytes, told before it: a missing directory, a parent that is a file,
// a path that is a directory. A new or existing file in a directory is
// fine, and nothing is created by asking.
TEST(CheckWritablePathTest, RefusesWhatCouldNotBeWrittenAndCreatesNothing) {
  const std::string directory = TestDirectory();
  EXPECT_TRUE(CheckWritablePath(directory + "/new.model", "the model").ok());
  WriteText(directory + "/old.model", "old");
  EXPECT_TRUE(CheckWritablePath(directory + "/old.model", "the model").ok());
  EXPECT_EQ(Contents(directory + "/old.model"), "old");

  const std::string missing = directory + "/no/such/dir/m.model";
  absl::Status status = CheckWritablePath(missing, "the model file");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            absl::StrCat(missing,
                         ": cannot write the model file: its "
                         "directory ",
                         directory, "/no/such/dir: No such file or directory"));

  const std::string in_a_file = directory + "/old.model/m.model";
  status = CheckWritablePath(in_a_file, "the model file");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(in_a_file + ": cannot write the model file: "));

  std::filesystem::create_directory(directory + "/a_directory");
  status = CheckWritablePath(directory + "/a_directory", "the model file");
  EXPECT_EQ(std::string(status.message()),
            absl::StrCat(directory,
                         "/a_directory: cannot write the model "
                         "file: it is a directory"));
  EXPECT_EQ(Entries(directory).size(), 2u);  // old.model and a_directory
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/no/such/dir/model.bin";

  const absl::Status status =
      WriteFileAtomically(path, "bytes", "the model file");

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            absl::StrCat(path,
                         ": cannot write the model file: No such file or "
                         "directory"));
  // Nothing was created on the way.
  EXPECT_FALSE(std::filesystem::exists(directory + "/no"));
  EXPECT_TRUE(Entries(directory).empty());
}

TEST(WriteFileAtomicallyTest, ParentThatIsAFileIsAnErrorNamingThePath) {
  const std::string directory = TestDirectory();
  WriteText(directory + "/plain", "a file, not a directory");
  const std::string path = directory + "/plain/model.bin";

  const absl::Status status = WriteFileAtomically(path, "bytes", "the model");

  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            absl::StrCat(path, ": cannot write the model: Not a directory"));
  EXPECT_EQ(Contents(directory + "/plain"), "a file, not a directory");
}

// A path that cannot be replaced by a file (the tests may run as root, for
// whom no permission bit makes a directory unwritable): the temporary is
// written, the rename fails, and the temporary is removed again.
TEST(WriteFileAtomicallyTest, PathThatIsADirectoryIsAnErrorAndLeavesNothing) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/model.bin";
  std::filesystem::create_directory(path);
  WriteText(path + "/inside", "kept");

  const absl::Status status =
      WriteFileAtomically(path, "bytes", "the model file");

  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(path + ": cannot rename " + path + ".tmp."));
  EXPECT_THAT(std::string(status.message()), HasSubstr(": Is a directory"));
  EXPECT_TRUE(std::filesystem::is_directory(path));
  EXPECT_EQ(Contents(path + "/inside"), "kept");
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"model.bin"});
}

// The names in `directory` that start with `prefix`.
std::vector<std::string> EntriesStartingWith(const std::string& directory,
                                             const std::string& prefix) {
  std::vector<std::string> names;
  for (const std::string& name : Entries(directory)) {
    if (absl::string_view(name).substr(0, prefix.size()) == prefix) {
      names.push_back(name);
    }
  }
  return names;
}

// The child of InterruptedWrite...: tells the parent (through the pipe) that
// it is inside the write, then waits to be killed.
int interrupted_child_pipe = -1;
void TellParentAndWait(int) {
  const char byte = 'w';
  if (write(interrupted_child_pipe, &byte, 1) != 1) _exit(4);
  for (;;) pause();
}

// 1 MiB file-size limit for the writing child: the first write(2) of the
// 4 MiB payload stops at 1 MiB, the next one raises SIGXFSZ. The limit
// makes the interruption land at a known point of the write, without
// timing.
constexpr size_t kLimit = size_t{1} << 20;
constexpr size_t kPayload = size_t{4} << 20;

TEST(WriteFileAtomicallyTest, WriterKilledMidWriteLeavesTheOldFileWhole) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/model.bin";
  const std::string old_bytes = Payload(300000, 'o');
  ASSERT_TRUE(WriteFileAtomically(path, old_bytes, "the model file").ok());
  const std::string new_bytes = Payload(kPayload, 'n');

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The writer: through the real API, with the file-size limit. Its
    // SIGXFSZ handler runs inside WriteFileAtomically's write loop, 1 MiB
    // of 4 written to the temporary.
    close(fds[0]);
    interrupted_child_pipe = fds[1];
    struct sigaction action = {};
    action.sa_handler = TellParentAndWait;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGXFSZ, &action, nullptr) != 0) _exit(2);
    const struct rlimit limit = {kLimit, kLimit};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    (void)WriteFileAtomically(path, new_bytes, "the model file");
    _exit(5);  // the write returned: the parent reads no byte
  }
  close(fds[1]);
  char byte = 0;
  const ssize_t got = read(fds[0], &byte, 1);
  close(fds[0]);
  // Killed while inside the write (or, when the child failed before it,
  // already exited: the status says how).
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(got, 1) << "the writer ended with status " << status;
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  // The old file, whole and unchanged.
  EXPECT_EQ(Contents(path), old_bytes);

  // The temporary stays behind until the next write of the path: it is
  // named after the killed process and holds the first 1 MiB of the new
  // bytes.
  const std::vector<std::string> leftovers =
      EntriesStartingWith(directory, absl::StrCat("model.bin.tmp.", child));
  ASSERT_EQ(leftovers.size(), 1u);
  EXPECT_EQ(Entries(directory).size(), 2u);
  EXPECT_EQ(Contents(directory + "/" + leftovers[0]),
            new_bytes.substr(0, kLimit));

  // A temporary of a process that still runs (this one's parent here, a
  // name no writer of this process uses) is left alone...
  const std::string live = absl::StrCat(path, ".tmp.", getppid(), ".1");
  std::ofstream(live) << "in progress";
  // ...and a name that is not a writer's is left alone too.
  const std::string other = path + ".tmp.notes";
  std::ofstream(other) << "mine";
  // The next write (another process's, here the test's) replaces the file
  // and removes the dead writer's leftover.
  ASSERT_TRUE(WriteFileAtomically(path, "after", "the model file").ok());
  EXPECT_EQ(Contents(path), "after");
  EXPECT_TRUE(
      EntriesStartingWith(directory, absl::StrCat("model.bin.tmp.", child))
          .empty());
  EXPECT_EQ(Contents(live), "in progress");
  EXPECT_EQ(Contents(other), "mine");
  EXPECT_EQ(Entries(directory).size(), 3u);
}

TEST(WriteFileAtomicallyTest, FailedWriteReturnsAnErrorAndKeepsTheOldFile) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/model.bin";
  const std::string old_bytes = Payload(200000, 'o');
  ASSERT_TRUE(WriteFileAtomically(path, old_bytes, "the model file").ok());
  const std::string new_bytes = Payload(kPayload, 'n');

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // SIGXFSZ ignored: the write past the limit fails with EFBIG, as on a
    // full disk. The child sends the status back.
    close(fds[0]);
    signal(SIGXFSZ, SIG_IGN);
    const struct rlimit limit = {kLimit, kLimit};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    const absl::Status status =
        WriteFileAtomically(path, new_bytes, "the model file");
    const std::string report =
        absl::StrCat(static_cast<int>(status.code()), " ", status.message());
    if (write(fds[1], report.data(), report.size()) !=
        static_cast<ssize_t>(report.size())) {
      _exit(4);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string report;
  char buffer[256];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0);
    report.append(buffer, n);
  }
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  EXPECT_THAT(report, StartsWith(absl::StrCat(
                          static_cast<int>(absl::StatusCode::kDataLoss), " ",
                          path, ".tmp.", child)));
  EXPECT_THAT(report, HasSubstr(": write failed: File too large"));
  EXPECT_EQ(Contents(path), old_bytes);
  // The partial temporary was removed.
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"model.bin"});
}

// Threads of one process writing one path at the same time: every write
// succeeds and the file is always one writer's bytes, whole (the last
// rename wins). Whatever the interleaving, this holds when each write has
// a temporary of its own.
TEST(WriteFileAtomicallyTest, ConcurrentWritesFromThreadsLeaveOneWholeFile) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/model.bin";
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  std::vector<std::string> contents;
  for (int t = 0; t < kThreads; ++t) {
    contents.push_back(Payload(size_t{256} << 10, static_cast<char>('a' + t)));
  }
  for (int round = 0; round < kRounds; ++round) {
    std::vector<absl::Status> statuses(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < kThreads; ++t) {
      writers.emplace_back([&, t] {
        // All start together.
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        statuses[t] = WriteFileAtomically(path, contents[t], "the model file");
      });
    }
    for (std::thread& writer : writers) writer.join();

    for (int t = 0; t < kThreads; ++t) {
      EXPECT_TRUE(statuses[t].ok()) << "round " << round << ": " << statuses[t];
    }
    const std::string now = Contents(path);
    EXPECT_NE(std::find(contents.begin(), contents.end(), now), contents.end())
        << "round " << round << ": " << now.size()
        << " bytes that are no writer's";
    EXPECT_EQ(Entries(directory), std::vector<std::string>{"model.bin"});
  }
}

// How many file descriptors the process has open.
int OpenDescriptors() {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++count;
  }
  return count;
}

// fsync(2) fails (EINVAL) on a FIFO, which otherwise takes the bytes as a
// file would: one at the temporary's name makes the flush fail.
TEST(WriteFileAtomicallyTest, FailedFlushClosesAndRemovesTheTemporary) {
  const std::string directory = TestDirectory();
  const std::string path = directory + "/model.bin";
  ASSERT_TRUE(WriteFileAtomically(path, "old", "the model file").ok());
  const std::string temporary =
      absl::StrCat(path, ".tmp.", getpid(), ".", gettid());
  ASSERT_EQ(mkfifo(temporary.c_str(), 0600), 0);
  const std::string bytes = Payload(200000, 'n');

  const int descriptors = OpenDescriptors();
  std::string received;
  // Takes exactly the payload; it does not wait for the writer to close.
  std::thread reader([&temporary, &bytes, &received] {
    const int fd = open(temporary.c_str(), O_RDONLY);
    if (fd < 0) return;
    char buffer[65536];
    while (received.size() < bytes.size()) {
      const ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      received.append(buffer, n);
    }
    close(fd);
  });
  const absl::Status status =
      WriteFileAtomically(path, bytes, "the model file");
  reader.join();

  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(status.message()),
            temporary + ": cannot flush the model file: Invalid argument");
  EXPECT_EQ(received, bytes);
  // The temporary was closed (no descriptor more than before) and removed.
  EXPECT_EQ(OpenDescriptors(), descriptors);
  EXPECT_EQ(Entries(directory), std::vector<std::string>{"model.bin"});
  EXPECT_EQ(Contents(path), "old");
}

TEST(ReadTextProtoTest, ReadsTheFile) {
  const std::string path = TestDirectory() + "/run.textproto";
  WriteText(path,
            "# a comment\n"
            "name: \"run\"\n"
            "solver { lambda: 0.25 seed: 7 scheme: IOBES }\n"
            "runs { name: \"a\" }\n"
            "runs { name: \"b\" count: 3 }\n");
  override_test::Outer message;
  message.set_name("replaced");
  message.mutable_model()->set_budget(5);

  ASSERT_TRUE(ReadTextProto(path, " the config", &message).ok());

  EXPECT_EQ(message.name(), "run");
  EXPECT_EQ(message.solver().lambda(), 0.25);
  EXPECT_EQ(message.solver().seed(), 7u);
  EXPECT_EQ(message.solver().scheme(), override_test::IOBES);
  ASSERT_EQ(message.runs_size(), 2);
  EXPECT_EQ(message.runs(0).name(), "a");
  EXPECT_EQ(message.runs(1).name(), "b");
  EXPECT_EQ(message.runs(1).count(), 3u);
  // Parsed, not merged: what the message held before is gone.
  EXPECT_FALSE(message.has_model());
}

TEST(ReadTextProtoTest, MissingFileIsNotFound) {
  const std::string path = TestDirectory() + "/absent.textproto";
  override_test::Outer message;

  const absl::Status status = ReadTextProto(path, " the config", &message);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(status.message()), path + ": cannot open the config");

  // `what` goes right after "cannot open".
  EXPECT_EQ(ReadTextProto(path, "", &message).message(),
            path + ": cannot open");
}

// A directory opens like a file but has no bytes to read: an error, not an
// empty config.
TEST(ReadTextProtoTest, DirectoryIsAnErrorNotAnEmptyMessage) {
  const std::string path = TestDirectory() + "/configs";
  std::filesystem::create_directory(path);
  override_test::Outer message;

  const absl::Status status = ReadTextProto(path, " the config", &message);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            path + ": cannot read the config: Is a directory");
}

TEST(ReadTextProtoTest, SyntaxErrorNamesTheFileLineAndColumn) {
  const std::string path = TestDirectory() + "/bad.textproto";
  // Line 4, column 9: the value "seven" (1-based; 8 characters before it).
  WriteText(path,
            "name: \"run\"\n"
            "solver {\n"
            "  lambda: 0.5\n"
            "  seed: seven\n"
            "}\n");
  override_test::Outer message;

  const absl::Status status = ReadTextProto(path, " the config", &message);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            path + ":4:9: Expected integer, got: seven");
}

TEST(ReadTextProtoTest, UnknownFieldNamesTheFileLineAndColumn) {
  const std::string path = TestDirectory() + "/typo.textproto";
  // Line 3: the misspelt field name. Protobuf points at the token after
  // the name it does not know, the colon: column 8.
  WriteText(path,
            "name: \"run\"\n"
            "solver {\n"
            "  lamda: 0.5\n"
            "}\n");
  override_test::Outer message;

  const absl::Status status = ReadTextProto(path, " the config", &message);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            path +
                ":3:8: Message type \"chaintag.override_test.Inner\" has no "
                "field named \"lamda\".");
}

TEST(ParseTextProtoTest, ParsesTextAndReplacesTheMessage) {
  override_test::Outer message;
  message.set_name("old");
  message.add_runs()->set_name("old run");

  ASSERT_TRUE(ParseTextProto("model { ratio: 1.5 line_search: false }", "text",
                             &message)
                  .ok());

  EXPECT_FALSE(message.has_name());
  EXPECT_EQ(message.runs_size(), 0);
  EXPECT_EQ(message.model().ratio(), 1.5f);
  EXPECT_TRUE(message.model().has_line_search());
  EXPECT_FALSE(message.model().line_search());
  EXPECT_TRUE(ParseTextProto("", "empty", &message).ok());
  EXPECT_EQ(message.ByteSizeLong(), 0u);
}

TEST(ParseTextProtoTest, ReportsTheFirstErrorWithTheSource) {
  override_test::Outer message;
  // Line 2: the second `name`, a non-repeated field. As for an unknown
  // field, the column is the token after the name's (the colon, column 15).
  absl::Status status =
      ParseTextProto("runs { name: \"a\" }\nname: \"x\" name: \"y\"\n",
                     "config text", &message);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            "config text:2:15: Non-repeated field \"name\" is specified "
            "multiple times.");

  // An unterminated message: the error is at the end of the text (line 2,
  // column 1).
  status = ParseTextProto("solver {\n", "config text", &message);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            "config text:2:1: Expected identifier, got: ");
}

}  // namespace
}  // namespace chaintag
